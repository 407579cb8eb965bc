// wake_latency: how long a task waits to start when every worker sleeps, for nanort and for a
// oneTBB arena, side by side. Each round idles for a while (so that workers go to sleep),
// then submits one task and measures the time until its body starts.
//
//   wake_latency [rounds] [idle_ms]      defaults: 300 2
#include <nanort/nanort.hpp>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Summary {
  double median_us, p90_us, max_us;
};

// 'submit(start, started)' must start a task that stores the elapsed ns into 'started'.
Summary measure(int rounds, int idle_ms,
                const std::function<void(Clock::time_point, std::atomic<long> &)> &submit,
                const std::function<void()> &wait) {
  std::vector<double> latencies;
  for (int i = 0; i < rounds; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
    std::atomic<long> started{0};
    submit(Clock::now(), started);
    while (started.load() == 0) {
    }
    latencies.push_back(started.load() * 1e-3);
    wait();
  }
  std::sort(latencies.begin(), latencies.end());
  return {latencies[latencies.size() / 2], latencies[latencies.size() * 9 / 10],
          latencies.back()};
}

long elapsed_ns(Clock::time_point start) {
  return std::max<long>(1, std::chrono::duration_cast<std::chrono::nanoseconds>(
                               Clock::now() - start).count());
}

}  // namespace

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 300;
  const int idle_ms = argc > 2 ? std::atoi(argv[2]) : 2;
  const int threads = static_cast<int>(std::thread::hardware_concurrency());

  // Start both systems before measuring: the first task would otherwise pay for start-up
  // (hwloc's topology, thread creation), which is not a wake-up.
  if (nanort_init() != NANORT_SUCCESS) {
    std::fprintf(stderr, "wake_latency: %s\n", nanort_last_error());
    return 1;
  }
  Summary ours = measure(
      rounds, idle_ms,
      [](Clock::time_point start, std::atomic<long> &started) {
        nanort::task("wake").spawn([start, &started] { started = elapsed_ns(start); });
      },
      [] { nanort::taskwait(); });
  nanort_shutdown();

  tbb::task_arena arena(threads, 1);
  arena.initialize();
  arena.enqueue([] {});
  Summary tbb = measure(
      rounds, idle_ms,
      [&arena](Clock::time_point start, std::atomic<long> &started) {
        arena.enqueue([start, &started] { started = elapsed_ns(start); });
      },
      [] {});

  std::printf("wake-up latency after %d ms idle, %d rounds, %d threads (us)\n", idle_ms, rounds,
              threads);
  std::printf("  %-22s %10s %10s %10s\n", "", "median", "p90", "max");
  std::printf("  %-22s %10.1f %10.1f %10.1f\n", "nanort (futex)", ours.median_us, ours.p90_us,
              ours.max_us);
  std::printf("  %-22s %10.1f %10.1f %10.1f\n", "oneTBB arena.enqueue", tbb.median_us,
              tbb.p90_us, tbb.max_us);
  return 0;
}
