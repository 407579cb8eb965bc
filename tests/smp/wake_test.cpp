// Sleeping workers are woken for new work even while another worker is busy in a long task
// body (a busy worker will not look at the queue soon). Three workers, no polling: one pool
// thread runs a long task, another sleeps; a task submitted meanwhile must start on the
// sleeper long before the long task ends.
#include <nanort/nanort.h>
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

TEST(Wake, ASleepingWorkerTakesWorkWhileAnotherIsBusy) {
  ASSERT_EQ(nanort_device_count(NANORT_DEVICE_SMP), 3);
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> long_started{false}, long_done{false}, short_ran{false};
    nanort::task("long").spawn([&] {
      long_started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      long_done = true;
    });
    while (!long_started) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the other worker sleep
    nanort::task("short").spawn([&] { short_ran = true; });
    const auto deadline = Clock::now() + std::chrono::milliseconds(1000);
    while (!short_ran && Clock::now() < deadline) std::this_thread::yield();
    EXPECT_TRUE(short_ran) << "round " << round << ": the short task did not start within 1 s";
    EXPECT_FALSE(long_done) << "round " << round;
    nanort::taskwait();
  }
}

TEST(Wake, ShutdownInsideATaskIsRefusedNotAHang) {
  nanort_status status = NANORT_SUCCESS;
  std::string message;
  nanort::task("stopper").spawn([&] {
    status = nanort_shutdown();
    message = nanort_last_error();
  });
  nanort::taskwait();
  EXPECT_EQ(status, NANORT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("stopper"), std::string::npos) << message;
}

}  // namespace
