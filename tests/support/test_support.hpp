// Small helpers shared by the tests.
#pragma once

#include <chrono>
#include <thread>

namespace nanort_test {

// Polls 'condition' until it holds or 'timeout' passes; returns its last value. Tests use it
// where an event is expected from another thread: a missing event fails after the timeout
// instead of hanging the test.
template <class Condition>
bool wait_for(Condition condition, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int polls = 0;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    if (++polls < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace nanort_test
