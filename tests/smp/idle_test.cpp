// Idle workers sleep: a program that waits (on I/O, on a device, on a long task) burns no CPU
// in the runtime's threads. Measured as process CPU time over a wall-clock interval, with a
// generous bound: polling for NANORT_SPIN_US (50 us) after each event is expected, burning a
// core for the whole interval is not.
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

constexpr auto kInterval = std::chrono::milliseconds(400);
constexpr double kMostCpuSeconds = 0.08;  // 20% of one core over the interval

void run_some_tasks() {
  std::atomic<int> count{0};
  for (int i = 0; i < 2000; ++i) nanort::task("warm").spawn([&count] { ++count; });
  nanort::taskwait();
  ASSERT_EQ(count.load(), 2000);
}

TEST(Idle, WorkersSleepWhileTheProgramDoesSomethingElse) {
  run_some_tasks();
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(kInterval);
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, kMostCpuSeconds) << "CPU seconds used by an idle runtime in 0.4 s";
}

TEST(Idle, TaskwaitOnALongTaskDoesNotSpin) {
  run_some_tasks();
  const double before = process_cpu_seconds();
  nanort::task("sleeper").spawn([] { std::this_thread::sleep_for(kInterval); });
  nanort::taskwait();
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, kMostCpuSeconds) << "CPU seconds used while taskwait waited 0.4 s";
}

}  // namespace
