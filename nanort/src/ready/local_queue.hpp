// LocalQueue: the ready tasks of one thread, a bounded ring that only its owner fills.
//
// The owner pushes at the tail and takes from the head, oldest first (breadth-first order,
// the order the program created its tasks in); any other thread steals from the head too, half
// of what is there in one compare-and-swap, so that a single creator feeding many workers hands
// out its tasks in a few large bites that the thieves spread further. No lock: the owner alone
// writes the tail; takers race on the head with a compare-and-swap, and a taker that read
// slots the owner has since reused fails its compare-and-swap (the owner reuses a slot only
// once the head has passed it). The shape of Go's per-processor run queues.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace nanort::rt {

struct Task;

class LocalQueue {
 public:
  static constexpr std::uint32_t kCapacity = 4096;  // a power of two
  static constexpr std::uint32_t kMask = kCapacity - 1;

  LocalQueue() : slots_(new std::atomic<Task *>[kCapacity]) {
    for (std::uint32_t i = 0; i < kCapacity; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
  }

  // Owner only. False when the ring is full (the caller moves work elsewhere).
  bool push(Task *task) {
    const std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    // The head as last seen: takers only move it forward, so the ring is at most that full;
    // the shared head (a line every taker writes) is read only when that says full.
    if (tail - seen_head_ >= kCapacity) {
      seen_head_ = head_.load(std::memory_order_acquire);
      if (tail - seen_head_ >= kCapacity) return false;
    }
    slots_[tail & kMask].store(task, std::memory_order_relaxed);
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Owner only: several tasks with one publication (a stolen batch; the ring must have room,
  // which it has when the owner steals: it steals only once its ring is empty).
  void push_batch(Task *const *tasks, std::uint32_t count) {
    const std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    for (std::uint32_t i = 0; i < count; ++i)
      slots_[(tail + i) & kMask].store(tasks[i], std::memory_order_relaxed);
    tail_.store(tail + count, std::memory_order_release);
  }

  // Owner only: the oldest task, or nullptr.
  Task *pop() {
    std::uint32_t head = head_.load(std::memory_order_acquire);
    for (;;) {
      if (head == tail_.load(std::memory_order_relaxed)) return nullptr;
      Task *task = slots_[head & kMask].load(std::memory_order_relaxed);
      if (head_.compare_exchange_weak(head, head + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
        return task;
    }
  }

  // Any thread: takes half of the tasks (rounded up, at most 'most') into 'out', oldest first;
  // returns how many.
  std::uint32_t grab(Task **out, std::uint32_t most) {
    for (;;) {
      std::uint32_t head = head_.load(std::memory_order_acquire);
      const std::uint32_t tail = tail_.load(std::memory_order_acquire);
      std::uint32_t count = tail - head;
      count -= count / 2;
      if (count == 0) return 0;
      if (count > kCapacity / 2) continue;  // head and tail read at different moments
      if (count > most) count = most;
      for (std::uint32_t i = 0; i < count; ++i)
        out[i] = slots_[(head + i) & kMask].load(std::memory_order_relaxed);
      if (head_.compare_exchange_strong(head, head + count, std::memory_order_acq_rel,
                                        std::memory_order_relaxed))
        return count;
    }
  }

  // Owner only: whether more than 'limit' tasks wait, reading the shared head only when the
  // head as last seen says so (takers only shrink the queue).
  bool more_than(std::uint32_t limit) {
    const std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - seen_head_ <= limit) return false;
    seen_head_ = head_.load(std::memory_order_acquire);
    return tail - seen_head_ > limit;
  }

  // Tasks waiting, as of some recent moment (any thread; reads only).
  std::uint32_t size() const {
    const std::uint32_t head = head_.load(std::memory_order_acquire);
    const std::uint32_t tail = tail_.load(std::memory_order_acquire);
    const std::uint32_t count = tail - head;
    return count > kCapacity ? kCapacity : count;  // (the owner took and pushed in between)
  }
  bool empty() const { return size() == 0; }

  // Whether a thread owns the queue (an external thread's queue outlives the thread; another
  // may adopt it, tasks and all).
  std::atomic<bool> owned{false};

 private:
  alignas(64) std::atomic<std::uint32_t> head_{0};  // written by every taker
  alignas(64) std::atomic<std::uint32_t> tail_{0};  // written by the owner only
  std::uint32_t seen_head_ = 0;  // owner only: the head as it last read it (never ahead)
  std::unique_ptr<std::atomic<Task *>[]> slots_;
};

}  // namespace nanort::rt
