// Taskiter through the C ABI (nanort_taskiter_begin / _end): the body of one iteration runs
// once, its tasks are replayed; each test compares the result with the same loop run
// sequentially, every iteration's tasks made anew.
#include <nanort/nanort.h>
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// A task runs step(args): a function and the data it works on, copied into the argument
// block (plain bytes: what a replay repeats).
struct Step {
  void (*fn)(const Step &);
  double *a;
  double *b;
  long n;
  long k;
};
void run_step(void *args) { static_cast<const Step *>(args)->fn(*static_cast<const Step *>(args)); }
const nanort_task_impl step_impl{NANORT_DEVICE_SMP, run_step, nullptr, nullptr, nullptr, 0};
const nanort_task_site step_site{NANORT_ABI_VERSION, "step", __FILE__, __LINE__, &step_impl, 1,
                                 nullptr};

struct Access {
  const void *address;
  size_t bytes;
  nanort_access_mode mode;
};

nanort_status spawn(const Step &step, std::vector<Access> accesses,
                    const nanort_task_site *site = &step_site, bool replayable = true) {
  nanort_task *t = nanort_task_create(site, sizeof step);
  if (!t) return NANORT_ERROR_INTERNAL;
  std::memcpy(nanort_task_args(t), &step, sizeof step);
  if (!replayable) nanort_task_set_replayable(t, 0);
  for (const Access &a : accesses)
    if (nanort_status s = nanort_task_access(t, a.address, a.bytes, a.mode)) {
      nanort_task_discard(t);
      return s;
    }
  return nanort_task_submit(t);
}

// One time step of a 1-D diffusion over 'blocks' blocks, as tasks: b = smooth(a) per block
// (reading its neighbours' edges), then a = b per block.
void smooth(const Step &s) {
  for (long i = s.k; i < s.k + s.n; ++i) {
    const double left = i > 0 ? s.a[i - 1] : s.a[i];
    const double right = i + 1 < s.b[-1] ? s.a[i + 1] : s.a[i];  // b[-1] holds the length
    s.b[i] = 0.25 * left + 0.5 * s.a[i] + 0.25 * right;
  }
}
void copy_back(const Step &s) {
  for (long i = s.k; i < s.k + s.n; ++i) s.a[i] = s.b[i];
}

void diffusion_iteration(double *a, double *b, long length, long blocks) {
  const long bs = length / blocks;
  for (long blk = 0; blk < blocks; ++blk) {
    const long lo = blk * bs, first = lo > 0 ? lo - 1 : lo;
    const long last = lo + bs < length ? lo + bs + 1 : lo + bs;
    ASSERT_EQ(spawn({smooth, a, b, bs, lo},
                    {{a + first, sizeof(double) * (last - first), NANORT_IN},
                     {b + lo, sizeof(double) * bs, NANORT_OUT}}),
              NANORT_SUCCESS)
        << nanort_last_error();
  }
  for (long blk = 0; blk < blocks; ++blk)
    ASSERT_EQ(spawn({copy_back, a, b, bs, blk * bs},
                    {{b + blk * bs, sizeof(double) * bs, NANORT_IN},
                     {a + blk * bs, sizeof(double) * bs, NANORT_OUT}}),
              NANORT_SUCCESS)
        << nanort_last_error();
}

std::vector<double> initial(long length) {
  std::vector<double> v(static_cast<size_t>(length) + 1);
  v[0] = static_cast<double>(length);  // the length, before the data (see smooth)
  for (long i = 0; i < length; ++i) v[static_cast<size_t>(i) + 1] = (i % 7 == 0) ? 100.0 : 0.0;
  return v;
}

TEST(Taskiter, DiffusionMatchesTheSequentialRun) {
  constexpr long length = 4096, blocks = 16, iterations = 40;
  std::vector<double> a_seq = initial(length), b_seq(length + 1, 0.0);
  b_seq[0] = static_cast<double>(length);
  for (long it = 0; it < iterations; ++it) {  // every iteration's tasks made anew
    diffusion_iteration(a_seq.data() + 1, b_seq.data() + 1, length, blocks);
    ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  }

  std::vector<double> a = initial(length), b(length + 1, 0.0);
  b[0] = static_cast<double>(length);
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS) << nanort_last_error();
  ASSERT_NE(iter, nullptr);
  diffusion_iteration(a.data() + 1, b.data() + 1, length, blocks);
  ASSERT_EQ(nanort_taskiter_end(iter, iterations - 1), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(a, a_seq);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}

// The argument block is the recorded one in every replay: a value the body computed from the
// iteration number stays that of the recorded iteration (OmpSs-2: the body runs once).
void add_k(const Step &s) { s.a[0] += static_cast<double>(s.k); }

TEST(Taskiter, ReplaysRepeatTheRecordedArguments) {
  double sum = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  const long first_iteration = 5;
  ASSERT_EQ(spawn({add_k, &sum, nullptr, 0, first_iteration}, {{&sum, sizeof sum, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_end(iter, 9), NANORT_SUCCESS);
  EXPECT_EQ(sum, 50.0);  // ten times 5
}

// Independent tasks each bump their own counter, and a chain of tasks on one variable: every
// task runs once per iteration, the chain in order.
std::atomic<long> runs{0};
void bump(const Step &s) {
  runs.fetch_add(1);
  s.a[0] += 1.0;
}
void append_digit(const Step &s) { s.a[0] = s.a[0] * 10.0 + static_cast<double>(s.k); }

TEST(Taskiter, EveryTaskRunsOncePerIterationAndChainsKeepTheirOrder) {
  runs.store(0);
  constexpr int slots = 32;
  constexpr std::uint64_t replays = 99;
  std::vector<double> counter(slots, 0.0);
  double digits = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  for (int s = 0; s < slots; ++s)
    ASSERT_EQ(spawn({bump, &counter[s], nullptr, 0, 0}, {{&counter[s], sizeof(double), NANORT_INOUT}}),
              NANORT_SUCCESS);
  ASSERT_EQ(spawn({append_digit, &digits, nullptr, 0, 1}, {{&digits, sizeof digits, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(spawn({append_digit, &digits, nullptr, 0, 2}, {{&digits, sizeof digits, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_end(iter, 2), NANORT_SUCCESS);
  EXPECT_EQ(digits, 121212.0);  // 1, 2 per iteration, in that order, three times
  digits = 0;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_end(iter, replays), NANORT_SUCCESS);  // nothing recorded
  EXPECT_EQ(runs.load(), slots * 3);
  for (int s = 0; s < slots; ++s) EXPECT_EQ(counter[s], 3.0) << s;

  runs.store(0);
  std::fill(counter.begin(), counter.end(), 0.0);
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  for (int s = 0; s < slots; ++s)
    ASSERT_EQ(spawn({bump, &counter[s], nullptr, 0, 0}, {{&counter[s], sizeof(double), NANORT_INOUT}}),
              NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_end(iter, replays), NANORT_SUCCESS);
  EXPECT_EQ(runs.load(), slots * static_cast<long>(replays + 1));
  for (int s = 0; s < slots; ++s) EXPECT_EQ(counter[s], static_cast<double>(replays + 1)) << s;
}

// Tasks before and after the taskiter are ordered with its tasks by their data.
void set_to_k(const Step &s) { s.a[0] = static_cast<double>(s.k); }
void copy_a_to_b(const Step &s) { s.b[0] = s.a[0]; }

TEST(Taskiter, TasksBeforeAndAfterAreOrderedByTheirData) {
  double x = 0, seen = -1;
  ASSERT_EQ(spawn({set_to_k, &x, nullptr, 0, 1000}, {{&x, sizeof x, NANORT_OUT}}), NANORT_SUCCESS);
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({bump, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_end(iter, 9), NANORT_SUCCESS);
  ASSERT_EQ(spawn({copy_a_to_b, &x, &seen, 0, 0},
                  {{&x, sizeof x, NANORT_IN}, {&seen, sizeof seen, NANORT_OUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  EXPECT_EQ(seen, 1010.0);
}

// What the body must not do, and what a replay cannot repeat.
void no_op(const Step &) {}
void destroy_nothing(void *) {}
const nanort_task_site destructed_site{NANORT_ABI_VERSION, "with a destructor", "body.c", 12,
                                       &step_impl, 1, destroy_nothing};

TEST(Taskiter, TaskwaitInsideTheBodyIsRefused) {
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  double x = 0;
  ASSERT_EQ(spawn({bump, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("taskwait inside a taskiter's body"),
            std::string::npos)
      << nanort_last_error();
  const void *address = &x;
  const size_t size = sizeof x;
  EXPECT_EQ(nanort_taskwait_on(&address, &size, 1), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_taskgroup_begin(), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("taskgroup inside a taskiter's body"),
            std::string::npos)
      << nanort_last_error();
  nanort_taskiter *inner = nullptr;
  EXPECT_EQ(nanort_taskiter_begin(&inner), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("do not nest"), std::string::npos);
  ASSERT_EQ(nanort_taskiter_end(iter, 4), NANORT_SUCCESS);  // the body itself was whole
  EXPECT_EQ(x, 5.0);
}

TEST(Taskiter, ATaskAReplayCannotRepeatSpoilsTheRecording) {
  runs.store(0);
  double x = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({bump, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  EXPECT_EQ(spawn({no_op, nullptr, nullptr, 0, 0}, {}, &destructed_site),
            NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("'with a destructor' (body.c:12)"),
            std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(nanort_taskiter_end(iter, 4), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("no iteration replayed"), std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(runs.load(), 1);  // the recorded iteration only
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}

// replayable(0): runs whenever the body runs (the recording; each updated body), never in a
// replay, and may be what a recording refuses (a destructor); its accesses order it against
// the recorded tasks while the body runs.
std::atomic<long> unreplayed_runs{0};
void count_unreplayed(const Step &s) {
  unreplayed_runs.fetch_add(1);
  if (s.a) s.a[0] = s.a[0] * 10.0 + static_cast<double>(s.k);
}

TEST(Taskiter, UnreplayableTasksRunWithTheBodyAndNotInTheReplays) {
  unreplayed_runs.store(0);
  runs.store(0);
  double x = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({bump, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  // Between the two recorded bumps, in their chain: x = (0 + 1) * 10 + 7 = 17, then 18.
  ASSERT_EQ(spawn({count_unreplayed, &x, nullptr, 0, 7}, {{&x, sizeof x, NANORT_INOUT}},
                  &step_site, false),
            NANORT_SUCCESS);
  ASSERT_EQ(spawn({bump, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  // What a recording refuses, not recorded: no error.
  ASSERT_EQ(spawn({count_unreplayed, nullptr, nullptr, 0, 0}, {}, &destructed_site, false),
            NANORT_SUCCESS)
      << nanort_last_error();
  ASSERT_EQ(nanort_taskiter_end(iter, 3), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(runs.load(), 8);            // two recorded tasks, four times
  EXPECT_EQ(unreplayed_runs.load(), 2);  // the recording only
  EXPECT_EQ(x, 24.0);                    // 18, then 2 per replay
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}

void note_k(const Step &s) {
  unreplayed_runs.fetch_add(1);
  s.a[s.k] = static_cast<double>(s.k) + 0.5;  // its own slot: names no data
}

TEST(TaskiterUpdate, UnreplayableTasksWithoutDataRunInEveryUpdatedBody) {
  unreplayed_runs.store(0);
  constexpr long iterations = 5;
  double sum = 0, notes[iterations] = {};
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  for (long it = 0; it < iterations; ++it) {
    if (it > 0) {
      ASSERT_EQ(nanort_taskiter_update(iter), NANORT_SUCCESS) << nanort_last_error();
    }
    ASSERT_EQ(spawn({add_k, &sum, nullptr, 0, it}, {{&sum, sizeof sum, NANORT_INOUT}}),
              NANORT_SUCCESS);
    // Not matched against the recorded task: it runs, with this body's value.
    ASSERT_EQ(spawn({note_k, notes, nullptr, 0, it}, {}, &step_site, false), NANORT_SUCCESS)
        << nanort_last_error();
    if (it > 0) {
      ASSERT_EQ(nanort_taskiter_replay(iter, 1), NANORT_SUCCESS) << nanort_last_error();
    }
  }
  ASSERT_EQ(nanort_taskiter_end(iter, 0), NANORT_SUCCESS) << nanort_last_error();
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  EXPECT_EQ(sum, 10.0);  // 0 + 1 + 2 + 3 + 4: the updated values replayed
  EXPECT_EQ(unreplayed_runs.load(), iterations);
  for (long it = 0; it < iterations; ++it) EXPECT_EQ(notes[it], static_cast<double>(it) + 0.5);
}

// One that names data would run at once, while its iteration's recorded tasks run at the
// replay: refused, naming it, and nothing more is replayed.
TEST(TaskiterUpdate, UnreplayableTasksWithDataAreRefused) {
  unreplayed_runs.store(0);
  double x = 0, seen = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({add_k, &x, nullptr, 0, 1}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  ASSERT_EQ(spawn({count_unreplayed, &seen, nullptr, 0, 0}, {{&seen, sizeof seen, NANORT_INOUT}},
                  &destructed_site, false),
            NANORT_SUCCESS);  // recording: runs, not recorded
  ASSERT_EQ(nanort_taskiter_update(iter), NANORT_SUCCESS) << nanort_last_error();
  ASSERT_EQ(spawn({add_k, &x, nullptr, 0, 2}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  EXPECT_EQ(spawn({count_unreplayed, &seen, nullptr, 0, 0}, {{&seen, sizeof seen, NANORT_IN}},
                  &destructed_site, false),
            NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error())
                .find("'with a destructor' (body.c:12) in a taskiter's update is not replayable "
                      "and names data"),
            std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(nanort_taskiter_replay(iter, 1), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("nothing more is replayed"), std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(nanort_taskiter_end(iter, 1), NANORT_SUCCESS);  // (said already)
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  EXPECT_EQ(x, 1.0);  // the recorded iteration only
  EXPECT_EQ(unreplayed_runs.load(), 1);
}

// An if(0) task: its creator ran it before making the next tasks, which follow it in the
// replays too, even where no access says so.
void write_unseen(const Step &s) { s.a[0] = static_cast<double>(s.k) + s.b[0]; }

TEST(Taskiter, TasksAfterAnUndeferredOneFollowItInTheReplays) {
  double hidden = 0, step = 0, copy = -1;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  // Writes 'hidden' without naming it (and counts its runs in 'step').
  nanort_task *t = nanort_task_create(&step_site, sizeof(Step));
  const Step undeferred{bump, &step, nullptr, 0, 0};
  std::memcpy(nanort_task_args(t), &undeferred, sizeof undeferred);
  ASSERT_EQ(nanort_task_access(t, &step, sizeof step, NANORT_INOUT), NANORT_SUCCESS);
  nanort_task_set_if(t, 0);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  // Reads 'step' without naming it: only the if(0) order puts it after the bump.
  ASSERT_EQ(spawn({write_unseen, &hidden, &step, 0, 100}, {{&hidden, sizeof hidden, NANORT_OUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(spawn({copy_a_to_b, &hidden, &copy, 0, 0},
                  {{&hidden, sizeof hidden, NANORT_IN}, {&copy, sizeof copy, NANORT_OUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_end(iter, 29), NANORT_SUCCESS);
  EXPECT_EQ(step, 30.0);
  EXPECT_EQ(copy, 130.0);  // the last replay's write after its own bump
}

TEST(Taskiter, EndingTwiceOrATaskgroupAcrossTheBodyIsRefused) {
  ASSERT_EQ(nanort_taskgroup_begin(), NANORT_SUCCESS);
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskgroup_end(), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("taskgroup end inside a taskiter's body"),
            std::string::npos)
      << nanort_last_error();
  ASSERT_EQ(nanort_taskiter_end(iter, 2), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskgroup_end(), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskiter_end(iter, 2), NANORT_ERROR_INVALID_ARGUMENT);  // (gone already)
  EXPECT_NE(std::string(nanort_last_error()).find("no such taskiter records"), std::string::npos)
      << nanort_last_error();
}

// A task whose body returns while it records fails, naming itself; its children run.
void record_and_return(const Step &s) {
  nanort_taskiter *iter = nullptr;
  if (nanort_taskiter_begin(&iter) != NANORT_SUCCESS) return;
  spawn({bump, s.a, nullptr, 0, 0}, {{s.a, sizeof(double), NANORT_INOUT}});
}

TEST(Taskiter, ABodyThatReturnsWhileRecordingFails) {
  double x = 0;
  ASSERT_EQ(spawn({record_and_return, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}),
            NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  EXPECT_NE(std::string(nanort_last_error()).find("returned with a taskiter or taskgraph still recording"),
            std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(x, 1.0);
}

// A task that fails in a replay: the tasks after it in that replay do not run, no replay
// follows, and the failure comes back from nanort_taskiter_end.
std::atomic<int> fail_countdown{0};
void fail_on_third(const Step &s) {
  runs.fetch_add(1);
  if (fail_countdown.fetch_sub(1) == 1) {
    nanort_task_fail("gave up", nullptr, nullptr);
    return;
  }
  s.a[0] += 1.0;
}

TEST(Taskiter, AFailureEndsTheReplays) {
  runs.store(0);
  fail_countdown.store(3);
  double x = 0, y = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({fail_on_third, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(spawn({copy_a_to_b, &x, &y, 0, 0}, {{&x, sizeof x, NANORT_IN}, {&y, sizeof y, NANORT_OUT}}),
            NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskiter_end(iter, 9), NANORT_ERROR_TASK_FAILED);
  const std::string error = nanort_last_error();
  EXPECT_NE(error.find("gave up"), std::string::npos) << error;
  EXPECT_NE(error.find("was not run"), std::string::npos) << error;
  EXPECT_EQ(runs.load(), 3);  // the recorded iteration and two replays, the second failed
  EXPECT_EQ(x, 2.0);
  EXPECT_EQ(y, 2.0);  // copied after each iteration that did not fail
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}

// Inside a final task the body's tasks run at once: nothing to record, the loop runs as is.
void begin_in_final(void *args) {
  auto *result = *static_cast<int **>(args);
  nanort_taskiter *iter = reinterpret_cast<nanort_taskiter *>(1);
  *result = nanort_taskiter_begin(&iter) == NANORT_SUCCESS && iter == nullptr &&
            nanort_taskiter_end(iter, 3) == NANORT_SUCCESS;
}
const nanort_task_impl final_impl{NANORT_DEVICE_SMP, begin_in_final, nullptr, nullptr, nullptr, 0};
const nanort_task_site final_site{NANORT_ABI_VERSION, "final", __FILE__, __LINE__, &final_impl, 1,
                                  nullptr};

TEST(Taskiter, InAFinalTaskNothingIsRecorded) {
  int result = 0;
  int *where = &result;
  nanort_task *t = nanort_task_create(&final_site, sizeof where);
  ASSERT_NE(t, nullptr);
  std::memcpy(nanort_task_args(t), &where, sizeof where);
  nanort_task_set_final(t, 1);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  EXPECT_EQ(result, 1);
}

// Random iterations: tasks that read, write or update random blocks of an 8 x 8 grid (rows
// of it, or 2-D blocks), partly overlapping, in random order; the same loop run sequentially
// must give the same grid and the same values read.
struct GridTask {
  unsigned long *grid;  // 8 x 8, row-major (unsigned: the values wrap around, as they may)
  unsigned long *seen;  // where a reader leaves what it read
  int row, col, rows, cols;
  int mode;     // NANORT_IN, NANORT_OUT or NANORT_INOUT
  unsigned long salt;
};
void grid_body(const GridTask &t) {
  unsigned long sum = 0;
  for (int r = t.row; r < t.row + t.rows; ++r)
    for (int c = t.col; c < t.col + t.cols; ++c) {
      unsigned long &cell = t.grid[r * 8 + c];
      if (t.mode == NANORT_IN) sum = sum * 31 + cell;
      else if (t.mode == NANORT_OUT) cell = t.salt + static_cast<unsigned long>(r * 8 + c);
      else cell = cell * 3 + t.salt;
    }
  if (t.mode == NANORT_IN) *t.seen = sum;
}
void run_grid(void *args) { grid_body(*static_cast<const GridTask *>(args)); }
const nanort_task_impl grid_impl{NANORT_DEVICE_SMP, run_grid, nullptr, nullptr, nullptr, 0};
const nanort_task_site grid_site{NANORT_ABI_VERSION, "grid", __FILE__, __LINE__, &grid_impl, 1,
                                 nullptr};

TEST(Taskiter, RandomOverlappingAccessesMatchTheSequentialRun) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    unsigned state = seed;
    auto next = [&state](int bound) {
      state = state * 1103515245u + 12345u;
      return static_cast<int>((state >> 16) % static_cast<unsigned>(bound));
    };
    constexpr int kTasks = 40, kIterations = 7;
    std::vector<unsigned long> grid(64, 1), grid_seq(64, 1), seen(kTasks, 0), seen_seq(kTasks, 0);
    std::vector<GridTask> tasks;
    for (int t = 0; t < kTasks; ++t) {
      GridTask g{};
      const bool rows_only = next(2) == 0;  // whole rows (contiguous) or a 2-D block
      g.row = next(8);
      g.rows = 1 + next(8 - g.row);
      g.col = rows_only ? 0 : next(8);
      g.cols = rows_only ? 8 : 1 + next(8 - g.col);
      const int m = next(3);
      g.mode = m == 0 ? NANORT_IN : m == 1 ? NANORT_OUT : NANORT_INOUT;
      g.salt = seed * 1000u + static_cast<unsigned>(t);
      tasks.push_back(g);
    }
    for (int it = 0; it < kIterations; ++it)
      for (int t = 0; t < kTasks; ++t) {
        GridTask g = tasks[t];
        g.grid = grid_seq.data();
        g.seen = &seen_seq[t];
        grid_body(g);
      }
    nanort_taskiter *iter = nullptr;
    ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
    for (int t = 0; t < kTasks; ++t) {
      GridTask g = tasks[t];
      g.grid = grid.data();
      g.seen = &seen[t];
      nanort_task *task = nanort_task_create(&grid_site, sizeof g);
      ASSERT_NE(task, nullptr);
      std::memcpy(nanort_task_args(task), &g, sizeof g);
      ASSERT_EQ(nanort_task_access_2d(task, grid.data() + g.row * 8 + g.col,
                                      g.cols * sizeof(unsigned long), g.rows,
                                      8 * sizeof(unsigned long),
                                      static_cast<nanort_access_mode>(g.mode)),
                NANORT_SUCCESS);
      if (g.mode == NANORT_IN) {
        ASSERT_EQ(nanort_task_access(task, &seen[t], sizeof(unsigned long), NANORT_OUT),
                  NANORT_SUCCESS);
      }
      ASSERT_EQ(nanort_task_submit(task), NANORT_SUCCESS) << nanort_last_error();
    }
    ASSERT_EQ(nanort_taskiter_end(iter, kIterations - 1), NANORT_SUCCESS) << nanort_last_error();
    EXPECT_EQ(grid, grid_seq) << "seed " << seed;
    EXPECT_EQ(seen, seen_seq) << "seed " << seed;
  }
}

// The C++ header: lambda tasks whose captures are plain values replay; a capture that needs a
// destructor is refused at its spawn, and nothing is replayed.
TEST(Taskiter, CxxLambdasReplayAndCapturesWithDestructorsAreRefused) {
  long x = 0, y = 0;
  nanort::taskiter(9, [&] {
    nanort::task("bump x").inout(&x).spawn([p = &x] { *p += 2; });
    nanort::task("copy").in(&x).out(&y).spawn([p = &x, q = &y] { *q = *p; });
  });
  EXPECT_EQ(x, 20);
  EXPECT_EQ(y, 20);

  // Not replayable: a capture with a destructor runs, once, with the recorded iteration.
  long w = 0, unreplayed = 0;
  nanort::taskiter(4, [&] {
    nanort::task("bump w").inout(&w).spawn([p = &w] { ++*p; });
    std::string owned = "needs a destructor";
    nanort::task("owner").replayable(false).inout(&unreplayed).spawn([owned, q = &unreplayed] {
      *q += static_cast<long>(owned.size());
    });
  });
  EXPECT_EQ(w, 5);
  EXPECT_EQ(unreplayed, 18);

  long z = 0;
  EXPECT_THROW(nanort::taskiter(3,
                                [&] {
                                  nanort::task("bump z").inout(&z).spawn([p = &z] { ++*p; });
                                  std::string owned = "needs a destructor";
                                  nanort::task("owner").spawn([owned] { (void)owned.size(); });
                                }),
               nanort::task_error);
  nanort::taskwait();
  EXPECT_EQ(z, 1);  // the recorded iteration only
}

}  // namespace

// nanort_taskiter_replay: one replay per call (a loop whose condition the host evaluates after
// each iteration), the taskiter kept until nanort_taskiter_end; a bad handle is refused.
TEST(Taskiter, ReplayPerCallKeepsTheGraphUntilTheEnd) {
  double sum = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({add_k, &sum, nullptr, 0, 3}, {{&sum, sizeof sum, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_replay(iter, 0), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(sum, 3.0);  // the recorded iteration has ended
  int iterations = 1;
  while (sum < 20) {  // the condition reads what the tasks wrote
    ASSERT_EQ(nanort_taskiter_replay(iter, 1), NANORT_SUCCESS) << nanort_last_error();
    ++iterations;
  }
  EXPECT_EQ(iterations, 7);
  EXPECT_EQ(sum, 21.0);
  ASSERT_EQ(nanort_taskiter_end(iter, 2), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(sum, 27.0);
  EXPECT_EQ(nanort_taskiter_replay(iter, 1), NANORT_ERROR_INVALID_ARGUMENT);  // ended
  EXPECT_NE(std::string(nanort_last_error()).find("no such taskiter"), std::string::npos);
}

// OmpSs-2's update clause (nanort_taskiter_update): every iteration runs its body; the
// later ones give their tasks' argument blocks to the recorded tasks. A block diffusion whose
// weight changes with the iteration, and a per-block counter that adds the iteration number,
// against the same loop run with every iteration's tasks made anew.
void weighted_smooth(const Step &s) {
  const double w = 1.0 / static_cast<double>(2 + s.k % 5);  // the iteration's own weight
  for (long i = 0; i < s.n; ++i) s.b[i] = (1 - w) * s.a[i] + w * s.a[i > 0 ? i - 1 : i];
}
void add_iteration(const Step &s) { s.a[0] += static_cast<double>(s.k); }

void updated_iteration(double *a, double *b, double *counters, long blocks, long bs, long it,
                       bool swap) {
  double *from = swap ? b : a, *to = swap ? a : b;
  for (long blk = 0; blk < blocks; ++blk) {
    const long lo = blk * bs, first = lo > 0 ? lo - 1 : lo;
    // (The task sees its block from one element before it, for its left neighbour.)
    Step step{weighted_smooth, from + lo, to + lo, bs, it};
    ASSERT_EQ(spawn(step, {{from + first, sizeof(double) * static_cast<size_t>(lo + bs - first),
                            NANORT_IN},
                           {to + lo, sizeof(double) * static_cast<size_t>(bs), NANORT_OUT}}),
              NANORT_SUCCESS)
        << nanort_last_error();
    ASSERT_EQ(spawn({add_iteration, counters + blk, nullptr, 0, it * (blk + 1)},
                    {{counters + blk, sizeof(double), NANORT_INOUT}}),
              NANORT_SUCCESS)
        << nanort_last_error();
  }
}

TEST(TaskiterUpdate, EveryIterationRunsWithItsOwnArgumentsAsTheSequentialRun) {
  constexpr long blocks = 8, bs = 64, length = blocks * bs, iterations = 21;
  std::vector<double> a_seq(length), b_seq(length, 0.0), c_seq(blocks, 0.0);
  for (long i = 0; i < length; ++i) a_seq[static_cast<size_t>(i)] = (i % 5 == 0) ? 50.0 : 1.0;
  std::vector<double> a = a_seq, b = b_seq, c = c_seq;
  for (long it = 0; it < iterations; ++it) {  // two grids swapped every iteration
    updated_iteration(a_seq.data(), b_seq.data(), c_seq.data(), blocks, bs, it, it % 2);
    ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  }
  // As the plugin lowers 'taskiter unroll(2) update': two iterations recorded, each later
  // pair an update and one replay, the odd last iteration as written.
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  long it = 0;
  for (; it < 2; ++it) updated_iteration(a.data(), b.data(), c.data(), blocks, bs, it, it % 2);
  for (; it + 1 < iterations; it += 2) {
    ASSERT_EQ(nanort_taskiter_update(iter), NANORT_SUCCESS) << nanort_last_error();
    updated_iteration(a.data(), b.data(), c.data(), blocks, bs, it, false);
    updated_iteration(a.data(), b.data(), c.data(), blocks, bs, it + 1, true);
    ASSERT_EQ(nanort_taskiter_replay(iter, 1), NANORT_SUCCESS) << nanort_last_error();
  }
  ASSERT_EQ(nanort_taskiter_end(iter, 0), NANORT_SUCCESS) << nanort_last_error();
  for (; it < iterations; ++it) updated_iteration(a.data(), b.data(), c.data(), blocks, bs, it, it % 2);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  EXPECT_EQ(a, a_seq);
  EXPECT_EQ(b, b_seq);
  EXPECT_EQ(c, c_seq);
  EXPECT_EQ(c[blocks - 1], static_cast<double>(blocks * (iterations * (iterations - 1) / 2)));
}

// nanort_taskiter_launch: a replay not waited for, so that the next iteration's body runs
// meanwhile; the next call waits. Each task waits until the program has seen its launch
// return (a gate the program opens then; a launch that waited for its replay would leave the
// task to give up after 20 s, which the test counts). The results are the sequential run's.
std::atomic<long> gate{-1}, gave_up{0};
void gated_add(const Step &s) {
  const auto start = std::chrono::steady_clock::now();
  while (gate.load() < s.k && std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  if (gate.load() < s.k) gave_up.fetch_add(1);
  s.a[0] = s.a[0] * 2 + static_cast<double>(s.k);
}

TEST(TaskiterUpdate, LaunchedReplaysRunWhileTheNextBodyRuns) {
  constexpr long iterations = 12;
  double seq = 1;
  for (long it = 0; it < iterations; ++it) seq = seq * 2 + static_cast<double>(it);
  double x = 1;
  gate.store(0);
  gave_up.store(0);
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({gated_add, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  for (long it = 1; it < iterations; ++it) {
    ASSERT_EQ(nanort_taskiter_update(iter), NANORT_SUCCESS) << nanort_last_error();
    ASSERT_EQ(spawn({gated_add, &x, nullptr, 0, it}, {{&x, sizeof x, NANORT_INOUT}}),
              NANORT_SUCCESS)
        << nanort_last_error();
    if (it + 1 < iterations) {
      ASSERT_EQ(nanort_taskiter_launch(iter, 1), NANORT_SUCCESS) << nanort_last_error();
      gate.store(it);  // (its task ran on only now)
    } else {
      gate.store(it);
      ASSERT_EQ(nanort_taskiter_replay(iter, 1), NANORT_SUCCESS) << nanort_last_error();
    }
  }
  ASSERT_EQ(nanort_taskiter_end(iter, 0), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(x, seq);
  EXPECT_EQ(gave_up.load(), 0);
}

// What waits for a launched replay besides the next call: the end (without a replay call in
// between), the owner's taskwait, and the end of the owner's body; a failure in it comes back
// from the next call, naming the task, and ends the replays.
void slow_double(const Step &s) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  s.a[0] = s.a[0] * 2 + static_cast<double>(s.k);
}
void launch_and_return(const Step &s) {  // a task owning a taskiter it launches and leaves
  nanort_taskiter *iter = nullptr;
  if (nanort_taskiter_begin(&iter) != NANORT_SUCCESS) return;
  spawn({slow_double, s.a, nullptr, 0, 1}, {{s.a, sizeof(double), NANORT_INOUT}});
  nanort_taskiter_launch(iter, 1);  // (its end, after this replay, is its body's end)
}

TEST(TaskiterUpdate, ALaunchedReplayIsWaitedForByEndTaskwaitAndTheOwnersEnd) {
  double x = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({slow_double, &x, nullptr, 0, 1}, {{&x, sizeof x, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_launch(iter, 2), NANORT_SUCCESS) << nanort_last_error();
  ASSERT_EQ(nanort_taskiter_end(iter, 0), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(x, 7.0);  // 1, 3, 7: the end waited for the launched one

  double y = 0;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({slow_double, &y, nullptr, 0, 1}, {{&y, sizeof y, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_launch(iter, 1), NANORT_SUCCESS) << nanort_last_error();
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(y, 3.0);  // the taskwait waited for it (a replayed task is no child)
  ASSERT_EQ(nanort_taskiter_end(iter, 0), NANORT_SUCCESS);

  double z = 0;
  ASSERT_EQ(spawn({launch_and_return, &z, nullptr, 0, 0}, {{&z, sizeof z, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(z, 3.0);  // the owner ended after its launched replay
}

TEST(TaskiterUpdate, ALaunchedReplaysFailureComesBackFromTheNextCall) {
  runs.store(0);
  fail_countdown.store(2);
  double x = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({fail_on_third, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_update(iter), NANORT_SUCCESS) << nanort_last_error();
  ASSERT_EQ(spawn({fail_on_third, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_launch(iter, 1), NANORT_SUCCESS) << nanort_last_error();
  // The launched replay's task fails; the next call says so (the update waits for nothing,
  // the replay call does).
  nanort_status status = nanort_taskiter_update(iter);
  if (status == NANORT_SUCCESS) {
    ASSERT_EQ(spawn({fail_on_third, &x, nullptr, 0, 0}, {{&x, sizeof x, NANORT_INOUT}}),
              NANORT_SUCCESS);
    status = nanort_taskiter_replay(iter, 1);
  }
  EXPECT_EQ(status, NANORT_ERROR_TASK_FAILED);
  EXPECT_NE(std::string(nanort_last_error()).find("gave up"), std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(nanort_taskiter_replay(iter, 1), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_taskiter_end(iter, 1), NANORT_SUCCESS);
  EXPECT_EQ(runs.load(), 2);  // the recorded one and the failed one
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}

// Refused: an update while another taskiter records, an updated task with another if()
// value or launch size, and a body that returns with its update under way.
void update_and_return(const Step &s) {
  nanort_taskiter *iter = nullptr;
  if (nanort_taskiter_begin(&iter) != NANORT_SUCCESS) return;
  spawn({bump, s.a, nullptr, 0, 0}, {{s.a, sizeof(double), NANORT_INOUT}});
  if (nanort_taskiter_update(iter) != NANORT_SUCCESS) return;
  spawn({bump, s.a, nullptr, 0, 0}, {{s.a, sizeof(double), NANORT_INOUT}});
}

TEST(TaskiterUpdate, MisuseIsRefused) {
  double x = 0;
  nanort_taskiter *first = nullptr, *second = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&first), NANORT_SUCCESS);
  ASSERT_EQ(spawn({add_k, &x, nullptr, 0, 1}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_replay(first, 0), NANORT_SUCCESS);  // kept, not recording
  ASSERT_EQ(nanort_taskiter_begin(&second), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskiter_update(first), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("another taskiter or taskgraph records"),
            std::string::npos)
      << nanort_last_error();
  ASSERT_EQ(nanort_taskiter_end(second, 0), NANORT_SUCCESS);

  ASSERT_EQ(nanort_taskiter_update(first), NANORT_SUCCESS) << nanort_last_error();
  nanort_task *t = nanort_task_create(&step_site, sizeof(Step));
  ASSERT_NE(t, nullptr);
  const Step step{add_k, &x, nullptr, 0, 1};
  std::memcpy(nanort_task_args(t), &step, sizeof step);
  ASSERT_EQ(nanort_task_access(t, &x, sizeof x, NANORT_INOUT), NANORT_SUCCESS);
  nanort_task_set_if(t, 0);
  EXPECT_EQ(nanort_task_submit(t), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("has another if or final value than recorded"),
            std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(nanort_taskiter_end(first, 1), NANORT_SUCCESS);

  nanort_taskiter *third = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&third), NANORT_SUCCESS);
  ASSERT_EQ(spawn({add_k, &x, nullptr, 0, 1}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_update(third), NANORT_SUCCESS);
  t = nanort_task_create(&step_site, sizeof(Step));
  ASSERT_NE(t, nullptr);
  std::memcpy(nanort_task_args(t), &step, sizeof step);
  ASSERT_EQ(nanort_task_access(t, &x, sizeof x, NANORT_INOUT), NANORT_SUCCESS);
  const size_t global = 64, local = 8;
  ASSERT_EQ(nanort_task_set_ndrange(t, 1, &global, &local), NANORT_SUCCESS);
  EXPECT_EQ(nanort_task_submit(t), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("has another launch size"), std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(nanort_taskiter_end(third, 0), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);

  double y = 0;
  ASSERT_EQ(spawn({update_and_return, &y, nullptr, 0, 0}, {{&y, sizeof y, NANORT_INOUT}}),
            NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  EXPECT_NE(std::string(nanort_last_error()).find("returned with a taskiter's update under way"),
            std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(y, 1.0);  // the recorded iteration only
}

TEST(TaskiterUpdate, EndWithReplaysUsesTheUpdateAndWithoutDropsIt) {
  double sum = 0;
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  ASSERT_EQ(spawn({add_k, &sum, nullptr, 0, 1}, {{&sum, sizeof sum, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_update(iter), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(sum, 1.0);  // the first update ended the recording (and waited for it)
  ASSERT_EQ(spawn({add_k, &sum, nullptr, 0, 10}, {{&sum, sizeof sum, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_replay(iter, 2), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(sum, 21.0);  // both replays with the updated block
  ASSERT_EQ(nanort_taskiter_update(iter), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(nanort_taskiter_update(iter), NANORT_ERROR_INVALID_ARGUMENT);  // one at a time
  EXPECT_NE(std::string(nanort_last_error()).find("an update is under way"), std::string::npos)
      << nanort_last_error();
  ASSERT_EQ(spawn({add_k, &sum, nullptr, 0, 100}, {{&sum, sizeof sum, NANORT_INOUT}}),
            NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_INVALID_ARGUMENT);  // a body runs: no waits
  EXPECT_NE(std::string(nanort_last_error()).find("taskwait inside a taskiter's body"),
            std::string::npos)
      << nanort_last_error();
  ASSERT_EQ(nanort_taskiter_end(iter, 1), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(sum, 121.0);
  // Without replays the update goes unused.
  nanort_taskiter *other = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&other), NANORT_SUCCESS);
  ASSERT_EQ(spawn({add_k, &sum, nullptr, 0, 1}, {{&sum, sizeof sum, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_update(other), NANORT_SUCCESS) << nanort_last_error();
  ASSERT_EQ(spawn({add_k, &sum, nullptr, 0, 1000}, {{&sum, sizeof sum, NANORT_INOUT}}),
            NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskiter_end(other, 0), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(sum, 122.0);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskiter_update(nullptr), NANORT_SUCCESS);  // (a final task's: nothing)
}

// What an update must keep: the recorded tasks, in their order, on their data. Each way of
// breaking it fails where it happens, names the task, and no replay follows.
const nanort_task_site other_site{NANORT_ABI_VERSION, "other", "body.c", 30, &step_impl, 1,
                                  nullptr};

std::string update_failure(int how) {
  double x = 0, y = 0;
  nanort_taskiter *iter = nullptr;
  EXPECT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  EXPECT_EQ(spawn({add_k, &x, nullptr, 0, 1}, {{&x, sizeof x, NANORT_INOUT}}), NANORT_SUCCESS);
  EXPECT_EQ(spawn({add_k, &y, nullptr, 0, 1}, {{&y, sizeof y, NANORT_IN}}), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskiter_update(iter), NANORT_SUCCESS) << nanort_last_error();
  std::string error;
  const auto submit = [&](const Step &step, std::vector<Access> accesses,
                          const nanort_task_site *site = &step_site) {
    if (spawn(step, std::move(accesses), site) != NANORT_SUCCESS && error.empty())
      error = nanort_last_error();
  };
  submit({add_k, &x, nullptr, 0, 2}, {{&x, sizeof x, NANORT_INOUT}});
  switch (how) {
    case 0:  // another construct
      submit({add_k, &y, nullptr, 0, 2}, {{&y, sizeof y, NANORT_IN}}, &other_site);
      break;
    case 1:  // other data
      submit({add_k, &x, nullptr, 0, 2}, {{&x, sizeof x, NANORT_IN}});
      submit({add_k, &y, nullptr, 0, 2}, {{&y, sizeof y, NANORT_IN}});
      break;
    case 2:  // another access mode
      submit({add_k, &y, nullptr, 0, 2}, {{&y, sizeof y, NANORT_INOUT}});
      break;
    case 3:  // one task too many
      submit({add_k, &y, nullptr, 0, 2}, {{&y, sizeof y, NANORT_IN}});
      submit({add_k, &y, nullptr, 0, 2}, {{&y, sizeof y, NANORT_IN}});
      break;
    case 4:  // one too few: the replay says so
      break;
  }
  if (nanort_taskiter_replay(iter, 1) != NANORT_SUCCESS && error.empty())
    error = nanort_last_error();
  EXPECT_EQ(nanort_taskiter_replay(iter, 1), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("nothing more is replayed"), std::string::npos)
      << nanort_last_error();
  EXPECT_EQ(nanort_taskiter_update(iter), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_taskiter_end(iter, 1), NANORT_SUCCESS);  // (said already)
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  EXPECT_EQ(x, 1.0);  // the recorded run only
  return error;
}

TEST(TaskiterUpdate, ATaskOtherThanTheRecordedOneFailsAndNamesIt) {
  std::string e = update_failure(0);
  EXPECT_NE(e.find("'other' (body.c:30) in a taskiter's update is not the recorded task at its "
                   "place (task 2 of the iteration, recorded as task 'step'"),
            std::string::npos)
      << e;
  e = update_failure(1);
  EXPECT_NE(e.find("accesses other data than recorded (task 2 of the iteration"),
            std::string::npos)
      << e;
  e = update_failure(2);
  EXPECT_NE(e.find("accesses other data than recorded (task 2 of the iteration"),
            std::string::npos)
      << e;
  e = update_failure(3);
  EXPECT_NE(e.find("is task 3 of an iteration that recorded 2"), std::string::npos) << e;
  e = update_failure(4);
  EXPECT_NE(e.find("an updated iteration created 1 tasks, the recorded one 2"),
            std::string::npos)
      << e;
}

TEST(TaskiterUpdate, CxxHelperRunsEveryBody) {
  double sum = 0, seq = 0;
  for (std::uint64_t i = 0; i < 12; ++i) seq = seq * 0.5 + static_cast<double>(i);
  nanort::taskiter_update(12, [&](std::uint64_t i) {
    double *s = &sum;
    const double add = static_cast<double>(i);
    nanort::task("halve and add").inout(s).spawn([s, add] { *s = *s * 0.5 + add; });
  });
  nanort::taskwait();
  EXPECT_EQ(sum, seq);
}

// A taskgraph region: recorded at the first encounter, replayed at the later ones (also from
// another task), per graph id; graph_reset records again; tasks before the region come first.
void region(nanort_taskgraph **graph, double *x, double delta, std::uint64_t id, int reset,
            int *ran) {
  static char construct;
  int run_block = -1;
  ASSERT_EQ(nanort_taskgraph_begin(&construct, id, reset, graph, &run_block), NANORT_SUCCESS)
      << nanort_last_error();
  *ran = run_block;
  if (run_block) {
    ASSERT_NE(*graph, nullptr);
    for (long k = 0; k < 4; ++k)
      ASSERT_EQ(spawn({add_k, x + k, nullptr, 0, static_cast<long>(delta)},
                      {{x + k, sizeof(double), NANORT_INOUT}}),
                NANORT_SUCCESS);
    // replayable(0): with the recording only.
    ASSERT_EQ(spawn({count_unreplayed, nullptr, nullptr, 0, 0}, {}, &step_site, false),
              NANORT_SUCCESS);
  }
  ASSERT_EQ(nanort_taskgraph_end(*graph, 1), NANORT_SUCCESS) << nanort_last_error();
}

TEST(Taskgraph, RecordedOnceReplayedPerGraphId) {
  unreplayed_runs.store(0);
  double x[4] = {0, 0, 0, 0}, y[4] = {0, 0, 0, 0};
  nanort_taskgraph *graph = nullptr;
  int ran = 0;
  region(&graph, x, 1, 0, 0, &ran);
  EXPECT_EQ(ran, 1);
  // A task before the next encounter: the replay comes after it.
  ASSERT_EQ(spawn({add_k, x, nullptr, 0, 100}, {{x, sizeof(double), NANORT_INOUT}}),
            NANORT_SUCCESS);
  region(&graph, x, 5, 0, 0, &ran);  // replays delta 1
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(graph, nullptr);
  region(&graph, y, 2, 1, 0, &ran);  // another graph of the same construct
  EXPECT_EQ(ran, 1);
  for (int r = 0; r < 3; ++r) {  // replayed from a task
    struct Args {
      double *x;
      int ran;
    };
    static const nanort_task_impl impl{
        NANORT_DEVICE_SMP,
        [](void *p) {
          auto *a = static_cast<Args *>(p);
          nanort_taskgraph *g = nullptr;
          region(&g, a->x, 9, 0, 0, &a->ran);
          if (a->ran) std::abort();
        },
        nullptr, nullptr, nullptr, 0};
    static const nanort_task_site site{NANORT_ABI_VERSION, "encounter", __FILE__, __LINE__,
                                       &impl, 1, nullptr};
    nanort_task *t = nanort_task_create(&site, sizeof(Args));
    ASSERT_NE(t, nullptr);
    Args args{x, -1};
    std::memcpy(nanort_task_args(t), &args, sizeof args);
    ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
    ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  }
  EXPECT_EQ(x[0], 105.0);
  EXPECT_EQ(x[3], 5.0);
  region(&graph, x, 10, 0, 1, &ran);  // graph_reset
  EXPECT_EQ(ran, 1);
  region(&graph, x, 20, 0, 0, &ran);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(x[3], 25.0);
  region(&graph, y, 7, 1, 0, &ran);
  EXPECT_EQ(y[2], 4.0);
  EXPECT_EQ(unreplayed_runs.load(), 3);  // one per recording: graph 0 twice, graph 1
  // No group, no graph (the region's 'if' was false): returns at once.
  EXPECT_EQ(nanort_taskgraph_end(nullptr, 0), NANORT_SUCCESS);
  // Not inside a taskiter's body.
  nanort_taskiter *iter = nullptr;
  ASSERT_EQ(nanort_taskiter_begin(&iter), NANORT_SUCCESS);
  static char other;
  int run_block = 0;
  EXPECT_EQ(nanort_taskgraph_begin(&other, 0, 0, &graph, &run_block),
            NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("do not nest"), std::string::npos);
  ASSERT_EQ(nanort_taskiter_end(iter, 0), NANORT_SUCCESS);
}
