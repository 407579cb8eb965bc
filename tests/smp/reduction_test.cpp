// Task reductions through the C ABI, as lowered code uses them: OmpSs-2's reduction(op: x)
// (nanort_task_reduction) and OpenMP's taskgroup task_reduction with in_reduction. Every
// result is compared with the sequential computation. Run with NANORT_CPU_WORKERS=4 (see
// CMakeLists.txt): three pool workers and the thread in taskwait.
#include <nanort/nanort.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "c_api_tasks.hpp"
#include "test_support.hpp"

namespace {

using nanort_test::expect_taskwait_ok;
using nanort_test::make_task;
using nanort_test::spawn;
using nanort_test::wait_for;

constexpr int kWorkers = 4;  // NANORT_CPU_WORKERS

template <class Args>
Args &args_of(void *raw) {
  return *static_cast<Args *>(raw);
}

std::string hex(const void *address) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", address);
  return text;
}

const nanort_reduction_op kSumLong{NANORT_ABI_VERSION, NANORT_REDUCE_SUM, NANORT_TYPE_LONG, 0,
                                   nullptr, nullptr, nullptr, nullptr};
const nanort_reduction_op kSumInt{NANORT_ABI_VERSION, NANORT_REDUCE_SUM, NANORT_TYPE_INT, 0,
                                  nullptr, nullptr, nullptr, nullptr};
const nanort_reduction_op kProductLong{NANORT_ABI_VERSION, NANORT_REDUCE_PRODUCT,
                                       NANORT_TYPE_LONG, 0, nullptr, nullptr, nullptr, nullptr};

// ---------------------------------------------------------------------------------------------
// Private copies: one per worker, never shared, combined before the next access

struct CountArgs {
  long *total;
  long increments;
  std::atomic<int> *running;  // held until this many run at once, if not null
  std::atomic<int> *shared_seen;
};

void count_up(void *raw) {
  auto &a = args_of<CountArgs>(raw);
  long *mine = static_cast<long *>(nanort_reduction_private(a.total));
  if (!mine) {
    nanort_task_fail("got no private copy", nullptr, nullptr);
    return;
  }
  if (a.running) {
    // The first tasks wait until kWorkers of them run: reducers of one reduction run at once.
    a.running->fetch_add(1);
    if (!wait_for([&] { return a.running->load() >= kWorkers; }))
      nanort_task_fail("did not run at the same time as the other reducers", nullptr, nullptr);
  }
  // Many small non-atomic increments, read back: a copy shared with another running task
  // loses or gains some.
  const long before = *mine;
  for (long i = 0; i < a.increments; ++i) {
    volatile long *slot = mine;
    *slot = *slot + 1;
  }
  if (*mine != before + a.increments) a.shared_seen->fetch_add(1);
}
SITE(counter, count_up);

struct ReadArgs {
  const long *from;
  long *into;
};
void read_long(void *raw) {
  auto &a = args_of<ReadArgs>(raw);
  *a.into = *a.from;
}
SITE(reader, read_long);

struct SetArgs {
  long *to;
  long value;
  std::atomic<bool> *go;
  std::atomic<bool> *done;
};
void set_long(void *raw) {
  auto &a = args_of<SetArgs>(raw);
  if (a.go) wait_for([&] { return a.go->load(); });
  *a.to = a.value;
  if (a.done) a.done->store(true);
}
SITE(writer, set_long);

struct OrderArgs {
  long *total;
  std::atomic<bool> *writer_done;
  std::atomic<int> *early;
};
void add_one_after_writer(void *raw) {
  auto &a = args_of<OrderArgs>(raw);
  if (!a.writer_done->load()) a.early->fetch_add(1);
  *static_cast<long *>(nanort_reduction_private(a.total)) += 1;
}
SITE(ordered_adder, add_one_after_writer);

TEST(Reduction, ReducersRunAtOnceOnCopiesOfTheirOwnAndTheReaderAfterSeesTheSum) {
  long total = 5;
  std::atomic<int> running{0}, shared_seen{0};
  constexpr int kTasks = 64;
  constexpr long kIncrements = 20000;
  for (int i = 0; i < kTasks; ++i)
    spawn(counter, CountArgs{&total, kIncrements, i < kWorkers ? &running : nullptr, &shared_seen},
          {}, {{&total, sizeof total, &kSumLong}});
  long seen = -1;
  spawn(reader, ReadArgs{&total, &seen}, {{&total, sizeof total, NANORT_IN}});
  expect_taskwait_ok();
  EXPECT_EQ(shared_seen.load(), 0) << "a private copy was shared by tasks running at once";
  EXPECT_EQ(seen, 5 + kTasks * kIncrements) << "the reader ran before the combination";
  EXPECT_EQ(total, 5 + kTasks * kIncrements);
}

TEST(Reduction, ReducersWaitForTheWriterBeforeThemAndTheWriterAfterForThem) {
  long total = 0;
  std::atomic<bool> go{false}, writer_done{false};
  std::atomic<int> early{0};
  spawn(writer, SetArgs{&total, 1000, &go, &writer_done}, {{&total, sizeof total, NANORT_OUT}});
  constexpr int kTasks = 200;
  for (int i = 0; i < kTasks; ++i)
    spawn(ordered_adder, OrderArgs{&total, &writer_done, &early}, {},
          {{&total, sizeof total, &kSumLong}});
  long first = -1, second = -1;
  spawn(reader, ReadArgs{&total, &first}, {{&total, sizeof total, NANORT_IN}});
  spawn(reader, ReadArgs{&total, &second}, {{&total, sizeof total, NANORT_IN}});
  spawn(writer, SetArgs{&total, -7, nullptr, nullptr}, {{&total, sizeof total, NANORT_INOUT}});
  go.store(true);  // the reducers were all submitted while the writer was held
  expect_taskwait_ok();
  EXPECT_EQ(early.load(), 0) << "reducers ran before the writer before them ended";
  EXPECT_EQ(first, 1000 + kTasks);
  EXPECT_EQ(second, 1000 + kTasks);
  EXPECT_EQ(total, -7) << "the combination came after the writer behind the reduction";
}

TEST(Reduction, TaskwaitCombines) {
  long total = 1;
  std::atomic<int> shared_seen{0};
  for (int i = 0; i < 100; ++i)
    spawn(counter, CountArgs{&total, 1000, nullptr, &shared_seen}, {},
          {{&total, sizeof total, &kSumLong}});
  expect_taskwait_ok();
  EXPECT_EQ(total, 1 + 100 * 1000);
  // A new reduction after the taskwait starts from the combined value.
  for (int i = 0; i < 10; ++i)
    spawn(counter, CountArgs{&total, 1, nullptr, &shared_seen}, {},
          {{&total, sizeof total, &kSumLong}});
  expect_taskwait_ok();
  EXPECT_EQ(total, 1 + 100 * 1000 + 10);
  EXPECT_EQ(shared_seen.load(), 0);
}

// Reducers that come after every earlier one ended, with no other access between, go on in
// the same reduction (the domain keeps it open): the value is combined once, at the end.
struct TallyArgs {
  long *total;
  std::atomic<int> *ended;
};
void tally(void *raw) {
  auto &a = args_of<TallyArgs>(raw);
  *static_cast<long *>(nanort_reduction_private(a.total)) += 10;
  a.ended->fetch_add(1);
}
SITE(tallier, tally);

TEST(Reduction, LaterReducersJoinAReductionWhoseTasksAllEnded) {
  long total = 0;
  std::atomic<int> ended{0};
  for (int round = 1; round <= 5; ++round) {
    for (int i = 0; i < 8; ++i)
      spawn(tallier, TallyArgs{&total, &ended}, {}, {{&total, sizeof total, &kSumLong}});
    // An empty section names nothing and orders nothing.
    spawn(tallier, TallyArgs{&total, &ended}, {},
          {{&total + 1, 0, &kSumLong}, {&total, sizeof total, &kSumLong}});
    ASSERT_TRUE(wait_for([&] { return ended.load() == round * 9; }));
  }
  long seen = -1;
  spawn(reader, ReadArgs{&total, &seen}, {{&total, sizeof total, NANORT_IN}});
  expect_taskwait_ok();
  EXPECT_EQ(seen, 5 * 9 * 10);
}

TEST(Reduction, TaskwaitOnTheVariableCombinesIt) {
  long total = 0;
  std::atomic<int> shared_seen{0};
  for (int i = 0; i < 50; ++i)
    spawn(counter, CountArgs{&total, 100, nullptr, &shared_seen}, {},
          {{&total, sizeof total, &kSumLong}});
  const void *addresses[] = {&total};
  const std::size_t sizes[] = {sizeof total};
  ASSERT_EQ(nanort_taskwait_on(addresses, sizes, 1), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(total, 50 * 100);
  expect_taskwait_ok();
  EXPECT_EQ(total, 50 * 100);
}

// A reduction with another operator on the same variable waits for the first one's combination.
struct ScaleArgs {
  long *total;
};
void times_two(void *raw) {
  *static_cast<long *>(nanort_reduction_private(args_of<ScaleArgs>(raw).total)) *= 2;
}
SITE(doubler, times_two);

TEST(Reduction, AnotherOperatorStartsANewReductionAfterTheCombination) {
  long total = 3;
  std::atomic<int> shared_seen{0};
  for (int i = 0; i < 40; ++i)
    spawn(counter, CountArgs{&total, 10, nullptr, &shared_seen}, {},
          {{&total, sizeof total, &kSumLong}});
  for (int i = 0; i < 5; ++i)
    spawn(doubler, ScaleArgs{&total}, {}, {{&total, sizeof total, &kProductLong}});
  for (int i = 0; i < 40; ++i)
    spawn(counter, CountArgs{&total, 1, nullptr, &shared_seen}, {},
          {{&total, sizeof total, &kSumLong}});
  expect_taskwait_ok();
  EXPECT_EQ(total, (3 + 40 * 10) * 32 + 40);
}

// ---------------------------------------------------------------------------------------------
// Arrays: a histogram over an array section, and parts of it

constexpr int kBins = 16;
struct HistogramArgs {
  int *hist;     // the original's first element of the section the task names
  int first;     // its first bin
  const unsigned *data;
  int count;
};
void histogram(void *raw) {
  auto &a = args_of<HistogramArgs>(raw);
  int *bins = static_cast<int *>(nanort_reduction_private(a.hist));
  for (int i = 0; i < a.count; ++i) {
    const int bin = static_cast<int>(a.data[i] % kBins);
    if (bin >= a.first) bins[bin - a.first] += 1;  // (a section's task counts its bins only)
  }
}
SITE(binner, histogram);

struct BinCopyArgs {
  const int *from;
  int *into;
};
void copy_bins(void *raw) {
  auto &a = args_of<BinCopyArgs>(raw);
  std::memcpy(a.into, a.from, kBins * sizeof(int));
}
SITE(bin_reader, copy_bins);

TEST(Reduction, HistogramOverAnArraySectionAndSectionsInsideIt) {
  std::vector<unsigned> data(100000);
  unsigned seed = 12345;
  for (unsigned &value : data) value = seed = seed * 1103515245u + 12345u;
  int hist[2 + kBins + 2];
  for (int &bin : hist) bin = 7;  // the bins outside the section keep their value
  int *section = hist + 2;
  constexpr int kChunk = 1000;
  for (std::size_t start = 0; start < data.size(); start += kChunk) {
    // Every third task names the upper half only (a section inside the reduction's).
    const int first = (start / kChunk) % 3 == 2 ? kBins / 2 : 0;
    spawn(binner, HistogramArgs{section + first, first, data.data() + start, kChunk}, {},
          {{section + first, (kBins - first) * sizeof(int), &kSumInt}});
  }
  int seen[kBins];
  spawn(bin_reader, BinCopyArgs{section, seen}, {{section, sizeof seen, NANORT_IN}});
  expect_taskwait_ok();
  int expected[kBins];
  for (int &bin : expected) bin = 7;
  for (std::size_t start = 0; start < data.size(); start += kChunk) {
    const int first = (start / kChunk) % 3 == 2 ? kBins / 2 : 0;
    for (int i = 0; i < kChunk; ++i) {
      const int bin = static_cast<int>(data[start + i] % kBins);
      if (bin >= first) ++expected[bin];
    }
  }
  for (int b = 0; b < kBins; ++b) EXPECT_EQ(seen[b], expected[b]) << "bin " << b;
  EXPECT_EQ(hist[0], 7);
  EXPECT_EQ(hist[1], 7);
  EXPECT_EQ(hist[2 + kBins], 7);
  EXPECT_EQ(hist[3 + kBins], 7);
}

// ---------------------------------------------------------------------------------------------
// Every built-in operator on a few types

template <class T>
struct FoldArgs {
  T *target;
  T value;
  int op;
};
template <class T>
void fold(void *raw) {
  auto &a = args_of<FoldArgs<T>>(raw);
  T *mine = static_cast<T *>(nanort_reduction_private(a.target));
  switch (a.op) {
    case NANORT_REDUCE_SUM: *mine = *mine + a.value; break;
    case NANORT_REDUCE_PRODUCT: *mine = *mine * a.value; break;
    case NANORT_REDUCE_MIN: *mine = a.value < *mine ? a.value : *mine; break;
    case NANORT_REDUCE_MAX: *mine = *mine < a.value ? a.value : *mine; break;
    case NANORT_REDUCE_AND: *mine = *mine && a.value; break;
    case NANORT_REDUCE_OR: *mine = *mine || a.value; break;
    default:
      if constexpr (std::is_integral_v<T>) {
        if (a.op == NANORT_REDUCE_BIT_AND) *mine = *mine & a.value;
        if (a.op == NANORT_REDUCE_BIT_OR) *mine = *mine | a.value;
        if (a.op == NANORT_REDUCE_BIT_XOR) *mine = *mine ^ a.value;
      }
  }
}
SITE(fold_int, fold<int>);
SITE(fold_unsigned, fold<unsigned>);
SITE(fold_double, fold<double>);
SITE(fold_float, fold<float>);

// Reduces 'values' into 'start' with operator 'op' in tasks, and sequentially; both results.
template <class T>
std::pair<T, T> reduce_both(const nanort_task_site &site, nanort_reduction_type type, int op,
                            T start, const std::vector<T> &values) {
  const nanort_reduction_op rop{NANORT_ABI_VERSION, static_cast<uint32_t>(op),
                                static_cast<uint32_t>(type), sizeof(T), nullptr, nullptr,
                                nullptr, nullptr};
  T result = start;
  for (const T &value : values)
    spawn(site, FoldArgs<T>{&result, value, op}, {}, {{&result, sizeof result, &rop}});
  expect_taskwait_ok();
  T sequential = start;
  for (const T &value : values) {
    T one = sequential;
    switch (op) {
      case NANORT_REDUCE_SUM: one = one + value; break;
      case NANORT_REDUCE_PRODUCT: one = one * value; break;
      case NANORT_REDUCE_MIN: one = value < one ? value : one; break;
      case NANORT_REDUCE_MAX: one = one < value ? value : one; break;
      case NANORT_REDUCE_AND: one = one && value; break;
      case NANORT_REDUCE_OR: one = one || value; break;
      default:
        if constexpr (std::is_integral_v<T>) {
          if (op == NANORT_REDUCE_BIT_AND) one = one & value;
          if (op == NANORT_REDUCE_BIT_OR) one = one | value;
          if (op == NANORT_REDUCE_BIT_XOR) one = one ^ value;
        }
    }
    sequential = one;
  }
  return {result, sequential};
}

TEST(Reduction, EveryBuiltInOperatorGivesTheSequentialResult) {
  std::vector<int> ints;
  for (int i = 0; i < 300; ++i) ints.push_back((i * 7919) % 1001 - 500);
  for (int op : {NANORT_REDUCE_SUM, NANORT_REDUCE_MIN, NANORT_REDUCE_MAX, NANORT_REDUCE_BIT_AND,
                 NANORT_REDUCE_BIT_OR, NANORT_REDUCE_BIT_XOR}) {
    auto [tasks, sequential] = reduce_both(fold_int, NANORT_TYPE_INT, op, 3, ints);
    EXPECT_EQ(tasks, sequential) << "int operator " << op;
  }
  // min and max start from the identity: a start beyond every value stays.
  EXPECT_EQ(reduce_both(fold_int, NANORT_TYPE_INT, NANORT_REDUCE_MIN, -1000, ints).first, -1000);
  EXPECT_EQ(reduce_both(fold_int, NANORT_TYPE_INT, NANORT_REDUCE_MAX, 1000, ints).first, 1000);
  std::vector<unsigned> bits;
  for (unsigned i = 0; i < 200; ++i) bits.push_back(~(1u << (i % 32)) | (i % 5 == 0 ? ~0u : 0u));
  for (int op : {NANORT_REDUCE_BIT_AND, NANORT_REDUCE_BIT_OR, NANORT_REDUCE_BIT_XOR}) {
    auto [tasks, sequential] = reduce_both(fold_unsigned, NANORT_TYPE_UNSIGNED_INT, op, 0xf0f0u,
                                           bits);
    EXPECT_EQ(tasks, sequential) << "unsigned operator " << op;
  }
  std::vector<int> truths(100, 1), one_false(100, 1), one_true(100, 0);
  one_false[57] = 0;
  one_true[23] = 5;
  EXPECT_EQ(reduce_both(fold_int, NANORT_TYPE_INT, NANORT_REDUCE_AND, 1, truths).first, 1);
  EXPECT_EQ(reduce_both(fold_int, NANORT_TYPE_INT, NANORT_REDUCE_AND, 1, one_false).first, 0);
  EXPECT_EQ(reduce_both(fold_int, NANORT_TYPE_INT, NANORT_REDUCE_OR, 0, one_true).first, 1);
  EXPECT_EQ(reduce_both(fold_int, NANORT_TYPE_INT, NANORT_REDUCE_OR, 0, truths).first, 1);
  EXPECT_EQ(reduce_both(fold_int, NANORT_TYPE_INT, NANORT_REDUCE_OR, 0,
                        std::vector<int>(50, 0)).first,
            0);
  std::vector<double> reals;
  for (int i = 0; i < 300; ++i) reals.push_back(((i * 37) % 101 - 50) * 0.25);  // exact sums
  for (int op : {NANORT_REDUCE_SUM, NANORT_REDUCE_MIN, NANORT_REDUCE_MAX}) {
    auto [tasks, sequential] = reduce_both(fold_double, NANORT_TYPE_DOUBLE, op, 0.5, reals);
    EXPECT_EQ(tasks, sequential) << "double operator " << op;
  }
  std::vector<double> factors(40, 2.0);
  factors[3] = 0.5;
  auto [product, sequential_product] =
      reduce_both(fold_double, NANORT_TYPE_DOUBLE, NANORT_REDUCE_PRODUCT, 3.0, factors);
  EXPECT_EQ(product, sequential_product);
  std::vector<float> floats{3.5f, -2.0f, 8.25f, -9.5f, 1.0f};
  EXPECT_EQ(reduce_both(fold_float, NANORT_TYPE_FLOAT, NANORT_REDUCE_MIN, FLT_MAX, floats).first,
            -9.5f);
  EXPECT_EQ(reduce_both(fold_float, NANORT_TYPE_FLOAT, NANORT_REDUCE_MAX, -FLT_MAX, floats).first,
            8.25f);
}

// ---------------------------------------------------------------------------------------------
// declare reduction: the user's initializer, combiner and destructor

struct Stats {
  double sum;
  long count;
  double largest;
};
std::atomic<int> stats_initialized{0}, stats_destroyed{0};
void stats_init(void *priv, const void *orig) {
  (void)orig;
  *static_cast<Stats *>(priv) = Stats{0.0, 0, -DBL_MAX};
  stats_initialized.fetch_add(1);
}
void stats_combine(void *out, const void *in) {
  auto *to = static_cast<Stats *>(out);
  const auto *from = static_cast<const Stats *>(in);
  to->sum += from->sum;
  to->count += from->count;
  if (from->largest > to->largest) to->largest = from->largest;
}
void stats_destroy(void *) { stats_destroyed.fetch_add(1); }
const nanort_reduction_op kStatsOp{NANORT_ABI_VERSION, NANORT_REDUCE_USER, 0, sizeof(Stats),
                                   stats_init, stats_combine, stats_destroy, "merge"};

struct SampleArgs {
  Stats *stats;
  double value;
};
void sample(void *raw) {
  auto &a = args_of<SampleArgs>(raw);
  Stats *mine = static_cast<Stats *>(nanort_reduction_private(a.stats));
  mine->sum += a.value;
  mine->count += 1;
  if (a.value > mine->largest) mine->largest = a.value;
}
SITE(sampler, sample);

TEST(Reduction, UserDefinedOperatorOverAnArrayOfStructs) {
  stats_initialized = 0;
  stats_destroyed = 0;
  Stats stats[3] = {{1.0, 1, 1.0}, {0.0, 0, -DBL_MAX}, {10.0, 2, 6.0}};
  Stats expected[3] = {stats[0], stats[1], stats[2]};
  for (int i = 0; i < 600; ++i) {
    const int which = i % 3;
    const double value = (i * 13) % 97 * 0.5;
    spawn(sampler, SampleArgs{&stats[which], value}, {}, {{stats, sizeof stats, &kStatsOp}});
    stats_combine(&expected[which], &(const Stats &)Stats{value, 1, value});
  }
  expect_taskwait_ok();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(stats[i].sum, expected[i].sum) << i;
    EXPECT_EQ(stats[i].count, expected[i].count) << i;
    EXPECT_EQ(stats[i].largest, expected[i].largest) << i;
  }
  // Each private copy's elements were initialized, combined and destroyed once.
  EXPECT_GT(stats_initialized.load(), 0);
  EXPECT_EQ(stats_initialized.load() % 3, 0);
  EXPECT_EQ(stats_destroyed.load(), stats_initialized.load());
}

// ---------------------------------------------------------------------------------------------
// Nesting: a reducer's children reduce into its private copy

struct NestArgs {
  long *total;
  int children;
};
void add_one(void *raw) { *static_cast<long *>(nanort_reduction_private(args_of<NestArgs>(raw).total)) += 1; }
SITE(leaf_adder, add_one);
void spawn_adders(void *raw) {
  auto &a = args_of<NestArgs>(raw);
  *static_cast<long *>(nanort_reduction_private(a.total)) += 100;
  for (int i = 0; i < a.children; ++i)
    spawn(leaf_adder, NestArgs{a.total, 0}, {}, {{a.total, sizeof(long), &kSumLong}});
  // No taskwait: the children are combined into this task's copy when it ends.
}
SITE(parent_adder, spawn_adders);

TEST(Reduction, ChildrenOfAReducerTakePartInItsReduction) {
  long total = 0;
  for (int i = 0; i < 30; ++i)
    spawn(parent_adder, NestArgs{&total, 20}, {}, {{&total, sizeof total, &kSumLong}});
  long seen = -1;
  spawn(reader, ReadArgs{&total, &seen}, {{&total, sizeof total, NANORT_IN}});
  expect_taskwait_ok();
  EXPECT_EQ(seen, 30 * (100 + 20));
}

struct WrongNestArgs {
  long *total;
  nanort_status *status;
  std::string *message;
};
void nest_with_product(void *raw) {
  auto &a = args_of<WrongNestArgs>(raw);
  nanort_task *child = nanort_task_create(&leaf_adder, sizeof(NestArgs));
  const NestArgs args{a.total, 0};
  std::memcpy(nanort_task_args(child), &args, sizeof args);
  nanort_task_set_location(child, "nest.c", 4);
  *a.status = nanort_task_reduction(child, a.total, sizeof(long), &kProductLong);
  if (*a.status == NANORT_SUCCESS) *a.status = nanort_task_submit(child);
  else nanort_task_discard(child);
  *a.message = nanort_last_error();
}
SITE(wrong_nester, nest_with_product);

TEST(Reduction, AChildReductionWithAnotherOperatorInsideTheParentsIsRefused) {
  long total = 0;
  nanort_status status = NANORT_SUCCESS;
  std::string message;
  spawn(wrong_nester, WrongNestArgs{&total, &status, &message}, {},
        {{&total, sizeof total, &kSumLong}});
  expect_taskwait_ok();
  EXPECT_EQ(status, NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(message, "task 'leaf_adder' (nest.c:4): the reduction * on long on 8 bytes at " +
                         hex(&total) +
                         " is inside the reduction + on long of its parent, which has another "
                         "operator");
}

// In a final task, the children run at once, in program order, on the parent's copy.
struct FinalArgs {
  long *total;
};
void final_parent(void *raw) {
  auto &a = args_of<FinalArgs>(raw);
  for (int i = 0; i < 10; ++i)
    spawn(leaf_adder, NestArgs{a.total, 0}, {}, {{a.total, sizeof(long), &kSumLong}});
  *static_cast<long *>(nanort_reduction_private(a.total)) *= 1;  // (the same copy)
}
SITE(finalizer, final_parent);

TEST(Reduction, ChildrenOfAFinalReducerWorkOnItsCopy) {
  long total = 2;
  for (int i = 0; i < 8; ++i) {
    nanort_task *t = make_task(finalizer, FinalArgs{&total}, {}, {{&total, sizeof total, &kSumLong}});
    nanort_task_set_final(t, 1);
    ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS) << nanort_last_error();
  }
  expect_taskwait_ok();
  EXPECT_EQ(total, 2 + 8 * 10);
}

TEST(Reduction, AnUndeferredReducerRunsAtOnceInTheReduction) {
  long total = 0;
  std::atomic<int> shared_seen{0};
  for (int i = 0; i < 20; ++i) {
    nanort_task *t = make_task(counter, CountArgs{&total, 3, nullptr, &shared_seen}, {},
                               {{&total, sizeof total, &kSumLong}});
    if (i % 4 == 0) nanort_task_set_if(t, 0);
    ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS) << nanort_last_error();
  }
  expect_taskwait_ok();
  EXPECT_EQ(total, 60);
}

// ---------------------------------------------------------------------------------------------
// Failures

void fail_reducer(void *raw) {
  *static_cast<long *>(nanort_reduction_private(args_of<CountArgs>(raw).total)) += 1000;
  nanort_task_fail("gave up", nullptr, nullptr);
}
SITE_AT(failing_reducer, fail_reducer, "red.c", 10);
SITE_AT(late_reader, read_long, "red.c", 20);

TEST(Reduction, AFailedReducerLeavesTheOriginalAndItsSuccessorsAreNotRun) {
  long total = 4;
  std::atomic<int> shared_seen{0};
  for (int i = 0; i < 10; ++i)
    spawn(counter, CountArgs{&total, 1, nullptr, &shared_seen}, {},
          {{&total, sizeof total, &kSumLong}});
  spawn(failing_reducer, CountArgs{&total, 0, nullptr, &shared_seen}, {},
        {{&total, sizeof total, &kSumLong}});
  long seen = -1;
  spawn(late_reader, ReadArgs{&total, &seen}, {{&total, sizeof total, NANORT_IN}});
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_TASK_FAILED);
  EXPECT_EQ(std::string(nanort_last_error()),
            "task 'failing_reducer' (red.c:10) gave up\n"
            "task 'late_reader' (red.c:20) was not run: it depends on task 'failing_reducer' "
            "(red.c:10), which failed");
  EXPECT_EQ(seen, -1);
  EXPECT_EQ(total, 4) << "a reduction with a failed task was combined";
  // The next reduction on it goes on as usual.
  for (int i = 0; i < 10; ++i)
    spawn(counter, CountArgs{&total, 1, nullptr, &shared_seen}, {},
          {{&total, sizeof total, &kSumLong}});
  expect_taskwait_ok();
  EXPECT_EQ(total, 14);
}

// ---------------------------------------------------------------------------------------------
// OpenMP: taskgroup task_reduction with in_reduction, also from tasks deep inside

struct InReductionArgs {
  long *total;
  int depth;
};
extern const nanort_task_site tree;
void in_reduction_tree(void *raw) {
  auto &a = args_of<InReductionArgs>(raw);
  *static_cast<long *>(nanort_reduction_private(a.total)) += 1;
  for (int i = 0; a.depth > 0 && i < 3; ++i) {
    nanort_task *child = nanort_task_create(&tree, sizeof(InReductionArgs));
    const InReductionArgs args{a.total, a.depth - 1};
    std::memcpy(nanort_task_args(child), &args, sizeof args);
    if (nanort_task_in_reduction(child, a.total, sizeof(long), &kSumLong) != NANORT_SUCCESS) {
      nanort_task_discard(child);
      nanort_task_fail(nanort_last_error(), nullptr, nullptr);
      return;
    }
    nanort_task_submit(child);
  }
}
const nanort_task_impl tree_impl{NANORT_DEVICE_SMP, in_reduction_tree, nullptr, nullptr, nullptr,
                                 0};
const nanort_task_site tree{NANORT_ABI_VERSION, "tree", __FILE__, __LINE__, &tree_impl, 1, nullptr};

void spawn_in_reduction(long *total, int depth) {
  nanort_task *t = make_task(tree, InReductionArgs{total, depth});
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(nanort_task_in_reduction(t, total, sizeof(long), &kSumLong), NANORT_SUCCESS)
      << nanort_last_error();
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS) << nanort_last_error();
}

TEST(Reduction, TaskgroupReductionWithInReductionTasksAtEveryDepth) {
  long total = 10, untouched = 0;
  ASSERT_EQ(nanort_taskgroup_begin(), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskgroup_reduction(&total, sizeof total, &kSumLong), NANORT_SUCCESS)
      << nanort_last_error();
  for (int i = 0; i < 20; ++i) spawn_in_reduction(&total, 2);  // 1 + 3 + 9 tasks each
  ASSERT_EQ(nanort_taskgroup_end(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(total, 10 + 20 * 13) << "not combined by the end of the taskgroup";
  // Nested taskgroups: the inner one's reduction combines at its end, the outer one's later.
  ASSERT_EQ(nanort_taskgroup_begin(), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskgroup_reduction(&total, sizeof total, &kSumLong), NANORT_SUCCESS);
  spawn_in_reduction(&total, 1);
  ASSERT_EQ(nanort_taskgroup_begin(), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskgroup_reduction(&untouched, sizeof untouched, &kSumLong), NANORT_SUCCESS);
  spawn_in_reduction(&untouched, 0);
  spawn_in_reduction(&total, 0);  // the outer taskgroup's
  ASSERT_EQ(nanort_taskgroup_end(), NANORT_SUCCESS);
  EXPECT_EQ(untouched, 1);
  ASSERT_EQ(nanort_taskgroup_end(), NANORT_SUCCESS);
  EXPECT_EQ(total, 10 + 20 * 13 + 4 + 1);
  expect_taskwait_ok();
}

TEST(Reduction, InReductionOutsideAnyTaskgroupReductionIsRefused) {
  long total = 0;
  nanort_task *t = make_task(tree, InReductionArgs{&total, 0});
  nanort_task_set_location(t, "omp.c", 7);
  EXPECT_EQ(nanort_task_in_reduction(t, &total, sizeof total, &kSumLong),
            NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(nanort_last_error()),
            "task 'tree' (omp.c:7): the in_reduction on 8 bytes at " + hex(&total) +
                " is in no reduction of an enclosing taskgroup");
  ASSERT_EQ(nanort_taskgroup_begin(), NANORT_SUCCESS);
  ASSERT_EQ(nanort_taskgroup_reduction(&total, sizeof total, &kSumLong), NANORT_SUCCESS);
  EXPECT_EQ(nanort_task_in_reduction(t, &total, sizeof total, &kProductLong),
            NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(nanort_last_error()),
            "task 'tree' (omp.c:7): the in_reduction * on long on 8 bytes at " + hex(&total) +
                " is inside the taskgroup's reduction + on long, another operator");
  nanort_task_discard(t);
  ASSERT_EQ(nanort_taskgroup_end(), NANORT_SUCCESS);
  EXPECT_EQ(nanort_taskgroup_end(), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(nanort_last_error()),
            "nanort_taskgroup_end: no taskgroup is open in the calling task "
            "(nanort_taskgroup_begin and its end must be called by the same task)");
}

// ---------------------------------------------------------------------------------------------
// Invalid arguments

SITE_AT(checked, read_long, "bad.c", 3);

TEST(Reduction, InvalidReductionsAreRefusedWithTheReason) {
  double real = 0;
  long values[4] = {};
  auto refused = [](nanort_status status) {
    EXPECT_EQ(status, NANORT_ERROR_INVALID_ARGUMENT);
    return std::string(nanort_last_error());
  };
  nanort_task *t = make_task(checked, ReadArgs{nullptr, nullptr});
  const nanort_reduction_op bit_and_double{NANORT_ABI_VERSION, NANORT_REDUCE_BIT_AND,
                                           NANORT_TYPE_DOUBLE, 0, nullptr, nullptr, nullptr,
                                           nullptr};
  EXPECT_EQ(refused(nanort_task_reduction(t, &real, sizeof real, &bit_and_double)),
            "task 'checked' (bad.c:3): reduction: the reduction operator & is not defined for "
            "double");
  const nanort_reduction_op no_combiner{NANORT_ABI_VERSION, NANORT_REDUCE_USER, 0, 8, nullptr,
                                        nullptr, nullptr, "merge"};
  EXPECT_EQ(refused(nanort_task_reduction(t, &real, sizeof real, &no_combiner)),
            "task 'checked' (bad.c:3): reduction: the user-defined reduction operator has no "
            "combiner");
  const nanort_reduction_op old_abi{NANORT_ABI_VERSION + 100, NANORT_REDUCE_SUM,
                                    NANORT_TYPE_LONG, 0, nullptr, nullptr, nullptr, nullptr};
  EXPECT_EQ(refused(nanort_task_reduction(t, values, sizeof values, &old_abi)),
            "task 'checked' (bad.c:3): reduction: the reduction operator was compiled for "
            "nanort ABI " + std::to_string(NANORT_ABI_VERSION + 100) +
                ", this runtime speaks ABI " + std::to_string(NANORT_ABI_VERSION));
  EXPECT_EQ(refused(nanort_task_reduction(t, values, 12, &kSumLong)),
            "task 'checked' (bad.c:3): the reduction + on long on 12 bytes is not a whole number "
            "of its 8-byte elements");
  EXPECT_EQ(refused(nanort_task_reduction(t, nullptr, 8, &kSumLong)),
            "task 'checked' (bad.c:3): reduction of a NULL address");
  ASSERT_EQ(nanort_task_reduction(t, values, 2 * sizeof(long), &kSumLong), NANORT_SUCCESS);
  EXPECT_EQ(refused(nanort_task_reduction(t, values + 1, 2 * sizeof(long), &kSumLong)),
            "task 'checked' (bad.c:3): the reduction on 16 bytes overlaps another reduction of "
            "the task");
  // An access of the task over the reduction's bytes: refused at submit.
  ASSERT_EQ(nanort_task_access(t, values + 1, sizeof(long), NANORT_IN), NANORT_SUCCESS);
  EXPECT_EQ(refused(nanort_task_submit(t)),
            "task 'checked' (bad.c:3): the reduction on 16 bytes at " + hex(values) +
                " overlaps another access of the task");
  expect_taskwait_ok();
  // Outside a task: no private copy.
  EXPECT_EQ(nanort_reduction_private(values), nullptr);
  EXPECT_EQ(std::string(nanort_last_error()),
            "nanort_reduction_private was called outside a task body: only a task that takes "
            "part in a reduction has a private copy");
}

std::string private_error;
void private_of_other(void *raw) {
  auto &a = args_of<ReadArgs>(raw);
  if (nanort_reduction_private(a.from) == nullptr) private_error = nanort_last_error();
}
SITE_AT(asker, private_of_other, "ask.c", 5);

TEST(Reduction, PrivateCopyOfAnAddressTheTaskDoesNotReduceIsAnError) {
  long total = 0, other = 0;
  spawn(asker, ReadArgs{&other, nullptr}, {}, {{&total, sizeof total, &kSumLong}});
  expect_taskwait_ok();
  EXPECT_EQ(private_error, "nanort_reduction_private: task 'asker' (ask.c:5) takes part in no "
                           "reduction on the byte at " + hex(&other));
}

}  // namespace
