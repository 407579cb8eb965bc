// The pool threads run tasks by themselves: a task submitted while the submitting thread is
// busy elsewhere (not waiting in the runtime) must run, on pool worker 0. With two workers
// the pool has a single thread, the configuration of a two-core machine.
#include <nanort/nanort.h>
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_support.hpp"

namespace {

TEST(Pool, ThePoolRunsTasksWhileTheCreatorIsBusy) {
  ASSERT_EQ(nanort_device_count(NANORT_DEVICE_SMP), 2);
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> worker{-2};
    nanort::task("on the pool").spawn([&worker] { worker = nanort_current_worker(); });
    // This thread is not in the runtime: only the pool thread can run it.
    ASSERT_TRUE(nanort_test::wait_for([&] { return worker.load() != -2; }))
        << "round " << round << ": the task did not run within 20 s";
    ASSERT_EQ(worker.load(), 0) << "round " << round << ": it ran elsewhere than on the pool thread";
    nanort::taskwait();
  }
}

}  // namespace
