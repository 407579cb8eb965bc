// IdleWaiters: lets threads that wait (in taskwait, for an undeferred task) sleep without
// missing the event that would let them go on: new ready work, or the thing they wait for.
//
// A sleeper announces itself, reads the epoch, re-checks its condition and only then sleeps on
// the epoch; a notifier changes the state first and bumps the epoch only when someone sleeps.
// With sequentially consistent operations one of the two always sees the other.
#pragma once

#include <atomic>
#include <cstdint>

namespace nanort::rt {

class IdleWaiters {
 public:
  template <class Condition>
  void sleep_unless(Condition condition) {
    sleepers_.fetch_add(1);
    const std::uint32_t epoch = epoch_.load();
    if (!condition()) epoch_.wait(epoch);
    sleepers_.fetch_sub(1);
  }

  void notify() {
    if (sleepers_.load() == 0) return;
    epoch_.fetch_add(1);
    epoch_.notify_all();
  }

 private:
  std::atomic<int> sleepers_{0};
  std::atomic<std::uint32_t> epoch_{0};
};

}  // namespace nanort::rt
