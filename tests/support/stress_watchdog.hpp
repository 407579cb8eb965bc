// StressWatchdog: ends a stress test that stopped making progress, with the seed to rerun it,
// instead of letting it hang until ctest's timeout says nothing useful.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

class StressWatchdog {
 public:
  explicit StressWatchdog(int seconds) : seconds_(seconds), thread_([this] { watch(); }) {}
  ~StressWatchdog() {
    stop_ = true;
    thread_.join();
  }
  StressWatchdog(const StressWatchdog &) = delete;
  StressWatchdog &operator=(const StressWatchdog &) = delete;

  // The graph now running, its size (0: not known) and the count of task bodies it ran so
  // far; 'bodies' nullptr between graphs.
  void graph(std::uint64_t seed, std::uint32_t tasks, std::atomic<std::uint32_t> *bodies) {
    std::lock_guard<std::mutex> guard(mutex_);
    seed_ = seed;
    tasks_ = tasks;
    bodies_ = bodies;
  }

 private:
  void watch() {
    std::uint32_t last = ~0u;
    auto last_progress = std::chrono::steady_clock::now();
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::lock_guard<std::mutex> guard(mutex_);
      const std::uint32_t now = bodies_ ? bodies_->load() : 0;
      if (now != last || !bodies_) {
        last = now;
        last_progress = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - last_progress >
                 std::chrono::seconds(seconds_)) {
        const auto seed = static_cast<unsigned long long>(seed_);
        if (tasks_ > 0)
          std::fprintf(stderr,
                       "FAILED: graph with seed %llu (%u tasks) made no progress for %d s: %u "
                       "task bodies ran, the runtime hangs (rerun with STRESS_SEED=%llu)\n",
                       seed, tasks_, seconds_, now, seed);
        else
          std::fprintf(stderr,
                       "FAILED: graph with seed %llu made no progress for %d s after %u task "
                       "bodies: the runtime hangs (rerun with STRESS_SEED=%llu)\n",
                       seed, seconds_, now, seed);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }

  const int seconds_;
  std::mutex mutex_;
  std::uint64_t seed_ = 0;
  std::uint32_t tasks_ = 0;
  std::atomic<std::uint32_t> *bodies_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};
