// IdleWaiters: lets threads that wait (in taskwait, for an undeferred task) sleep without
// missing the event that would let them go on: new ready work, or the thing they wait for.
//
// A sleeper announces itself, reads the epoch, re-checks its condition and only then sleeps on
// the epoch; a notifier changes the state first and bumps the epoch only when someone sleeps.
// With sequentially consistent operations one of the two always sees the other. The sleep is
// a plain Linux futex on the epoch word (the kernel re-checks the epoch under its own lock).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <ctime>
#include <cstddef>
#include <cstdint>

namespace nanort::rt {

class IdleWaiters {
 public:
  template <class Condition>
  void sleep_unless(Condition condition) {
    sleepers_.fetch_add(1);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // announce before looking
    const std::uint32_t epoch = epoch_.load();
    if (!condition()) futex(FUTEX_WAIT_PRIVATE, epoch);
    sleepers_.fetch_sub(1);
  }

  // The same, but waking after 'timeout_ns' at the latest.
  template <class Condition>
  void sleep_unless_for(Condition condition, long timeout_ns) {
    sleepers_.fetch_add(1);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::uint32_t epoch = epoch_.load();
    if (!condition()) {
      const timespec timeout{timeout_ns / 1'000'000'000, timeout_ns % 1'000'000'000};
      futex(FUTEX_WAIT_PRIVATE, epoch, &timeout);
    }
    sleepers_.fetch_sub(1);
  }

  // Call after changing the state a sleeper's condition reads. The fence orders that change
  // (whatever its memory order was) before the look at the sleepers; without it a plain store
  // could still sit in this core's store buffer while a sleeper checks, and both would miss.
  // notify(n) wakes up to n sleepers (for work any of them can take), notify_all() every one
  // (for an event that one particular sleeper waits for).
  void notify(std::size_t n) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    notify_after_fence(n);
  }
  void notify_all() { notify(INT_MAX); }
  // For a caller that has just issued the fence itself.
  // Returns how many sleepers the kernel woke (0 also when one was about to sleep: the epoch's
  // change keeps it from sleeping).
  long notify_after_fence(std::size_t n) {
    if (sleepers_.load() == 0) return 0;
    epoch_.fetch_add(1);
    return futex(FUTEX_WAKE_PRIVATE, n > INT_MAX ? INT_MAX : static_cast<std::uint32_t>(n));
  }
  bool has_sleepers() const { return sleepers_.load() > 0; }
  int sleepers() const { return static_cast<int>(sleepers_.load()); }  // (tests)

 private:
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  long futex(int op, std::uint32_t value, const timespec *timeout = nullptr) {
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&epoch_), op, value, timeout, nullptr,
            0);
  }

  std::atomic<int> sleepers_{0};
  std::atomic<std::uint32_t> epoch_{0};
};

}  // namespace nanort::rt
