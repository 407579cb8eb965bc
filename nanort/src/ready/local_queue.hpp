// LocalQueue: the ready tasks of one thread, a bounded ring that only its owner fills.
//
// The owner pushes at the tail and takes from the head, oldest first (breadth-first order,
// the order the program created its tasks in); any other thread steals from the head too, half
// of what is there in one compare-and-swap, so that a single creator feeding many workers hands
// out its tasks in a few large bites that the thieves spread further. No lock: the owner alone
// writes the tail; takers race on the head with a compare-and-swap, and a taker that read
// slots the owner has since reused fails its compare-and-swap (the owner reuses a slot only
// once the head has passed it). The shape of Go's per-processor run queues.
//
// Publication: takers see the tasks up to the published tail. Idle threads read that tail all
// the time, so each store to it costs its owner a miss, and with many idle threads a single
// creator paid one per task (stores behind it wait in the store buffer). So the owner
// publishes each push only while the queue as it last saw it is short (takers may be waiting),
// and otherwise every kPublishEvery pushes; an owner that never takes from its queue (a device
// manager) publishes each one. Tasks not yet published are not lost: the owner publishes them
// before it takes from its own queue (and never takes beyond the published tail), and a thread
// about to sleep publishes them for it (publish_pending()), after which the tail can only be
// ahead of the head.
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

  // Owner only. False when the ring is full (the caller moves work elsewhere). 'batch': the
  // owner also takes from this queue (then it may publish the task later, see above).
  bool push(Task *task, bool batch) {
    const std::uint32_t tail = own_tail_.load(std::memory_order_relaxed);
    // The head as last seen: takers only move it forward, so the ring is at most that full;
    // the shared head (a line every taker writes) is read only when that says full.
    if (tail - seen_head_ >= kCapacity) {
      seen_head_ = head_.load(std::memory_order_acquire);
      if (tail - seen_head_ >= kCapacity) return false;
    }
    slots_[tail & kMask].store(task, std::memory_order_relaxed);
    own_tail_.store(tail + 1, std::memory_order_release);
    if (!batch || tail + 1 - published_ >= kPublishEvery || published_ - seen_head_ <= kShort)
      publish(tail + 1);
    return true;
  }

  // Owner only: several tasks with one publication (a stolen batch; the ring must have room,
  // which it has when the owner steals: it steals only once its ring is empty).
  void push_batch(Task *const *tasks, std::uint32_t count) {
    const std::uint32_t tail = own_tail_.load(std::memory_order_relaxed);
    for (std::uint32_t i = 0; i < count; ++i)
      slots_[(tail + i) & kMask].store(tasks[i], std::memory_order_relaxed);
    own_tail_.store(tail + count, std::memory_order_release);
    publish(tail + count);
  }

  // Owner only: the oldest task, or nullptr.
  Task *pop() {
    const std::uint32_t tail = own_tail_.load(std::memory_order_relaxed);
    if (published_ != tail) publish(tail);  // (never take beyond the published tail)
    std::uint32_t head = head_.load(std::memory_order_acquire);
    for (;;) {
      if (head == tail) return nullptr;
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

  // Any thread (one about to sleep): publishes the tasks its owner has not published yet;
  // whether there were any. (The owner takes only up to the published tail, so the tail set
  // here, read after it, is not behind the head; and a store of the owner's comes later and
  // is further still.)
  bool publish_pending() {
    std::uint32_t tail = tail_.load(std::memory_order_acquire);
    const std::uint32_t pending = own_tail_.load(std::memory_order_acquire);
    if (pending == tail) return false;
    tail_.compare_exchange_strong(tail, pending, std::memory_order_acq_rel, std::memory_order_relaxed);
    return true;
  }

  // Owner only: whether more than 'limit' tasks wait, reading the shared head only when the
  // head as last seen says so (takers only shrink the queue).
  bool more_than(std::uint32_t limit) {
    const std::uint32_t tail = own_tail_.load(std::memory_order_relaxed);
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
  std::unique_ptr<std::atomic<Task *>[]> slots_;  // (set once: read by all)
  alignas(64) std::atomic<std::uint32_t> head_{0};  // written by every taker
  alignas(64) std::atomic<std::uint32_t> tail_{0};  // written by the owner, read by takers
  // The owner's own line (read by others only before they sleep): the tail as it wrote it
  // last, and what it last published and the head it last read (never ahead). Reading its
  // tail from tail_'s line, which every idle thread reads, cost the owner a miss per push.
  alignas(64) std::atomic<std::uint32_t> own_tail_{0};
  std::uint32_t published_ = 0;
  std::uint32_t seen_head_ = 0;

  static constexpr std::uint32_t kPublishEvery = 8;
  static constexpr std::uint32_t kShort = 16;

  void publish(std::uint32_t tail) {
    published_ = tail;
    tail_.store(tail, std::memory_order_release);
  }
};

}  // namespace nanort::rt
