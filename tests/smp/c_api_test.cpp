// The runtime through its C ABI, as the pragma plugin's lowered code uses it: static task
// sites, argument blocks filled with memcpy, accesses, submit, taskwait. Run with
// NANORT_CPU_WORKERS=2 (see CMakeLists.txt): the thread in taskwait plus one TBB worker.
#include <nanort/nanort.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "c_api_tasks.hpp"
#include "test_support.hpp"

namespace {

using nanort_test::Access;
using nanort_test::expect_taskwait_ok;
using nanort_test::make_task;
using nanort_test::sleep_ms;
using nanort_test::spawn;
using nanort_test::wait_for;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Start-up and queries

TEST(CApi, StartsAndAnswersQueries) {
  ASSERT_EQ(nanort_init(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(nanort_init(), NANORT_SUCCESS);  // again: nothing happens
  EXPECT_EQ(nanort_abi_version(), NANORT_ABI_VERSION);
  ASSERT_NE(nanort_version_string(), nullptr);
  EXPECT_STRNE(nanort_version_string(), "");
  EXPECT_EQ(nanort_device_count(NANORT_DEVICE_SMP), 2);  // NANORT_CPU_WORKERS=2
  EXPECT_EQ(nanort_device_count(NANORT_DEVICE_CUDA), 0);
  EXPECT_GE(nanort_device_count(NANORT_DEVICE_OPENCL), 0);  // whatever the ICD loader finds
  EXPECT_EQ(nanort_device_count(NANORT_DEVICE_KIND_COUNT), -1);  // more in c_invalid_arguments.c
  EXPECT_EQ(nanort_current_worker(), -1);  // the main thread is no worker
  EXPECT_EQ(nanort_in_final(), 0);
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);  // no children: nothing to wait for
  EXPECT_EQ(nanort_taskwait_noflush(), NANORT_SUCCESS);
}

TEST(CApi, StatusStringsAreDistinctAndNonEmpty) {
  std::vector<std::string> seen;
  for (int s = NANORT_SUCCESS; s <= NANORT_ERROR_INTERNAL; ++s) {
    const char *text = nanort_status_string(static_cast<nanort_status>(s));
    ASSERT_NE(text, nullptr);
    EXPECT_STRNE(text, "");
    seen.emplace_back(text);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
}

// ---------------------------------------------------------------------------------------------
// Dependences with real data

struct ChainArgs {
  long *counter;
  std::vector<int> *order;
  int index;
};
void chain_step(void *p) {
  auto *a = static_cast<ChainArgs *>(p);
  // A read, a pause, a write: two of these at once would lose an increment.
  long value = *a->counter;
  if (a->index % 50 == 0) std::this_thread::yield();
  *a->counter = value + 1;
  a->order->push_back(a->index);
}
SITE(chain_site, chain_step);

TEST(CApi, ChainOfInoutTasksRunsInCreationOrder) {
  long counter = 0;
  std::vector<int> order;
  order.reserve(1000);
  constexpr int kTasks = 1000;
  for (int i = 0; i < kTasks; ++i)
    spawn(chain_site, ChainArgs{&counter, &order, i}, {{&counter, sizeof counter, NANORT_INOUT}});
  expect_taskwait_ok();
  EXPECT_EQ(counter, kTasks);
  std::vector<int> expected(kTasks);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
}

// Locality: a task's successor, released when it ends, runs next on the same thread, warm in
// its cache, even while other ready tasks wait (the other pool thread is busy with them too).
// The first tasks wait until every successor is submitted, so that each one is released by
// its predecessor's end, not ready at once.
struct PairArgs {
  long *x;
  std::thread::id *ran_on;
  const std::atomic<bool> *go;  // null for the successors
  int busy_us;
};
void pair_step(void *p) {
  auto *a = static_cast<PairArgs *>(p);
  const auto start = std::chrono::steady_clock::now();
  while (a->go && !a->go->load() && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(a->busy_us);
  while (std::chrono::steady_clock::now() < until) {
  }
  ++*a->x;
  *a->ran_on = std::this_thread::get_id();
}
SITE(pair_site, pair_step);

TEST(CApi, AReleasedSuccessorRunsOnTheThreadThatReleasedIt) {
  constexpr int kPairs = 40;
  long x[kPairs] = {};
  std::thread::id first_on[kPairs], second_on[kPairs];
  std::atomic<bool> go{false};
  for (int i = 0; i < kPairs; ++i)
    spawn(pair_site, PairArgs{&x[i], &first_on[i], &go, 200}, {{&x[i], sizeof x[i], NANORT_INOUT}});
  for (int i = 0; i < kPairs; ++i)
    spawn(pair_site, PairArgs{&x[i], &second_on[i], nullptr, 0},
          {{&x[i], sizeof x[i], NANORT_INOUT}});
  go.store(true);
  expect_taskwait_ok();
  int elsewhere = 0;
  for (int i = 0; i < kPairs; ++i) {
    EXPECT_EQ(x[i], 2);
    elsewhere += first_on[i] != second_on[i];
  }
  EXPECT_EQ(elsewhere, 0) << "successors that ran on another thread than their predecessor";
}

struct FillArgs {
  int *data;
  int count;
  int value;
  int delay_ms;
};
void fill(void *p) {
  auto *a = static_cast<FillArgs *>(p);
  sleep_ms(a->delay_ms);
  for (int i = 0; i < a->count; ++i) a->data[i] = a->value + i;
}
SITE(fill_site, fill);

struct SumArgs {
  const int *data;
  int count;
  long *result;
  int delay_ms;
};
void sum(void *p) {
  auto *a = static_cast<SumArgs *>(p);
  sleep_ms(a->delay_ms);
  long total = 0;
  for (int i = 0; i < a->count; ++i) total += a->data[i];
  *a->result = total;
}
SITE(sum_site, sum);

struct ReadLongArgs {
  const long *source;
  long *copy;
};
void read_long(void *p) {
  auto *a = static_cast<ReadLongArgs *>(p);
  *a->copy = std::atomic_ref<const long>(*a->source).load();
}
SITE(read_long_site, read_long);

struct SetLongArgs {
  long *x;
  long value;
  int delay_ms;
};
void set_long(void *p) {
  auto *a = static_cast<SetLongArgs *>(p);
  sleep_ms(a->delay_ms);
  *a->x = a->value;
}
SITE(set_long_site, set_long);

long expected_sum(const std::vector<int> &values, int from, int to) {
  return std::accumulate(values.begin() + from, values.begin() + to, 0L);
}

TEST(CApi, PartialOverlapsOrderRealData) {
  std::vector<int> data(2048, -1);
  int *d = data.data();
  // Two slow writers of the halves, then a reader across the middle.
  spawn(fill_site, FillArgs{d, 1024, 1000, 30}, {{d, 1024 * sizeof(int), NANORT_OUT}});
  spawn(fill_site, FillArgs{d + 1024, 1024, 5000, 60},
        {{d + 1024, 1024 * sizeof(int), NANORT_OUT}});
  long middle = 0;
  spawn(sum_site, SumArgs{d + 512, 1024, &middle, 0},
        {{d + 512, 1024 * sizeof(int), NANORT_IN}});
  // A slow reader of everything, then a writer of a piece of it (write after read).
  long before = 0;
  spawn(sum_site, SumArgs{d, 2048, &before, 40}, {{d, 2048 * sizeof(int), NANORT_IN}});
  spawn(fill_site, FillArgs{d + 256, 512, 0, 0}, {{d + 256, 512 * sizeof(int), NANORT_OUT}});
  // And a reader of the new piece and its surroundings (read after write).
  long after = 0;
  spawn(sum_site, SumArgs{d + 200, 600, &after, 0}, {{d + 200, 600 * sizeof(int), NANORT_IN}});
  expect_taskwait_ok();

  std::vector<int> model(2048);
  for (int i = 0; i < 1024; ++i) model[i] = 1000 + i;
  for (int i = 0; i < 1024; ++i) model[1024 + i] = 5000 + i;
  EXPECT_EQ(middle, expected_sum(model, 512, 1536));
  EXPECT_EQ(before, expected_sum(model, 0, 2048));
  for (int i = 0; i < 512; ++i) model[256 + i] = i;
  EXPECT_EQ(after, expected_sum(model, 200, 800));
  EXPECT_EQ(data, model);
}

struct BlockArgs {
  int *first;
  int rows, cols, ld;
  int value;
};
void fill_block(void *p) {
  auto *a = static_cast<BlockArgs *>(p);
  sleep_ms(5);
  for (int r = 0; r < a->rows; ++r)
    for (int c = 0; c < a->cols; ++c) a->first[r * a->ld + c] = a->value;
}
void add_block(void *p) {
  auto *a = static_cast<BlockArgs *>(p);
  for (int r = 0; r < a->rows; ++r)
    for (int c = 0; c < a->cols; ++c) a->first[r * a->ld + c] = a->first[r * a->ld + c] * 10 + a->value;
}
SITE(fill_block_site, fill_block);
SITE(add_block_site, add_block);

TEST(CApi, TwoDimensionalBlocksOrderRealData) {
  constexpr int n = 32, b = 8;  // a 32 x 32 matrix of 8 x 8 tiles
  std::vector<int> matrix(n * n, 0);
  auto tile = [&](int i, int j) { return matrix.data() + i * b * n + j * b; };
  auto access_tile = [&](nanort_task *t, int i, int j, nanort_access_mode mode) {
    EXPECT_EQ(nanort_task_access_2d(t, tile(i, j), b * sizeof(int), b, n * sizeof(int), mode),
              NANORT_SUCCESS)
        << nanort_last_error();
  };
  // Every tile written, then updated three times through tiles of a shifted grid: a tile of
  // the shifted grid straddles four tiles of the first one.
  for (int i = 0; i < n / b; ++i)
    for (int j = 0; j < n / b; ++j) {
      nanort_task *t = make_task(fill_block_site, BlockArgs{tile(i, j), b, b, n, i * 4 + j});
      access_tile(t, i, j, NANORT_OUT);
      ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
    }
  for (int round = 1; round <= 3; ++round)
    for (int i = 0; i + 1 < n / b; ++i)
      for (int j = 0; j + 1 < n / b; ++j) {
        int *first = tile(i, j) + (b / 2) * n + b / 2;
        nanort_task *t = make_task(add_block_site, BlockArgs{first, b, b, n, round});
        EXPECT_EQ(nanort_task_access_2d(t, first, b * sizeof(int), b, n * sizeof(int),
                                        NANORT_INOUT),
                  NANORT_SUCCESS);
        ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
      }
  expect_taskwait_ok();

  std::vector<int> model(n * n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) model[r * n + c] = (r / b) * 4 + c / b;
  for (int round = 1; round <= 3; ++round)
    for (int i = 0; i + 1 < n / b; ++i)
      for (int j = 0; j + 1 < n / b; ++j)
        for (int r = 0; r < b; ++r)
          for (int c = 0; c < b; ++c) {
            int &v = model[(i * b + b / 2 + r) * n + j * b + b / 2 + c];
            v = v * 10 + round;
          }
  EXPECT_EQ(matrix, model);
}

// ---------------------------------------------------------------------------------------------
// Concurrent and commutative

struct AtomicAddArgs {
  long *target;
  long amount;
};
void atomic_add(void *p) {
  auto *a = static_cast<AtomicAddArgs *>(p);
  std::atomic_ref<long>(*a->target).fetch_add(a->amount);
}
SITE(atomic_add_site, atomic_add);

TEST(CApi, ConcurrentReductionIsCompleteBeforeTheNextReader) {
  long total = 0, seen = -1;
  spawn(set_long_site, SetLongArgs{&total, 5, 20}, {{&total, sizeof total, NANORT_OUT}});
  for (int i = 1; i <= 300; ++i)
    spawn(atomic_add_site, AtomicAddArgs{&total, i}, {{&total, sizeof total, NANORT_CONCURRENT}});
  spawn(read_long_site, ReadLongArgs{&total, &seen}, {{&total, sizeof total, NANORT_IN}});
  expect_taskwait_ok();
  EXPECT_EQ(seen, 5 + 300 * 301 / 2);
  EXPECT_EQ(total, 5 + 300 * 301 / 2);
}

TEST(CApi, ReaderAfterConcurrentTasksSeesEveryAddition) {
  for (int repeat = 0; repeat < 20; ++repeat) {
    long total = 0, seen = -1;
    for (int i = 1; i <= 50; ++i)
      spawn(atomic_add_site, AtomicAddArgs{&total, i},
            {{&total, sizeof total, NANORT_CONCURRENT}});
    spawn(read_long_site, ReadLongArgs{&total, &seen}, {{&total, sizeof total, NANORT_IN}});
    for (int i = 1; i <= 50; ++i)
      spawn(atomic_add_site, AtomicAddArgs{&total, 1000}, {{&total, sizeof total, NANORT_CONCURRENT}});
    expect_taskwait_ok();
    EXPECT_EQ(seen, 50 * 51 / 2) << "repeat " << repeat;
    EXPECT_EQ(total, 50 * 51 / 2 + 50 * 1000);
  }
}

// Two tasks that each wait (bounded) until both have started: they succeed only if the
// runtime lets them run at the same time.
struct MeetArgs {
  std::atomic<int> *arrived;
  std::atomic<int> *met;
};
void meet(void *p) {
  auto *a = static_cast<MeetArgs *>(p);
  a->arrived->fetch_add(1);
  if (wait_for([&] { return a->arrived->load() >= 2; }, std::chrono::seconds(10)))
    a->met->fetch_add(1);
}
SITE(meet_site, meet);

void expect_pair_meets(nanort_access_mode first, const void *a, nanort_access_mode second,
                       const void *b) {
  std::atomic<int> arrived{0}, met{0};
  spawn(meet_site, MeetArgs{&arrived, &met}, {{a, 8, first}});
  spawn(meet_site, MeetArgs{&arrived, &met}, {{b, 8, second}});
  expect_taskwait_ok();
  EXPECT_EQ(met.load(), 2) << "the two tasks did not run at the same time";
}

TEST(CApi, ConcurrentTasksMayRunAtTheSameTime) {
  long x = 0;
  expect_pair_meets(NANORT_CONCURRENT, &x, NANORT_CONCURRENT, &x);
}

TEST(CApi, ReadersMayRunAtTheSameTime) {
  long x = 0;
  expect_pair_meets(NANORT_IN, &x, NANORT_IN, &x);
}

TEST(CApi, CommutativeTasksOnDifferentDataMayRunAtTheSameTime) {
  long x = 0, y = 0;
  expect_pair_meets(NANORT_COMMUTATIVE, &x, NANORT_COMMUTATIVE, &y);
}

struct ExclusiveArgs {
  long *target;
  std::atomic<int> *in_flight;
  std::atomic<int> *max_in_flight;
  std::atomic<int> *ran;
  int spin_us;
};
void exclusive_add(void *p) {
  auto *a = static_cast<ExclusiveArgs *>(p);
  const int now = a->in_flight->fetch_add(1) + 1;
  int max = a->max_in_flight->load();
  while (now > max && !a->max_in_flight->compare_exchange_weak(max, now)) {
  }
  long value = *a->target;  // not atomic: must be exclusive
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(a->spin_us);
  while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
  *a->target = value + 1;
  a->ran->fetch_add(1);
  a->in_flight->fetch_sub(1);
}
SITE(exclusive_site, exclusive_add);

TEST(CApi, CommutativeTasksNeverRunTogetherAndAllRun) {
  long total = 0;
  std::atomic<int> in_flight{0}, max_in_flight{0}, ran{0};
  constexpr int kTasks = 200;
  for (int i = 0; i < kTasks; ++i)
    spawn(exclusive_site, ExclusiveArgs{&total, &in_flight, &max_in_flight, &ran, i % 4 ? 0 : 200},
          {{&total, sizeof total, NANORT_COMMUTATIVE}});
  long seen = -1;
  spawn(read_long_site, ReadLongArgs{&total, &seen}, {{&total, sizeof total, NANORT_IN}});
  expect_taskwait_ok();
  EXPECT_EQ(max_in_flight.load(), 1);
  EXPECT_EQ(ran.load(), kTasks);
  EXPECT_EQ(total, kTasks);
  EXPECT_EQ(seen, kTasks);
}

TEST(CApi, CommutativeOverlappingRangesAreExclusive) {
  // Three overlapping ranges of one array; every task holds all of its range exclusively.
  std::vector<long> data(300, 0);
  std::atomic<int> in_flight{0}, max_in_flight{0}, ran{0};
  for (int i = 0; i < 60; ++i) {
    long *first = data.data() + (i % 3) * 100;
    spawn(exclusive_site, ExclusiveArgs{data.data() + 150, &in_flight, &max_in_flight, &ran, 50},
          {{first, 150 * sizeof(long), NANORT_COMMUTATIVE},
           {data.data() + 150, sizeof(long), NANORT_COMMUTATIVE}});
  }
  expect_taskwait_ok();
  EXPECT_EQ(max_in_flight.load(), 1);
  EXPECT_EQ(ran.load(), 60);
  EXPECT_EQ(data[150], 60);
}

// ---------------------------------------------------------------------------------------------
// Nested tasks

struct TreeArgs {
  int depth;
  long *result;
};
void tree(void *p);
SITE(tree_site, tree);
void tree(void *p) {
  auto *a = static_cast<TreeArgs *>(p);
  if (a->depth == 0) {
    *a->result = 1;
    return;
  }
  long left = 0, right = 0;
  spawn(tree_site, TreeArgs{a->depth - 1, &left}, {{&left, sizeof left, NANORT_OUT}});
  spawn(tree_site, TreeArgs{a->depth - 1, &right}, {{&right, sizeof right, NANORT_OUT}});
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  *a->result = left + right + 1;
}

TEST(CApi, NestedTasksWithTaskwaitInside) {
  long result = 0;
  spawn(tree_site, TreeArgs{10, &result}, {{&result, sizeof result, NANORT_OUT}});
  expect_taskwait_ok();
  EXPECT_EQ(result, (1L << 11) - 1);
}

// Every task runs on one of the CPU workers (NANORT_CPU_WORKERS counts the thread that waits
// in taskwait among them), so inside a task nanort_current_worker() is a worker's index.
struct WorkerArgs {
  std::atomic<int> *seen;  // one counter per index, plus one for anything out of range
  int workers;
};
void record_worker(void *p) {
  auto *a = static_cast<WorkerArgs *>(p);
  const int w = nanort_current_worker();
  a->seen[w >= 0 && w < a->workers ? w : a->workers].fetch_add(1);
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  while (std::chrono::steady_clock::now() < until) {
  }
}
SITE(record_worker_site, record_worker);

TEST(CApi, InsideATaskTheCurrentWorkerIsAWorkerIndex) {
  const int workers = nanort_device_count(NANORT_DEVICE_SMP);
  ASSERT_GE(workers, 1);
  std::vector<std::atomic<int>> seen(workers + 1);
  for (int i = 0; i < 400; ++i) spawn(record_worker_site, WorkerArgs{seen.data(), workers});
  expect_taskwait_ok();
  int total = 0;
  for (int w = 0; w <= workers; ++w) total += seen[w].load();
  EXPECT_EQ(total, 400);
  EXPECT_EQ(seen[workers].load(), 0)
      << "tasks saw nanort_current_worker() outside [0, " << workers << ")";
  EXPECT_EQ(nanort_current_worker(), -1);  // this thread, outside tasks
}

// A parent with out(x) that leaves a slow child writing x and returns without taskwait: the
// parent is complete only when the child is, so a later reader of x sees the child's value.
struct LateChildParentArgs {
  long *x;
};
void late_child_parent(void *p) {
  auto *a = static_cast<LateChildParentArgs *>(p);
  spawn(fill_site, FillArgs{nullptr, 0, 0, 0}, {});  // an unrelated child
  struct Child {
    long *x;
  };
  static const nanort_task_impl impl{NANORT_DEVICE_SMP,
                                     [](void *q) {
                                       sleep_ms(50);
                                       *static_cast<Child *>(q)->x = 77;
                                     },
                                     nullptr, nullptr, nullptr, 0};
  static const nanort_task_site site{NANORT_ABI_VERSION, "late child", __FILE__, __LINE__, &impl, 1,
                                     nullptr};
  spawn(site, Child{a->x}, {{a->x, sizeof(long), NANORT_OUT}});
}
SITE(late_child_parent_site, late_child_parent);

TEST(CApi, ParentCompletesOnlyWithItsChildren) {
  long x = 0, seen = -1;
  spawn(late_child_parent_site, LateChildParentArgs{&x}, {{&x, sizeof x, NANORT_OUT}});
  spawn(read_long_site, ReadLongArgs{&x, &seen}, {{&x, sizeof x, NANORT_IN}});
  expect_taskwait_ok();
  EXPECT_EQ(seen, 77);
}

// The argument block's destructor (site->args_destroy) runs when the task completes, after its
// body and all its children (OmpSs-2: a task's data environment lives until its children are
// done; issue 19), not when the body returns. The child is held on a flag until the test has
// looked, so a destructor called at the body's end sees the child unfinished.
struct HeldEnv {
  std::atomic<bool> body_returned{false};
  std::atomic<bool> release{false};
  std::atomic<bool> child_done{false};
  std::atomic<int> destroyed{0};
  std::atomic<bool> child_done_at_destroy{false};
};
void held_child(void *p) {
  HeldEnv *e = *static_cast<HeldEnv **>(p);
  wait_for([&] { return e->release.load(); });
  e->child_done = true;
}
SITE(held_child_site, held_child);
void env_parent(void *p) {
  HeldEnv *e = *static_cast<HeldEnv **>(p);
  spawn(held_child_site, e);
  e->body_returned = true;
}
void env_parent_destroy(void *p) {
  HeldEnv *e = *static_cast<HeldEnv **>(p);
  e->child_done_at_destroy = e->child_done.load();
  ++e->destroyed;
}
const nanort_task_impl env_parent_impl{NANORT_DEVICE_SMP, env_parent, nullptr, nullptr, nullptr, 0};
const nanort_task_site env_parent_site{NANORT_ABI_VERSION, "env parent", __FILE__, __LINE__,
                                       &env_parent_impl, 1, env_parent_destroy};

TEST(CApi, ArgsDestroyRunsAfterTheChildrenEnd) {
  HeldEnv e;
  spawn(env_parent_site, &e);
  ASSERT_TRUE(wait_for([&] { return e.body_returned.load(); }));
  sleep_ms(20);  // (a destructor called when the body returns has run by now)
  EXPECT_EQ(e.destroyed.load(), 0);
  e.release = true;
  expect_taskwait_ok();
  EXPECT_EQ(e.destroyed.load(), 1);
  EXPECT_TRUE(e.child_done_at_destroy.load());
}

// Sibling tasks of different parents name the same address: one dependency domain per parent,
// so they do not wait for each other. Child A waits (bounded) for child B to have run; if B
// were ordered after A, A would time out.
struct Rendezvous {
  long shared = 0;
  std::atomic<bool> a_started{false};
  std::atomic<bool> b_ran{false};
  std::atomic<bool> a_saw_b{false};
  std::atomic<bool> b_saw_a_started{false};
};
void child_a(void *p) {
  auto *r = *static_cast<Rendezvous **>(p);
  r->a_started = true;
  r->a_saw_b = wait_for([&] { return r->b_ran.load(); }, std::chrono::seconds(10));
}
void child_b(void *p) {
  auto *r = *static_cast<Rendezvous **>(p);
  r->b_ran = true;
}
SITE(child_a_site, child_a);
SITE(child_b_site, child_b);
void parent_a(void *p) {
  auto *r = *static_cast<Rendezvous **>(p);
  spawn(child_a_site, r, {{&r->shared, sizeof r->shared, NANORT_INOUT}});
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}
void parent_b(void *p) {
  auto *r = *static_cast<Rendezvous **>(p);
  // Register B after A so that a shared domain would order B after A.
  r->b_saw_a_started = wait_for([&] { return r->a_started.load(); }, std::chrono::seconds(10));
  spawn(child_b_site, r, {{&r->shared, sizeof r->shared, NANORT_INOUT}});
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}
SITE(parent_a_site, parent_a);
SITE(parent_b_site, parent_b);

TEST(CApi, SiblingsOfDifferentParentsDoNotOrderEachOther) {
  Rendezvous r;
  Rendezvous *pr = &r;
  spawn(parent_a_site, pr);
  spawn(parent_b_site, pr);
  expect_taskwait_ok();
  EXPECT_TRUE(r.b_saw_a_started.load());
  EXPECT_TRUE(r.a_saw_b.load()) << "a child of another parent was ordered after this one";
  EXPECT_TRUE(r.b_ran.load());
}

// Threads outside the runtime each have their own implicit task and dependency domain.
TEST(CApi, ProgramThreadsHaveTheirOwnDomains) {
  Rendezvous r;
  Rendezvous *pr = &r;
  std::thread other([&] {
    EXPECT_TRUE(wait_for([&] { return r.a_started.load(); }, std::chrono::seconds(10)));
    spawn(child_b_site, pr, {{&r.shared, sizeof r.shared, NANORT_INOUT}});
    EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
  });
  spawn(child_a_site, pr, {{&r.shared, sizeof r.shared, NANORT_INOUT}});
  expect_taskwait_ok();
  other.join();
  EXPECT_TRUE(r.a_saw_b.load());
}

TEST(CApi, ProgramThreadsRunIndependentGraphs) {
  constexpr int kThreads = 3, kTasks = 300;
  std::vector<long> counters(kThreads, 0);
  std::vector<std::vector<int>> orders(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kTasks; ++i)
        spawn(chain_site, ChainArgs{&counters[t], &orders[t], i},
              {{&counters[t], sizeof(long), NANORT_INOUT}});
      EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
    });
  for (std::thread &t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(counters[t], kTasks);
    EXPECT_EQ(orders[t].size(), static_cast<std::size_t>(kTasks));
    EXPECT_TRUE(std::is_sorted(orders[t].begin(), orders[t].end()));
  }
}

// ---------------------------------------------------------------------------------------------
// taskwait on

struct HoldArgs {
  std::atomic<bool> *started;
  std::atomic<bool> *go;
  std::atomic<bool> *done;
};
void hold(void *p) {
  auto *a = static_cast<HoldArgs *>(p);
  a->started->store(true);
  wait_for([&] { return a->go->load(); }, std::chrono::seconds(20));
  a->done->store(true);
}
SITE(hold_site, hold);

TEST(CApi, TaskwaitOnWaitsOnlyForTheTasksOfThatAddress) {
  long x = 0;
  int y[16] = {};
  long z = 0, z_copy = -1;
  std::atomic<bool> started{false}, go{false}, done{false};
  spawn(hold_site, HoldArgs{&started, &go, &done}, {{&x, sizeof x, NANORT_INOUT}});
  // The long task is taken by the worker thread (this thread is not in the runtime).
  ASSERT_TRUE(wait_for([&] { return started.load(); }));
  spawn(fill_site, FillArgs{y, 16, 100, 30}, {{y, sizeof y, NANORT_OUT}});
  spawn(sum_site, SumArgs{y, 16, &z, 30}, {{y, sizeof y, NANORT_IN}, {&z, sizeof z, NANORT_OUT}});

  const void *addresses[] = {&z};
  const std::size_t sizes[] = {sizeof z};
  ASSERT_EQ(nanort_taskwait_on(addresses, sizes, 1), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(z, 16 * 100 + 15 * 16 / 2);  // its writer (and the writer before it) are done
  EXPECT_FALSE(done.load()) << "taskwait on waited for a task on another address";
  // Later tasks still order after the ones taskwait on waited for, and after the long one.
  spawn(read_long_site, ReadLongArgs{&z, &z_copy},
        {{&z, sizeof z, NANORT_IN}, {&x, sizeof x, NANORT_IN}});

  // Bytes nobody touched: nothing to wait for.
  long untouched = 0;
  const void *other[] = {&untouched};
  const std::size_t other_size[] = {sizeof untouched};
  EXPECT_EQ(nanort_taskwait_on(other, other_size, 1), NANORT_SUCCESS);
  EXPECT_FALSE(done.load());
  EXPECT_EQ(nanort_taskwait_on(nullptr, nullptr, 0), NANORT_SUCCESS);

  go = true;
  expect_taskwait_ok();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(z_copy, z);
}

TEST(CApi, TaskwaitOnWaitsForReadersToo) {
  long x = 3, copy = 0;
  spawn(sum_site, SumArgs{nullptr, 0, &copy, 0}, {});  // unrelated
  struct SlowRead {
    const long *x;
    long *copy;
  };
  static const nanort_task_impl impl{NANORT_DEVICE_SMP,
                                     [](void *p) {
                                       auto *a = static_cast<SlowRead *>(p);
                                       sleep_ms(50);
                                       *a->copy = *a->x;
                                     },
                                     nullptr, nullptr, nullptr, 0};
  static const nanort_task_site site{NANORT_ABI_VERSION, "slow read", __FILE__, __LINE__, &impl, 1,
                                     nullptr};
  long result = 0;
  spawn(site, SlowRead{&x, &result}, {{&x, sizeof x, NANORT_IN}});
  const void *addresses[] = {&x};
  const std::size_t sizes[] = {sizeof x};
  ASSERT_EQ(nanort_taskwait_on(addresses, sizes, 1), NANORT_SUCCESS);
  EXPECT_EQ(result, 3) << "taskwait on returned before the reader of the address was done";
  x = 4;  // safe: nobody uses x any more
  expect_taskwait_ok();
  EXPECT_EQ(result, 3);
}

// ---------------------------------------------------------------------------------------------
// Failures reported at taskwait

void throw_runtime_error(void *) { throw std::runtime_error("boom from a task"); }
void throw_int(void *) { throw 42; }
const nanort_task_impl thrower_impl{NANORT_DEVICE_SMP, throw_runtime_error, nullptr, nullptr,
                                    nullptr, 0};
const nanort_task_site thrower_site{NANORT_ABI_VERSION, "thrower", "kernels/thrower.c", 123,
                                    &thrower_impl, 1, nullptr};
const nanort_task_impl int_thrower_impl{NANORT_DEVICE_SMP, throw_int, nullptr, nullptr, nullptr, 0};
const nanort_task_site int_thrower_site{NANORT_ABI_VERSION, "int thrower", "kernels/other.c", 9,
                                        &int_thrower_impl, 1, nullptr};

TEST(CApi, FailedTaskIsReportedAtTaskwaitWithItsNameAndLocation) {
  long x = 0;
  spawn(thrower_site, 0, {{&x, sizeof x, NANORT_INOUT}});
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "thrower")) << message;
  EXPECT_TRUE(contains(message, "kernels/thrower.c:123")) << message;
  EXPECT_TRUE(contains(message, "boom from a task")) << message;
  // Reported once.
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  // The runtime goes on: a successor of the failed task's data still runs.
  long seen = -1;
  x = 9;
  spawn(read_long_site, ReadLongArgs{&x, &seen}, {{&x, sizeof x, NANORT_IN}});
  expect_taskwait_ok();
  EXPECT_EQ(seen, 9);
}

TEST(CApi, EveryFailedTaskIsNamed) {
  spawn(thrower_site, 0);
  spawn(int_thrower_site, 0);
  spawn(fill_site, FillArgs{nullptr, 0, 0, 0});  // succeeds
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "'thrower' (kernels/thrower.c:123)")) << message;
  EXPECT_TRUE(contains(message, "'int thrower' (kernels/other.c:9)")) << message;
  EXPECT_TRUE(contains(message, "unknown type")) << message;
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}

TEST(CApi, LabelAndLocationCanBeSetPerTask) {
  nanort_task *t = make_task(thrower_site, 0);
  ASSERT_NE(t, nullptr);
  nanort_task_set_label(t, "renamed");
  nanort_task_set_location(t, "elsewhere.c", 777);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "'renamed' (elsewhere.c:777)")) << message;
  EXPECT_FALSE(contains(message, "kernels/thrower.c")) << message;
}

TEST(CApi, FailureOfANestedTaskReachesTheRoot) {
  // The parent neither waits nor fails itself: the child's failure is the parent's parent's.
  static const nanort_task_impl impl{NANORT_DEVICE_SMP,
                                     [](void *) { spawn(thrower_site, 0); }, nullptr, nullptr,
                                     nullptr, 0};
  static const nanort_task_site parent{NANORT_ABI_VERSION, "quiet parent", __FILE__, __LINE__,
                                       &impl, 1, nullptr};
  spawn(parent, 0);
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  EXPECT_TRUE(contains(nanort_last_error(), "thrower")) << nanort_last_error();
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}

TEST(CApi, FailureSeenByATaskwaitInsideATask) {
  struct Result {
    nanort_status status = NANORT_SUCCESS;
    std::string message;
  };
  static Result result;
  static const nanort_task_impl impl{NANORT_DEVICE_SMP,
                                     [](void *) {
                                       spawn(thrower_site, 0);
                                       result.status = nanort_taskwait();
                                       result.message = nanort_last_error();
                                     },
                                     nullptr, nullptr, nullptr, 0};
  static const nanort_task_site parent{NANORT_ABI_VERSION, "waiting parent", __FILE__, __LINE__,
                                       &impl, 1, nullptr};
  spawn(parent, 0);
  // The parent collected the failure itself: nothing left for the root.
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(result.status, NANORT_ERROR_TASK_FAILED);
  EXPECT_TRUE(contains(result.message, "thrower")) << result.message;
}

// Failures of unrelated tasks while this thread waits on one address: each failure is
// reported exactly once, by whichever wait comes first.
TEST(CApi, FailuresDuringTaskwaitOnAreReportedOnce) {
  constexpr int kRounds = 40;
  static std::vector<std::string> labels;
  labels.clear();
  for (int i = 0; i < kRounds; ++i) labels.push_back("failing #" + std::to_string(i) + "#");
  std::vector<long> slots(kRounds, 0);
  std::string reported;
  for (int i = 0; i < kRounds; ++i) {
    nanort_task *t = make_task(thrower_site, 0);
    ASSERT_NE(t, nullptr);
    nanort_task_set_label(t, labels[i].c_str());
    ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
    spawn(set_long_site, SetLongArgs{&slots[i], i + 1, i % 3}, {{&slots[i], sizeof(long), NANORT_OUT}});
    const void *addresses[] = {&slots[i]};
    const std::size_t sizes[] = {sizeof(long)};
    const nanort_status status = nanort_taskwait_on(addresses, sizes, 1);
    EXPECT_TRUE(status == NANORT_SUCCESS || status == NANORT_ERROR_TASK_FAILED) << status;
    EXPECT_EQ(slots[i], i + 1) << "taskwait on returned before the writer was done";
    if (status == NANORT_ERROR_TASK_FAILED) reported += std::string(nanort_last_error()) + "\n";
  }
  if (nanort_taskwait() == NANORT_ERROR_TASK_FAILED) reported += nanort_last_error();
  for (int i = 0; i < kRounds; ++i) {
    std::size_t count = 0;
    for (std::size_t at = reported.find(labels[i]); at != std::string::npos;
         at = reported.find(labels[i], at + 1))
      ++count;
    EXPECT_EQ(count, 1u) << labels[i] << " reported " << count << " times in:\n" << reported;
  }
}

// Many failed tasks at one taskwait: the message names every one, whole (it was once cut at
// 4 KiB, mid-word), one line each, exactly as each failure was recorded.
TEST(CApi, LongFailureMessageIsKeptWhole) {
  constexpr int kTasks = 600;  // about 45 KiB of message
  static std::vector<std::string> labels;
  labels.clear();
  std::vector<std::string> expected;
  for (int i = 0; i < kTasks; ++i) {
    labels.push_back("failing task number " + std::to_string(i));
    expected.push_back("task '" + labels[i] + "' (kernels/thrower.c:123) threw: boom from a task");
  }
  for (int i = 0; i < kTasks; ++i) {
    nanort_task *t = make_task(thrower_site, 0);
    ASSERT_NE(t, nullptr);
    nanort_task_set_label(t, labels[i].c_str());
    ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  }
  ASSERT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  const std::string message = nanort_last_error();
  std::vector<std::string> lines;
  for (std::size_t start = 0;;) {
    const std::size_t end = message.find('\n', start);
    lines.push_back(message.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  // In the order the tasks failed, which two workers decide.
  std::sort(lines.begin(), lines.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(lines, expected) << "a message of " << message.size() << " characters";
  // A short message after it replaces it whole.
  EXPECT_EQ(nanort_task_access(nullptr, nullptr, 0, NANORT_IN), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(nanort_last_error(), "nanort_task_access: task is NULL");
}

// Each thread keeps its own message, also a long one, until it fails again; a thread that
// ends frees its own (LeakSanitizer would report it in sanitizer builds).
TEST(CApi, LongFailureMessagesArePerThread) {
  const std::string long_label(10000, 'x');
  std::string seen_there;
  std::thread other([&] {
    nanort_task *t = make_task(thrower_site, 0);
    ASSERT_NE(t, nullptr);
    nanort_task_set_label(t, long_label.c_str());
    EXPECT_EQ(nanort_task_access(t, &long_label, static_cast<std::size_t>(-1), NANORT_IN),
              NANORT_ERROR_INVALID_ARGUMENT);
    seen_there = nanort_last_error();
    nanort_task_discard(t);
  });
  other.join();
  EXPECT_EQ(seen_there, "task '" + long_label +
                            "' (kernels/thrower.c:123): the size of an access, " +
                            std::to_string(static_cast<std::size_t>(-1)) +
                            " bytes, is more than memory can hold; it looks like a negative "
                            "length (-1) converted to size_t");
  EXPECT_EQ(nanort_task_submit(nullptr), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(nanort_last_error(), "nanort_task_submit: task is NULL");
}

// ---------------------------------------------------------------------------------------------
// if(0) and final

struct WhereArgs {
  const long *x;
  long *seen;
  std::thread::id *thread;
  std::atomic<bool> *ran;
};
void record_where(void *p) {
  auto *a = static_cast<WhereArgs *>(p);
  if (a->x) *a->seen = *a->x;
  *a->thread = std::this_thread::get_id();
  a->ran->store(true);
}
SITE(where_site, record_where);


TEST(CApi, UndeferredTaskRunsInTheCreatingThreadAfterItsDependences) {
  long x = 0, seen = -1;
  std::thread::id thread;
  std::atomic<bool> ran{false};
  spawn(set_long_site, SetLongArgs{&x, 1, 50}, {{&x, sizeof x, NANORT_OUT}});
  nanort_task *t = make_task(where_site, WhereArgs{&x, &seen, &thread, &ran},
                             {{&x, sizeof x, NANORT_IN}});
  nanort_task_set_if(t, 0);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  EXPECT_TRUE(ran.load()) << "submit returned before the undeferred task ran";
  EXPECT_EQ(thread, std::this_thread::get_id());
  EXPECT_EQ(seen, 1);
  expect_taskwait_ok();
}

// Many times over: a short task on a worker, and an undeferred task that waits for it. The
// creating thread waits (polling for NANORT_SPIN_US, then asleep) until the worker makes the
// undeferred task ready; that wake-up must never be lost. ctest also runs this with
// NANORT_SPIN_US=0 (smp_c_api_no_spinning), where every wait that finds nothing to do goes to
// sleep at once. The worker's part lasts 0 to 6.3 us, in steps of 100 ns, so that its end
// meets the creator's going to sleep at every offset. A watchdog turns a lost wake-up (the
// creator asleep for good) into a failure with a message instead of a hang.
struct StartedSetArgs {
  long *x;
  long value;
  std::atomic<bool> *started;
  int busy_ns;
};
void started_set(void *p) {
  auto *a = static_cast<StartedSetArgs *>(p);
  a->started->store(true);
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(a->busy_ns);
  while (std::chrono::steady_clock::now() < until) {
  }
  *a->x = a->value;
}
SITE(started_set_site, started_set);
void nothing(void *) {}
SITE(nothing_site, nothing);

TEST(CApi, UndeferredTaskWaitingForAWorkerIsAlwaysWoken) {
  long x = 0;
  std::atomic<long> round{0};
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    long last = -1;
    auto last_progress = std::chrono::steady_clock::now();
    while (!finished.load()) {
      nanort_test::sleep_ms(100);
      const long now = round.load();
      if (now != last) {
        last = now;
        last_progress = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(10)) {
        std::fprintf(stderr,
                     "FAILED: round %ld: the undeferred task's creator has waited 10 s for a "
                     "predecessor that finished long ago (a lost wake-up)\n",
                     now);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  });
  const auto start = std::chrono::steady_clock::now();
  long i = 0;
  for (; i < 2000000 && std::chrono::steady_clock::now() - start < std::chrono::seconds(6); ++i) {
    std::atomic<bool> started{false};
    spawn(started_set_site, StartedSetArgs{&x, i, &started, static_cast<int>(i % 64) * 100},
          {{&x, sizeof x, NANORT_OUT}});
    // The worker has it (this thread is not in the runtime yet): the undeferred task below
    // waits for another thread.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!started.load() && std::chrono::steady_clock::now() < deadline) {
    }
    ASSERT_TRUE(started.load());
    nanort_task *t = make_task(nothing_site, 0, {{&x, sizeof x, NANORT_IN}});
    ASSERT_NE(t, nullptr);
    nanort_task_set_if(t, 0);
    ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
    ASSERT_EQ(x, i);
    round.store(i + 1);
  }
  finished = true;
  watchdog.join();
  std::printf("%ld rounds\n", i);
  expect_taskwait_ok();
}

TEST(CApi, UndeferredTaskInsideATaskRunsInThatTasksThread) {
  struct Outer {
    std::thread::id outer, inner;
    bool ran_at_submit = false;
  };
  static Outer result;
  static const nanort_task_impl impl{
      NANORT_DEVICE_SMP,
      [](void *) {
        result.outer = std::this_thread::get_id();
        std::atomic<bool> ran{false};
        long dummy = 0;
        nanort_task *t = make_task(where_site, WhereArgs{nullptr, &dummy, &result.inner, &ran});
        nanort_task_set_if(t, 0);
        EXPECT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
        result.ran_at_submit = ran.load();
      },
      nullptr, nullptr, nullptr, 0};
  static const nanort_task_site outer{NANORT_ABI_VERSION, "outer", __FILE__, __LINE__, &impl, 1,
                                      nullptr};
  spawn(outer, 0);
  expect_taskwait_ok();
  EXPECT_TRUE(result.ran_at_submit);
  EXPECT_EQ(result.inner, result.outer);
}

TEST(CApi, IfWithATrueConditionIsAnOrdinaryTask) {
  long x = 0;
  nanort_task *t = make_task(set_long_site, SetLongArgs{&x, 5, 0}, {{&x, sizeof x, NANORT_OUT}});
  nanort_task_set_if(t, 1);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  expect_taskwait_ok();
  EXPECT_EQ(x, 5);
}

struct FinalLog {
  std::vector<int> order;
  std::vector<bool> ran_at_submit;
  std::vector<std::thread::id> threads;
  std::vector<int> in_final;
  std::thread::id parent_thread;
  int parent_in_final = -1;
};
struct FinalChildArgs {
  FinalLog *log;
  int index;
};
void final_child(void *p);
SITE(final_child_site, final_child);
void final_child(void *p) {
  auto *a = static_cast<FinalChildArgs *>(p);
  a->log->order.push_back(a->index);
  a->log->threads.push_back(std::this_thread::get_id());
  a->log->in_final.push_back(nanort_in_final());
  if (a->index < 10) {  // each child has a grandchild, also run at once
    const std::size_t before = a->log->order.size();
    spawn(final_child_site, FinalChildArgs{a->log, a->index * 100 + 100});
    a->log->ran_at_submit.push_back(a->log->order.size() == before + 1);
  }
}
void final_parent(void *p) {
  FinalLog *log = *static_cast<FinalLog **>(p);
  log->parent_thread = std::this_thread::get_id();
  log->parent_in_final = nanort_in_final();
  long shared = 0;
  for (int i = 0; i < 5; ++i) {
    const std::size_t before = log->order.size();
    // Same data inout: in a final task these need no dependences, they just run in order.
    spawn(final_child_site, FinalChildArgs{log, i}, {{&shared, sizeof shared, NANORT_INOUT}});
    log->ran_at_submit.push_back(log->order.size() == before + 2);  // child and grandchild
  }
  EXPECT_EQ(nanort_taskwait(), NANORT_SUCCESS);
}
SITE(final_parent_site, final_parent);

TEST(CApi, ChildrenOfAFinalTaskRunAtOnceInOrderInItsThread) {
  FinalLog log;
  FinalLog *plog = &log;
  nanort_task *t = make_task(final_parent_site, plog);
  nanort_task_set_final(t, 1);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  expect_taskwait_ok();
  EXPECT_EQ(log.parent_in_final, 1);
  EXPECT_EQ(log.order, (std::vector<int>{0, 100, 1, 200, 2, 300, 3, 400, 4, 500}));
  EXPECT_EQ(log.ran_at_submit, std::vector<bool>(10, true));
  for (const std::thread::id &id : log.threads) EXPECT_EQ(id, log.parent_thread);
  EXPECT_EQ(log.in_final, std::vector<int>(10, 1));
  EXPECT_EQ(nanort_in_final(), 0);
}

TEST(CApi, FailureInsideAFinalTaskIsReported) {
  static const nanort_task_impl impl{NANORT_DEVICE_SMP, [](void *) { spawn(thrower_site, 0); },
                                     nullptr, nullptr, nullptr, 0};
  static const nanort_task_site parent{NANORT_ABI_VERSION, "final parent", __FILE__, __LINE__,
                                       &impl, 1, nullptr};
  nanort_task *t = make_task(parent, 0);
  nanort_task_set_final(t, 1);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  EXPECT_TRUE(contains(nanort_last_error(), "thrower")) << nanort_last_error();
}

// ---------------------------------------------------------------------------------------------
// Errors at creation and submission

std::atomic<int> destroyed{0};
void count_destroy(void *) { ++destroyed; }

const nanort_task_impl cuda_only_impl{NANORT_DEVICE_CUDA, nullptr, "saxpy_kernel", nullptr,
                                      nullptr, 0};
const nanort_task_site cuda_only_site{NANORT_ABI_VERSION, "saxpy", "saxpy.c", 42, &cuda_only_impl,
                                      1, &count_destroy};

TEST(CApi, TaskWithOnlyACudaImplementationHasNoDevice) {
  destroyed = 0;
  float y[4] = {};
  nanort_task *t = nanort_task_create(&cuda_only_site, 16);
  ASSERT_NE(t, nullptr) << nanort_last_error();
  ASSERT_EQ(nanort_task_access(t, y, sizeof y, NANORT_INOUT), NANORT_SUCCESS);
  EXPECT_EQ(nanort_task_submit(t), NANORT_ERROR_NO_DEVICE);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "'saxpy' (saxpy.c:42)")) << message;
  EXPECT_TRUE(contains(message, "cuda")) << message;
  EXPECT_TRUE(contains(message, "smp (2 workers)")) << message;
  EXPECT_TRUE(contains(message, "opencl")) << message;
  EXPECT_EQ(destroyed, 1) << "the rejected task's argument block was not released";
  expect_taskwait_ok();  // nothing was queued
}

// OmpSs programs name pointers they never dereference (out(*p) with p NULL): for CPU tasks the
// address is only a name that orders them, as Nanos++ does; a task that may run on a device
// would move those bytes, so it is refused at submit.
TEST(CApi, NullAddressOrdersCpuTasks) {
  long x = 0;
  std::atomic<bool> started{false}, go{false}, done{false};
  spawn(hold_site, HoldArgs{&started, &go, &done}, {{nullptr, sizeof(float), NANORT_OUT}});
  ASSERT_TRUE(wait_for([&] { return started.load(); }));
  long seen = -1;
  spawn(read_long_site, ReadLongArgs{&x, &seen}, {{nullptr, sizeof(float), NANORT_INOUT}});
  EXPECT_EQ(seen, -1) << "the second task on NULL did not wait for the first";
  go = true;
  expect_taskwait_ok();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(seen, 0);
}

TEST(CApi, NullAddressOfATaskWithADeviceImplementationIsRefused) {
  destroyed = 0;
  nanort_task *t = nanort_task_create(&cuda_only_site, 16);
  ASSERT_NE(t, nullptr) << nanort_last_error();
  ASSERT_EQ(nanort_task_access(t, nullptr, 16, NANORT_INOUT), NANORT_SUCCESS);
  EXPECT_EQ(nanort_task_submit(t), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(nanort_last_error()),
            "task 'saxpy' (saxpy.c:42): access of a NULL address (a task that may run on a "
            "cuda device moves its data)");
  EXPECT_EQ(destroyed, 1) << "the rejected task's argument block was not released";
  expect_taskwait_ok();
}

TEST(CApi, TaskWithNoImplementationHasNoDevice) {
  const nanort_task_site site{NANORT_ABI_VERSION, "empty", nullptr, 0, nullptr, 0, nullptr};
  nanort_task *t = nanort_task_create(&site, 0);
  ASSERT_NE(t, nullptr) << nanort_last_error();
  EXPECT_EQ(nanort_task_submit(t), NANORT_ERROR_NO_DEVICE);
  EXPECT_TRUE(contains(nanort_last_error(), "'empty'")) << nanort_last_error();
  EXPECT_TRUE(contains(nanort_last_error(), "no implementation")) << nanort_last_error();
}

TEST(CApi, SmpImplementationIsChosenAmongOthers) {
  long x = 0;
  const nanort_task_impl impls[] = {
      {NANORT_DEVICE_CUDA, nullptr, "k", nullptr, nullptr, 0},
      {NANORT_DEVICE_OPENCL, nullptr, "k", nullptr, nullptr, 0},
      {NANORT_DEVICE_SMP, set_long, nullptr, nullptr, nullptr, 0},
  };
  const nanort_task_site site{NANORT_ABI_VERSION, "versions", __FILE__, __LINE__, impls, 3, nullptr};
  spawn(site, SetLongArgs{&x, 11, 0}, {{&x, sizeof x, NANORT_OUT}});
  expect_taskwait_ok();
  EXPECT_EQ(x, 11);
}

TEST(CApi, SiteOfAnotherAbiVersionIsRefused) {
  const nanort_task_impl impl{NANORT_DEVICE_SMP, set_long, nullptr, nullptr, nullptr, 0};
  const nanort_task_site site{999, "from the future", __FILE__, __LINE__, &impl, 1, nullptr};
  nanort_task *t = nanort_task_create(&site, 8);
  EXPECT_EQ(t, nullptr);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "ABI 999")) << message;
  EXPECT_TRUE(contains(message, "from the future")) << message;
  EXPECT_TRUE(contains(message, "ABI " + std::to_string(NANORT_ABI_VERSION))) << message;
  // NANORT_ERROR_ABI_MISMATCH has its own text.
  EXPECT_TRUE(contains(nanort_status_string(NANORT_ERROR_ABI_MISMATCH), "ABI"));
}

TEST(CApi, InvalidArgumentsAreRefusedWithAMessage) {
  EXPECT_EQ(nanort_task_create(nullptr, 0), nullptr);
  EXPECT_TRUE(contains(nanort_last_error(), "NULL")) << nanort_last_error();
  EXPECT_EQ(nanort_task_submit(nullptr), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_task_access(nullptr, &destroyed, 4, NANORT_IN), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_task_args(nullptr), nullptr);
  EXPECT_EQ(nanort_taskwait_on(nullptr, nullptr, 1), NANORT_ERROR_INVALID_ARGUMENT);

  long x = 0;
  nanort_task *t = make_task(set_long_site, SetLongArgs{&x, 3, 0});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(nanort_task_access(t, &x, sizeof x, static_cast<nanort_access_mode>(0)),
            NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(nanort_last_error(), "set_long_site")) << nanort_last_error();
  EXPECT_TRUE(contains(nanort_last_error(), "mode 0")) << nanort_last_error();
  EXPECT_EQ(nanort_task_access(t, &x, sizeof x, static_cast<nanort_access_mode>(6)),
            NANORT_ERROR_INVALID_ARGUMENT);
  // (0 to 7 are values of the enum in C++; farther ones are tried from C, c_invalid_arguments.c)
  EXPECT_EQ(nanort_task_access(t, &x, sizeof x, static_cast<nanort_access_mode>(7)),
            NANORT_ERROR_INVALID_ARGUMENT);
  // 2-D with a stride shorter than a row.
  int m[64];
  EXPECT_EQ(nanort_task_access_2d(t, m, 8 * sizeof(int), 4, 4 * sizeof(int), NANORT_IN),
            NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(nanort_last_error(), "stride")) << nanort_last_error();
  // A NULL address with bytes to it is a dependence (NullAddressOrdersCpuTasks) but no copy;
  // no bytes at all is fine.
  EXPECT_EQ(nanort_task_copy(t, nullptr, 8, NANORT_IN), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(nanort_last_error(), "copy of a NULL address")) << nanort_last_error();
  EXPECT_EQ(nanort_task_access(t, nullptr, 0, NANORT_IN), NANORT_SUCCESS);
  EXPECT_EQ(nanort_task_access_2d(t, m, 16, 0, 64, NANORT_IN), NANORT_SUCCESS);
  // A valid 2-D access whose rows touch, and a one-row one with any stride.
  EXPECT_EQ(nanort_task_access_2d(t, m, 16, 4, 16, NANORT_IN), NANORT_SUCCESS);
  EXPECT_EQ(nanort_task_access_2d(t, m, 16, 1, 0, NANORT_IN), NANORT_SUCCESS);
  // ndrange checks.
  const std::size_t global[3] = {64, 64, 1}, zero_local[3] = {8, 0, 1};
  EXPECT_EQ(nanort_task_set_ndrange(t, 0, global, nullptr), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_task_set_ndrange(t, 4, global, nullptr), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_task_set_ndrange(t, 2, nullptr, nullptr), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_task_set_ndrange(t, 2, global, zero_local), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_task_set_ndrange(t, 2, global, nullptr), NANORT_SUCCESS);
  // The refused accesses left the task usable.
  EXPECT_EQ(nanort_task_access(t, &x, sizeof x, NANORT_OUT), NANORT_SUCCESS);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  expect_taskwait_ok();
  EXPECT_EQ(x, 3);
}

// ---------------------------------------------------------------------------------------------
// Argument blocks

struct CopyArgs {
  unsigned char bytes[40];
  unsigned char *result;
  std::uintptr_t *address;
};
void copy_out(void *p) {
  auto *a = static_cast<CopyArgs *>(p);
  std::memcpy(a->result, a->bytes, sizeof a->bytes);
  *a->address = reinterpret_cast<std::uintptr_t>(p);
}
SITE(copy_site, copy_out);

TEST(CApi, ArgumentBlockIsACopyTakenAtCreation) {
  unsigned char result[40] = {};
  std::uintptr_t address = 0;
  CopyArgs args{};
  for (int i = 0; i < 40; ++i) args.bytes[i] = static_cast<unsigned char>(i * 7 + 1);
  args.result = result;
  args.address = &address;
  nanort_task *t = make_task(copy_site, args);
  ASSERT_NE(t, nullptr);
  std::memset(&args, 0, sizeof args);  // the task has its own copy
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  expect_taskwait_ok();
  for (int i = 0; i < 40; ++i) EXPECT_EQ(result[i], static_cast<unsigned char>(i * 7 + 1));
  EXPECT_EQ(address % 16, 0u) << "argument block not 16-byte aligned";
}

struct BigArgs {
  std::uint32_t words[1000];  // 4000 bytes: far past the inline block
  std::uint64_t *sum;
  std::uintptr_t *address;
};
void big_sum(void *p) {
  auto *a = static_cast<BigArgs *>(p);
  std::uint64_t total = 0;
  for (std::uint32_t w : a->words) total = total * 31 + w;
  *a->sum = total;
  *a->address = reinterpret_cast<std::uintptr_t>(p);
}
SITE(big_site, big_sum);

TEST(CApi, LargeArgumentBlocks) {
  constexpr int kTasks = 64;
  std::vector<std::uint64_t> sums(kTasks, 0), expected(kTasks, 0);
  std::vector<std::uintptr_t> addresses(kTasks, 1);
  for (int t = 0; t < kTasks; ++t) {
    auto args = std::make_unique<BigArgs>();
    for (int i = 0; i < 1000; ++i) args->words[i] = static_cast<std::uint32_t>(t * 1000003 + i * 7919);
    std::uint64_t total = 0;
    for (std::uint32_t w : args->words) total = total * 31 + w;
    expected[t] = total;
    args->sum = &sums[t];
    args->address = &addresses[t];
    spawn(big_site, *args);
  }
  expect_taskwait_ok();
  EXPECT_EQ(sums, expected);
  for (std::uintptr_t a : addresses) EXPECT_EQ(a % 16, 0u);
}

TEST(CApi, ArgumentBlockSizesAroundTheInlineLimit) {
  for (std::size_t size : {0ul, 1ul, 95ul, 96ul, 97ul, 112ul, 4096ul, 100000ul}) {
    static std::vector<unsigned char> seen;
    seen.clear();
    static std::size_t expected_size;
    expected_size = size;
    static const nanort_task_impl impl{NANORT_DEVICE_SMP,
                                       [](void *p) {
                                         auto *bytes = static_cast<unsigned char *>(p);
                                         seen.assign(bytes, bytes + expected_size);
                                       },
                                       nullptr, nullptr, nullptr, 0};
    static const nanort_task_site site{NANORT_ABI_VERSION, "sized", __FILE__, __LINE__, &impl, 1,
                                       nullptr};
    nanort_task *t = nanort_task_create(&site, size);
    ASSERT_NE(t, nullptr) << nanort_last_error();
    auto *bytes = static_cast<unsigned char *>(nanort_task_args(t));
    if (size) {
      ASSERT_NE(bytes, nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bytes) % 16, 0u);
    }
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<unsigned char>(i * 13 + size);
    ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
    expect_taskwait_ok();
    ASSERT_EQ(seen.size(), size);
    for (std::size_t i = 0; i < size; ++i)
      ASSERT_EQ(seen[i], static_cast<unsigned char>(i * 13 + size)) << "size " << size << " byte " << i;
  }
}

// args_destroy runs exactly once per submitted task, whatever happens to the task; a task
// discarded before submit never had its argument block handed over, so it is not destroyed.
const nanort_task_impl counted_impl{NANORT_DEVICE_SMP, [](void *) {}, nullptr, nullptr, nullptr, 0};
const nanort_task_site counted_site{NANORT_ABI_VERSION, "counted", __FILE__, __LINE__,
                                    &counted_impl, 1, &count_destroy};

TEST(CApi, ArgumentDestructorRunsOncePerTask) {
  destroyed = 0;
  for (int i = 0; i < 10; ++i) spawn(counted_site, 0);
  expect_taskwait_ok();
  EXPECT_EQ(destroyed, 10);

  destroyed = 0;
  nanort_task *t = nanort_task_create(&counted_site, 200);  // a large block
  ASSERT_NE(t, nullptr);
  nanort_task_discard(t);
  EXPECT_EQ(destroyed, 0) << "discard: the argument block is still the caller's";

  destroyed = 0;
  t = nanort_task_create(&counted_site, 8);
  nanort_task_set_if(t, 0);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  EXPECT_EQ(destroyed, 1) << "undeferred";

  destroyed = 0;
  static const nanort_task_impl impl{NANORT_DEVICE_SMP,
                                     [](void *) {
                                       for (int i = 0; i < 3; ++i) spawn(counted_site, 0);
                                     },
                                     nullptr, nullptr, nullptr, 0};
  static const nanort_task_site final_site{NANORT_ABI_VERSION, "final", __FILE__, __LINE__, &impl,
                                           1, &count_destroy};
  t = nanort_task_create(&final_site, 8);
  nanort_task_set_final(t, 1);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  expect_taskwait_ok();
  EXPECT_EQ(destroyed, 4) << "final task and its three included children";

  destroyed = 0;
  static const nanort_task_site failing{NANORT_ABI_VERSION, "failing", __FILE__, __LINE__,
                                        &thrower_impl, 1, &count_destroy};
  spawn(failing, 0);
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  EXPECT_EQ(destroyed, 1) << "failed task";
}

// ---------------------------------------------------------------------------------------------
// Many tasks: more than the ready-task limit, so the creating thread helps run them.

TEST(CApi, ManyIndependentTasks) {
  constexpr int kTasks = 20000;
  std::vector<long> slots(kTasks, 0);
  for (int i = 0; i < kTasks; ++i)
    spawn(set_long_site, SetLongArgs{&slots[i], i + 1, 0}, {{&slots[i], sizeof(long), NANORT_OUT}});
  expect_taskwait_ok();
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(slots[i], i + 1) << i;
}

// nanort_task_set_device: placed on the CPU workers, a task runs there; a device the runtime
// lacks, or a kind the task has no implementation for, fails at submit naming the task.
TEST(CApi, PlacedTasksRunWhereTheyArePlacedOrFailAtSubmit) {
  long slot = 0;
  nanort_task *task = make_task(set_long_site, SetLongArgs{&slot, 7, 0}, {{&slot, sizeof slot, NANORT_OUT}});
  nanort_task_set_device(task, NANORT_DEVICE_SMP, 0);
  ASSERT_EQ(nanort_task_submit(task), NANORT_SUCCESS) << nanort_last_error();
  expect_taskwait_ok();
  EXPECT_EQ(slot, 7);
  task = make_task(set_long_site, SetLongArgs{&slot, 8, 0}, {{&slot, sizeof slot, NANORT_OUT}});
  nanort_task_set_device(task, NANORT_DEVICE_CUDA, 0);
  EXPECT_EQ(nanort_task_submit(task), NANORT_ERROR_NO_DEVICE);
  const std::string message = nanort_last_error();
  EXPECT_NE(message.find("set_long_site"), std::string::npos) << message;
  EXPECT_NE(message.find("no implementation for it"), std::string::npos) << message;
  expect_taskwait_ok();
  EXPECT_EQ(slot, 7);
}

// nanort_host_register without a GPU locks nothing but keeps the rules: no overlap, unlock
// once, no NULL.
TEST(CApi, HostRegisterChecksItsArgumentsWithOrWithoutAGpu) {
  std::vector<char> memory(1 << 16);
  ASSERT_EQ(nanort_host_register(memory.data(), memory.size()), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(nanort_host_register(memory.data() + 100, 10), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("overlap"), std::string::npos) << nanort_last_error();
  EXPECT_EQ(nanort_host_register(nullptr, 10), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_host_register(memory.data(), 0), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_host_unregister(memory.data()), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(nanort_host_unregister(memory.data()), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nanort_last_error()).find("not an address nanort_host_register locked"),
            std::string::npos)
      << nanort_last_error();
}

}  // namespace
