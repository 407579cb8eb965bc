// breadth-first: the queue of a device kind, shared by its devices, first come first served
// among tasks of equal priority; higher priorities first.
#include <atomic>
#include <deque>
#include <map>
#include <mutex>

#include "../spin_lock.hpp"
#include "../task.hpp"
#include "scheduler.hpp"

namespace nanort::rt {
namespace {

class BreadthFirst final : public SchedulerPolicy {
 public:
  const char *name() const override { return "breadth-first"; }

  void push(Task *task) override {
    std::lock_guard<SpinLock> guard(lock_);
    if (task->priority == 0)
      normal_.push_back(task);
    else
      prioritised_[task->priority].push_back(task);
    size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  Task *pop(int) override {
    std::lock_guard<SpinLock> guard(lock_);
    Task *task = take_next();
    if (task) size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return task;
  }

  std::size_t size_hint() const override { return size_.load(std::memory_order_relaxed); }

 private:
  Task *take_next() {
    if (!prioritised_.empty()) {
      auto highest = std::prev(prioritised_.end());
      if (highest->first > 0 || normal_.empty()) return take(highest);
    }
    if (normal_.empty()) return nullptr;
    Task *task = normal_.front();
    normal_.pop_front();
    return task;
  }

  using Buckets = std::map<int, std::deque<Task *>>;
  Task *take(Buckets::iterator bucket) {
    Task *task = bucket->second.front();
    bucket->second.pop_front();
    if (bucket->second.empty()) prioritised_.erase(bucket);
    return task;
  }

  SpinLock lock_;
  std::atomic<std::size_t> size_{0};  // written under the lock, read without it
  std::deque<Task *> normal_;
  Buckets prioritised_;  // priority -> tasks, for priorities other than 0
};

}  // namespace

std::unique_ptr<SchedulerPolicy> make_breadth_first() { return std::make_unique<BreadthFirst>(); }

}  // namespace nanort::rt
