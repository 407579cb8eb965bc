#include "ready_path.hpp"

#include <algorithm>

#include "../hot_tls.hpp"
#include "../task.hpp"

namespace nanort::rt {

namespace {

constexpr std::uint32_t kStealMost = 256;  // tasks one steal takes at most
constexpr std::size_t kExternalQueues = 256;  // queues for threads other than pool workers

// The queue of a thread other than a pool worker. Plain thread-locals (never destroyed): exit()
// destroys the main thread's C++ thread-locals before the runtime stops, and the stop still
// runs tasks on that thread. The holder below gives the queue up when the thread ends (its
// tasks stay in it, for others to steal or a later thread to adopt); from then on the thread
// pushes to the overflow queue.
NANORT_HOT_TLS thread_local LocalQueue *tls_queue = nullptr;
NANORT_HOT_TLS thread_local const void *tls_registry = nullptr;  // the registry tls_queue belongs to
NANORT_HOT_TLS thread_local bool tls_ending = false;
// The thread takes ready tasks (a worker, a thread in a taskwait): its queue may publish its
// pushes in batches (local_queue.hpp), since it takes from that queue itself.
NANORT_HOT_TLS thread_local bool tls_takes = false;
struct QueueHolder {
  std::shared_ptr<void> registry;  // keeps the queues alive until every thread let go
  LocalQueue *queue = nullptr;
  ~QueueHolder() {
    tls_ending = true;
    tls_queue = nullptr;
    if (queue) queue->owned.store(false, std::memory_order_release);
  }
};
thread_local QueueHolder queue_holder;

// Victims in a random order: threads that start stealing together pick different ones.
std::uint32_t random_number() {
  NANORT_HOT_TLS static thread_local std::uint32_t state = 0;
  if (state == 0)
    state = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(&state) >> 4) | 1u;
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

}  // namespace

struct ReadyPath::Registry {
  explicit Registry(std::size_t capacity) : queues(capacity) {}
  // [0, count) exist; a queue, once made, lives as long as the registry. Lanes first.
  std::vector<std::unique_ptr<LocalQueue>> queues;
  std::atomic<std::size_t> count{0};
  std::mutex mutex;  // claims

  // A queue for a thread: one no thread owns any more, else a new one; nullptr when full.
  LocalQueue *claim(std::size_t first_external) {
    std::lock_guard<std::mutex> guard(mutex);
    const std::size_t made = count.load(std::memory_order_relaxed);
    for (std::size_t i = first_external; i < made; ++i)
      if (!queues[i]->owned.load(std::memory_order_acquire)) {
        queues[i]->owned.store(true, std::memory_order_relaxed);
        return queues[i].get();
      }
    if (made == queues.size()) return nullptr;
    queues[made] = std::make_unique<LocalQueue>();
    queues[made]->owned.store(true, std::memory_order_relaxed);
    count.store(made + 1, std::memory_order_release);
    return queues[made].get();
  }
};

ReadyPath::ReadyPath(int workers, int pool_threads, IdleWaiters &idle, IdleWaiters &also_wake)
    : workers_(std::max(1, workers)), pool_threads_(std::max(0, pool_threads)),
      most_spinning_(std::max(1, workers_ / 2)), idle_(idle), also_wake_(also_wake),
      registry_(std::make_shared<Registry>(static_cast<std::size_t>(pool_threads_) +
                                           kExternalQueues)) {
  for (int lane = 0; lane < pool_threads_; ++lane) {
    registry_->queues[static_cast<std::size_t>(lane)] = std::make_unique<LocalQueue>();
    registry_->queues[static_cast<std::size_t>(lane)]->owned.store(true);
  }
  registry_->count.store(static_cast<std::size_t>(pool_threads_), std::memory_order_release);
}

ReadyPath::~ReadyPath() = default;

LocalQueue *ReadyPath::queue_for(int lane) {
  if (lane >= 0 && lane < pool_threads_) return registry_->queues[static_cast<std::size_t>(lane)].get();
  if (tls_registry == registry_.get()) return tls_queue;  // (nullptr: none to be had)
  if (tls_ending) return nullptr;
  LocalQueue *queue = registry_->claim(static_cast<std::size_t>(pool_threads_));
  tls_registry = registry_.get();
  tls_queue = queue;
  queue_holder.queue = queue;
  queue_holder.registry = registry_;
  return queue;
}

bool ReadyPath::push(Task *task, int lane, Task **next) {
  if (next && task->priority >= 0) {
    // To run next here, unless a waiting task outranks it (tasks of priority 0 in the queues
    // never do: it has priority 0 or more).
    Task *const held = *next;
    if ((!held || task->priority > held->priority) &&
        (prioritised_.load(std::memory_order_acquire) == 0 ||
         top_priority_.load(std::memory_order_acquire) <= task->priority)) {
      *next = task;
      if (!held) return false;
      task = held;  // displaced: it waits like any other
    }
  }
  if (task->priority != 0) return push_priority(task);
  LocalQueue *queue = queue_for(lane);
  if (!queue) {
    std::lock_guard<SpinLock> guard(overflow_lock_);
    overflow_.push_back(task);
    overflow_size_.store(overflow_.size(), std::memory_order_relaxed);
  } else if (!queue->push(task, tls_takes)) {
    overflow(*queue, task);
  }
  return true;
}

void ReadyPath::overflow(LocalQueue &queue, Task *task) {
  // A full ring: its older half and the new task move to the overflow queue in one go.
  Task *batch[kStealMost];
  const std::uint32_t moved = queue.grab(batch, kStealMost);
  std::lock_guard<SpinLock> guard(overflow_lock_);
  overflow_.insert(overflow_.end(), batch, batch + moved);
  overflow_.push_back(task);
  overflow_size_.store(overflow_.size(), std::memory_order_relaxed);
}

bool ReadyPath::push_priority(Task *task) {
  std::lock_guard<SpinLock> guard(priority_lock_);
  by_priority_[task->priority].push_back(task);
  // The highest priority first, then the count that readers test before it: a reader that sees
  // the count sees the priority too.
  if (task->priority > top_priority_.load(std::memory_order_relaxed))
    top_priority_.store(task->priority, std::memory_order_release);
  prioritised_.fetch_add(1, std::memory_order_release);
  return true;
}

bool ReadyPath::outranked(const Task *task) const {
  if (task->priority < 0) return true;  // (tasks of priority 0 may wait anywhere)
  return prioritised_.load(std::memory_order_acquire) > 0 &&
         top_priority_.load(std::memory_order_acquire) > task->priority;
}

Task *ReadyPath::take_priority(int at_least) {
  if (prioritised_.load(std::memory_order_acquire) == 0 ||
      top_priority_.load(std::memory_order_acquire) < at_least)
    return nullptr;
  std::lock_guard<SpinLock> guard(priority_lock_);
  if (by_priority_.empty()) return nullptr;
  auto highest = std::prev(by_priority_.end());
  if (highest->first < at_least) return nullptr;
  Task *task = highest->second.front();
  highest->second.pop_front();
  if (highest->second.empty()) by_priority_.erase(highest);
  top_priority_.store(by_priority_.empty() ? INT_MIN : std::prev(by_priority_.end())->first,
                      std::memory_order_release);
  prioritised_.fetch_sub(1, std::memory_order_release);
  return task;
}

Task *ReadyPath::take_overflow(LocalQueue *own) {
  // A share of it: the rest is for the other workers.
  Task *batch[kStealMost];
  std::size_t count = 0;
  {
    std::lock_guard<SpinLock> guard(overflow_lock_);
    const std::size_t waiting = overflow_.size();
    if (waiting == 0) return nullptr;
    count = own ? std::min<std::size_t>({waiting, std::max<std::size_t>(1, waiting / workers_),
                                         kStealMost})
                : 1;
    std::copy_n(overflow_.begin(), count, batch);
    overflow_.erase(overflow_.begin(), overflow_.begin() + static_cast<std::ptrdiff_t>(count));
    overflow_size_.store(overflow_.size(), std::memory_order_relaxed);
  }
  // (Its own queue is empty: its owner takes from elsewhere only then.)
  if (count > 1) own->push_batch(batch + 1, static_cast<std::uint32_t>(count - 1));
  return batch[0];
}

Task *ReadyPath::steal(LocalQueue *own) {
  const Registry &registry = *registry_;
  const std::size_t count = registry.count.load(std::memory_order_acquire);
  if (count == 0) return nullptr;
  const std::size_t start = random_number() % count;
  Task *batch[kStealMost];
  for (std::size_t i = 0; i < count; ++i) {
    LocalQueue *victim = registry.queues[(start + i) % count].get();
    if (victim == own || victim->empty()) continue;
    const std::uint32_t taken = victim->grab(batch, own ? kStealMost : 1);
    if (taken == 0) continue;
    if (taken > 1) own->push_batch(batch + 1, taken - 1);  // (its own queue is empty)
    return batch[0];
  }
  return nullptr;
}

Task *ReadyPath::take(int lane) {
  tls_takes = true;
  LocalQueue *own = queue_for(lane);
  if (Task *task = take_priority(1)) return task;
  if (own)
    if (Task *task = own->pop()) return task;
  if (overflow_size_.load(std::memory_order_relaxed) > 0)
    if (Task *task = take_overflow(own)) return task;
  if (Task *task = steal(own)) return task;
  return take_priority(INT_MIN);
}

void ReadyPath::wake(std::size_t queued) {
  // The fence orders the pushes before the look at spinning_; a spinner that stops looks the
  // other way round (stop_spinning, then the sleeper's check of any_work()).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::size_t spinning = static_cast<std::size_t>(std::max(0, spinning_.load()));
  if (spinning >= queued) return;
  also_wake_.notify_after_fence(1);
  if (!idle_.has_sleepers()) return;
  if (queued - spinning > 1) {
    idle_.notify_after_fence(queued - spinning);
    return;
  }
  // One at a time: the one woken spins, and wakes the next if it finds work.
  if (waking_.load(std::memory_order_relaxed) || waking_.exchange(true)) return;
  if (idle_.notify_after_fence(1) <= 0) waking_.store(false);
}

bool ReadyPath::start_spinning() {
  if (spinning_.load(std::memory_order_relaxed) >= most_spinning_) return false;
  spinning_.fetch_add(1);
  return true;
}

void ReadyPath::stop_spinning(bool found, bool leaving) {
  if (spinning_.fetch_sub(1) != 1) return;  // another spinner still looks
  std::atomic_thread_fence(std::memory_order_seq_cst);  // (wake(): the other side)
  if (found || (leaving && any_work())) wake();
}

void ReadyPath::woken() {
  if (waking_.load(std::memory_order_relaxed)) waking_.store(false);
}

bool ReadyPath::any_work() {
  if (prioritised_.load() > 0 || overflow_size_.load() > 0) return true;
  const std::size_t count = registry_->count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < count; ++i) {
    LocalQueue &queue = *registry_->queues[i];
    // (Tasks its owner has not published yet count too: published here, for everyone.)
    if (!queue.empty() || queue.publish_pending()) return true;
  }
  return false;
}

bool ReadyPath::queued_near_more_than(int lane, std::size_t limit) {
  const std::size_t overflowing = overflow_size_.load(std::memory_order_relaxed);
  if (overflowing > limit) return true;
  LocalQueue *own = queue_for(lane);
  return own && own->more_than(static_cast<std::uint32_t>(
                    std::min<std::size_t>(limit - overflowing, LocalQueue::kCapacity)));
}

std::size_t ReadyPath::approximate_size() const {
  std::size_t total = static_cast<std::size_t>(std::max(0, prioritised_.load())) +
                      overflow_size_.load(std::memory_order_relaxed);
  const std::size_t count = registry_->count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < count; ++i) total += registry_->queues[i]->size();
  return total;
}

}  // namespace nanort::rt
