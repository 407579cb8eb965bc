// nanort_shutdown: waits for every task, reports failures nobody collected, and stops the
// runtime for good. One test per process (gtest_discover_tests), since the runtime does not
// start again in a process that stopped it.
#include <nanort/nanort.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "test_support.hpp"

namespace {

struct SlowArgs {
  long *x;
  long value;
};
void slow_set(void *p) {
  auto *a = static_cast<SlowArgs *>(p);
  nanort_test::sleep_ms(30);
  *a->x = *a->x * 10 + a->value;
}
std::atomic<int> destroyed{0};
void count_destroy(void *) { ++destroyed; }
const nanort_task_impl slow_impl{NANORT_DEVICE_SMP, slow_set, nullptr, nullptr, nullptr, 0};
const nanort_task_site slow_site{NANORT_ABI_VERSION, "slow", __FILE__, __LINE__, &slow_impl, 1,
                                 &count_destroy};

void throw_error(void *) { throw std::runtime_error("nobody listens"); }
const nanort_task_impl thrower_impl{NANORT_DEVICE_SMP, throw_error, nullptr, nullptr, nullptr, 0};
const nanort_task_site thrower_site{NANORT_ABI_VERSION, "unheard", "lost.c", 5, &thrower_impl, 1,
                                    nullptr};

// The runtime stops once per process: a second case in the same process (the executable run
// by hand, not by ctest) has nothing left to test.
bool runtime_used = false;
#define NEEDS_FRESH_PROCESS()                                                       \
  do {                                                                               \
    if (runtime_used) GTEST_SKIP() << "needs a process of its own (ctest runs each case alone)"; \
    runtime_used = true;                                                             \
  } while (0)

nanort_task *make_slow(long *x, long value) {
  nanort_task *t = nanort_task_create(&slow_site, sizeof(SlowArgs));
  EXPECT_NE(t, nullptr) << nanort_last_error();
  if (!t) return nullptr;
  SlowArgs args{x, value};
  std::memcpy(nanort_task_args(t), &args, sizeof args);
  EXPECT_EQ(nanort_task_access(t, x, sizeof *x, NANORT_INOUT), NANORT_SUCCESS);
  return t;
}

TEST(Shutdown, WaitsForEveryTaskAndThenRefusesWork) {
  NEEDS_FRESH_PROCESS();
  long x = 0;
  destroyed = 0;
  for (int i = 1; i <= 5; ++i) ASSERT_EQ(nanort_task_submit(make_slow(&x, i)), NANORT_SUCCESS);
  // No taskwait: shutdown waits.
  ASSERT_EQ(nanort_shutdown(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(x, 12345);
  EXPECT_EQ(destroyed, 5);

  // After shutdown: nothing restarts, every call says so.
  EXPECT_EQ(nanort_shutdown(), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_init(), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_STRNE(nanort_last_error(), "");
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nanort_task_create(&slow_site, 16), nullptr);
  EXPECT_STRNE(nanort_last_error(), "");
  EXPECT_EQ(nanort_device_count(NANORT_DEVICE_SMP), -1);
}

TEST(Shutdown, ATaskCreatedBeforeAndSubmittedAfterIsStillConsumed) {
  NEEDS_FRESH_PROCESS();
  long x = 0;
  destroyed = 0;
  nanort_task *t = make_slow(&x, 1);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(nanort_shutdown(), NANORT_SUCCESS);
  // "Hands the task to the runtime and consumes the handle, whatever the outcome."
  EXPECT_EQ(nanort_task_submit(t), NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(x, 0);
  EXPECT_EQ(destroyed, 1) << "the handle was not consumed: its argument block was never released";
}

TEST(Shutdown, ReportsFailuresThatNoTaskwaitCollected) {
  NEEDS_FRESH_PROCESS();
  nanort_task *t = nanort_task_create(&thrower_site, 0);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  testing::internal::CaptureStderr();
  const nanort_status status = nanort_shutdown();
  const std::string err = testing::internal::GetCapturedStderr();
  // Stopped all the same, but a failure nobody collected is not a success.
  EXPECT_EQ(status, NANORT_ERROR_TASK_FAILED);
  EXPECT_NE(std::string(nanort_last_error()).find("no taskwait collected"), std::string::npos)
      << nanort_last_error();
  EXPECT_NE(err.find("not collected"), std::string::npos) << err;
  EXPECT_NE(err.find("'unheard' (lost.c:5)"), std::string::npos) << err;
  EXPECT_NE(err.find("nobody listens"), std::string::npos) << err;
}

// A program thread that made tasks and ended without waiting for them: the shutdown waits for
// them from another thread, and takes over the counts that thread's implicit task holds ahead
// for children it did not make (Runtime::count_child). The two threads share no ordering here
// (a relaxed flag): the runtime's own state must not need one (TSan reported the counts read
// by the shutdown as a race with the ended thread's writes, issue 20).
TEST(Shutdown, WaitsForTheTasksOfAThreadThatEndedWithoutWaiting) {
  NEEDS_FRESH_PROCESS();
  constexpr int kTasks = 100;  // (not a multiple of the batch of counts taken ahead)
  static std::atomic<int> ran{0};
  const nanort_task_impl impl{NANORT_DEVICE_SMP,
                              [](void *) { ran.fetch_add(1, std::memory_order_relaxed); },
                              nullptr, nullptr, nullptr, 0};
  const nanort_task_site site{NANORT_ABI_VERSION, "left", __FILE__, __LINE__, &impl, 1, nullptr};
  std::atomic<bool> made{false};
  std::thread creator([&] {
    for (int i = 0; i < kTasks; ++i) {
      nanort_task *t = nanort_task_create(&site, 0);
      ASSERT_NE(t, nullptr) << nanort_last_error();
      ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
    }
    made.store(true, std::memory_order_relaxed);
  });
  ASSERT_TRUE(nanort_test::wait_for([&] { return made.load(std::memory_order_relaxed); }));
  EXPECT_EQ(nanort_shutdown(), NANORT_SUCCESS) << nanort_last_error();
  EXPECT_EQ(ran.load(), kTasks);
  creator.join();
}

// A CPU worker that just ran a task keeps polling for more for NANORT_SPIN_US. Shutting down
// in that window must still be safe: the runtime may go only once its workers have left it.
TEST(Shutdown, RightAfterAWorkerRanATask) {
  NEEDS_FRESH_PROCESS();
  setenv("NANORT_SPIN_US", "100000", 1);  // before the runtime starts: 100 ms of polling
  std::atomic<bool> ran{false};
  const nanort_task_impl impl{NANORT_DEVICE_SMP,
                              [](void *p) { (*static_cast<std::atomic<bool> **>(p))->store(true); },
                              nullptr, nullptr, nullptr, 0};
  const nanort_task_site site{NANORT_ABI_VERSION, "quick", __FILE__, __LINE__, &impl, 1, nullptr};
  nanort_task *t = nanort_task_create(&site, sizeof(void *));
  ASSERT_NE(t, nullptr) << nanort_last_error();
  std::atomic<bool> *flag = &ran;
  std::memcpy(nanort_task_args(t), &flag, sizeof flag);
  ASSERT_EQ(nanort_task_submit(t), NANORT_SUCCESS);
  // This thread never waits in the runtime, so the worker ran it and is polling now.
  ASSERT_TRUE(nanort_test::wait_for([&] { return ran.load(); }));
  ASSERT_EQ(nanort_shutdown(), NANORT_SUCCESS) << nanort_last_error();
  nanort_test::sleep_ms(300);  // the worker's polling ends in here
  SUCCEED();
}

}  // namespace
