// Sleeping workers are woken for new work even while another worker is busy in a long task
// body (a busy worker will not look at the queue soon). Three workers, no polling: one pool
// thread runs a task that holds it until the test lets it go, another sleeps; a task
// submitted meanwhile must start on the sleeper while the first one is still held (the test
// lets it go only once the second has run, or after 20 s).
#include <nanort/nanort.h>
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "test_support.hpp"

namespace {

using nanort_test::wait_for;

TEST(Wake, ASleepingWorkerTakesWorkWhileAnotherIsBusy) {
  ASSERT_EQ(nanort_device_count(NANORT_DEVICE_SMP), 3);
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> long_started{false}, release{false}, short_ran{false};
    nanort::task("long").spawn([&] {
      long_started = true;
      wait_for([&] { return release.load(); }, std::chrono::seconds(60));
    });
    ASSERT_TRUE(wait_for([&] { return long_started.load(); })) << "round " << round;
    // The other pool thread goes to sleep meanwhile (were it still awake, the test would only
    // be easier to pass).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    nanort::task("short").spawn([&] { short_ran = true; });
    // This thread is not in the runtime, and the long task holds its worker: only the sleeper
    // can run the short task.
    const bool ran_while_held = wait_for([&] { return short_ran.load(); });
    release = true;
    EXPECT_TRUE(ran_while_held) << "round " << round
                                << ": the short task did not start while the long one held its "
                                   "worker (20 s)";
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
