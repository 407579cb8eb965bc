// SpinLock: guards the short critical sections of the dependency graph and the ready queue.
// Waiters spin on a plain load (no cache-line ping-pong), pause, and yield the core after a
// while so that a preempted holder on a small machine gets to run.
#pragma once

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NANORT_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define NANORT_CPU_RELAX() asm volatile("yield")
#else
#define NANORT_CPU_RELAX() ((void)0)
#endif

namespace nanort::rt {

class SpinLock {
 public:
  void lock() {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 128)
          NANORT_CPU_RELAX();
        else
          std::this_thread::yield();
      }
    }
  }
  bool try_lock() { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace nanort::rt
