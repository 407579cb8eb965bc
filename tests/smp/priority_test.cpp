// Priorities, with one CPU worker (NANORT_CPU_WORKERS=1, see CMakeLists.txt): no thread runs
// tasks until this thread waits, and then it runs them one by one, in the scheduler's order.
#include <nanort/nanort.h>
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::vector<std::string> order;

void record(void *args) {
  const char *name = *static_cast<const char **>(args);
  order.emplace_back(name);
}
const nanort_task_impl record_impl{NANORT_DEVICE_SMP, record, nullptr, nullptr, nullptr, 0};
const nanort_task_site record_site{NANORT_ABI_VERSION, "record", __FILE__, __LINE__, &record_impl,
                                   1, nullptr};

void spawn(const char *name, int priority, const void *address = nullptr,
           nanort_access_mode mode = NANORT_IN) {
  nanort_task *t = nanort_task_create(&record_site, sizeof name);
  ASSERT_NE(t, nullptr) << nanort_last_error();
  std::memcpy(nanort_task_args(t), &name, sizeof name);
  if (priority) nanort_task_set_priority(t, priority);
  if (address) {
    ASSERT_EQ(nanort_task_access(t, address, 8, mode), NANORT_SUCCESS);
  }
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS) << nanort_last_error();
}

TEST(Priority, OneWorker) { EXPECT_EQ(nanort_device_count(NANORT_DEVICE_SMP), 1); }

TEST(Priority, HigherPriorityReadyTasksRunFirst) {
  order.clear();
  spawn("p0 first", 0);
  spawn("p5 first", 5);
  spawn("p-1", -1);
  spawn("p10", 10);
  spawn("p5 second", 5);
  spawn("p0 second", 0);
  spawn("p3", 3);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  // Highest first; among equals, first come first served.
  EXPECT_EQ(order, (std::vector<std::string>{"p10", "p5 first", "p5 second", "p3", "p0 first",
                                             "p0 second", "p-1"}));
}

TEST(Priority, ATaskThatBecomesReadyLaterStillGoesFirst) {
  order.clear();
  long x = 0;
  spawn("writer p0", 0, &x, NANORT_OUT);
  spawn("reader p10", 10, &x, NANORT_IN);  // ready only once the writer is done
  spawn("other p1", 1);
  spawn("other p0", 0);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(order, (std::vector<std::string>{"other p1", "writer p0", "reader p10", "other p0"}));
}

TEST(Priority, NegativePrioritiesRunLast) {
  order.clear();
  spawn("m5", -5);
  spawn("m1", -1);
  spawn("zero", 0);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(order, (std::vector<std::string>{"zero", "m1", "m5"}));
}

TEST(Priority, CxxHeaderPriority) {
  std::vector<int> seen;
  for (int p : {1, 4, 2, 8, 0, 6})
    nanort::task("p").priority(p).spawn([&seen, p] { seen.push_back(p); });
  nanort::taskwait();
  EXPECT_EQ(seen, (std::vector<int>{8, 6, 4, 2, 1, 0}));
}

// With one worker the waiting thread is the only one running tasks, nested ones included.
TEST(Priority, NestedTaskwaitWithOneWorker) {
  long total = 0;
  nanort::task("parent").out(&total).spawn([&total] {
    long parts[4] = {};
    for (int i = 0; i < 4; ++i)
      nanort::task("child").out(&parts[i]).spawn([&parts, i] { parts[i] = i + 1; });
    nanort::taskwait();
    total = parts[0] + parts[1] + parts[2] + parts[3];
  });
  nanort::taskwait();
  EXPECT_EQ(total, 10);
}

// A thread whose wait is over returns, instead of running first the chain of successors that
// the task it ran released to it: 'a' writes x and y, a chain of tasks follows it on y, and the
// taskwait on x is over once 'a' is done. (With one worker, nothing else runs the chain.)
TEST(Priority, AWaiterReturnsWhenItsWaitIsOverNotAfterTheChainItReleased) {
  long x = 0, y = 0;
  int chain_ran = 0;
  nanort::task("a").inout(&x).inout(&y).spawn([&] { x = 1, y = 1; });
  for (int i = 0; i < 50; ++i) nanort::task("chain").inout(&y).spawn([&] { ++y, ++chain_ran; });
  nanort::taskwait_on(&x);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(chain_ran, 0) << "the taskwait on x ran the chain behind 'a' before returning";
  nanort::taskwait();
  EXPECT_EQ(chain_ran, 50);
  EXPECT_EQ(y, 51);
}

// A task of negative priority is not run at once by its creator when many tasks are queued
// (work first): every task of priority 0 still runs before it.
TEST(Priority, WorkFirstDoesNotRunANegativePriorityTaskAheadOfTheQueue) {
  order.clear();
  for (int i = 0; i < 2000; ++i) spawn("p0", 0);
  spawn("p-1", -1);
  ASSERT_EQ(nanort_taskwait(), NANORT_SUCCESS) << nanort_last_error();
  ASSERT_EQ(order.size(), 2001u);
  EXPECT_EQ(order.back(), "p-1");
  EXPECT_EQ(order.front(), "p0");
}

}  // namespace
