// ReadyPath: where ready CPU tasks wait, how idle threads find them, and how sleepers are woken.
//
// The path of a task, in order (ready/task_path.cpp): submit -> registration in the parent's
// DependencyDomain (or none: no accesses) -> ready, at once or when its last predecessor
// releases it (Runtime::complete) -> Runtime::push_ready: placement among devices (place(),
// scheduler/placement.cpp) -> a device's queue (device tasks) or ReadyPath::push (CPU tasks)
// -> ReadyPath::take in a worker or a waiting thread -> Runtime::execute.
//
// The queues:
//   - one LocalQueue per thread that makes tasks ready: each pool worker (by lane) and each
//     other thread that does (the main thread, threads of the program, device managers,
//     spare threads), claimed on first use; a task made ready by a thread goes to its own
//     queue, so that the common path touches no line another thread writes.
//   - the successor a worker releases goes to that worker's 'next' slot and runs next there,
//     warm in its cache, with no queueing and no wake-up.
//   - tasks with a priority other than 0 wait in one shared queue, highest first; a counter
//     that only they change tells everyone else, without a lock, that there are none.
//   - one shared overflow queue, for tasks of a full ring and of threads without a queue.
// Taking, for a thread: a positive priority first, then its own queue (oldest first), then
// the overflow queue, then stealing half of another thread's queue (victims in random order),
// then a negative priority. Stolen tasks go into the thief's own queue, where others may
// steal from it in turn, so that one creator's tasks spread over many workers in a few steps.
//
// Idle and wake-up (Go's spinning threads): a thread that finds nothing polls for a while
// (NANORT_SPIN_US) as a "spinner", at most half the workers at once, then sleeps on a futex.
// A push wakes one sleeper only when no thread spins (a spinner will find the task); a spinner
// that finds work, when it was the last one, wakes one sleeper in turn, which spins: workers
// come up one by one as long as work remains. A task that releases many successors at once
// (a panel factorisation feeding its updates) wakes as many sleepers as it queued tasks
// beyond the spinners, all at once: one by one, each woken thread costs the next a futex
// round trip, and a wide step after a narrow one would start late. The common path (a busy worker pushing, or
// taking from its own queue) reads the spinner count and writes nothing shared.
#pragma once

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "../idle_waiters.hpp"
#include "../spin_lock.hpp"
#include "local_queue.hpp"

namespace nanort::rt {

struct Task;

class ReadyPath {
 public:
  // 'workers': the CPU workers (NANORT_CPU_WORKERS); 'pool_threads' of them have lanes 0 to
  // pool_threads - 1. Sleepers in 'idle' are woken for work, and those in 'also_wake' too (the
  // spare threads that run tasks while tasks are blocked).
  ReadyPath(int workers, int pool_threads, IdleWaiters &idle, IdleWaiters &also_wake);
  ~ReadyPath();
  ReadyPath(const ReadyPath &) = delete;
  ReadyPath &operator=(const ReadyPath &) = delete;

  // A ready CPU task from the calling thread ('lane': its pool lane, else -1). With 'next'
  // (a worker that released it): the task may go there instead, to run next on this thread,
  // unless a waiting task has a higher priority; a lower-priority task already there goes to
  // the queues instead. Returns whether a task went into the queues (then call wake()).
  bool push(Task *task, int lane, Task **next = nullptr);
  // After pushes of 'queued' tasks: wakes a sleeper if no thread is polling for work; when
  // a task released several at once, as many sleepers as there are tasks beyond the pollers.
  void wake(std::size_t queued = 1);
  // Whether a task waiting in the queues has a higher priority than 'task' (or 'task' has a
  // negative one, which every task of priority 0 outranks): then it must not run before them.
  bool outranked(const Task *task) const;
  // A task for the calling thread, or nullptr (see above for the order).
  Task *take(int lane);

  // Whether any task waits (scans every queue; publishes the tasks that owners have pushed
  // but not published yet, local_queue.hpp).
  bool any_work();
  // Whether more than 'limit' tasks wait in the calling thread's queue and the overflow queue
  // (work first). Cheap when they do not: no line that other threads write is read then.
  bool queued_near_more_than(int lane, std::size_t limit);
  // Tasks waiting everywhere, as of some recent moment (the CPU's load, for placement).
  std::size_t approximate_size() const;

  // The idle protocol of a thread that found nothing (Runtime::help_until).
  bool start_spinning();  // false: enough threads poll already; sleep instead
  // 'found': it found work. The last spinner to stop wakes a sleeper when work remains (when
  // it found some, or 'leaving' and work is seen): the tasks it leaves behind need someone.
  void stop_spinning(bool found, bool leaving);
  void woken();  // back from a sleep (woken or not)

  int pool_threads() const { return pool_threads_; }

 private:
  struct Registry;
  LocalQueue *queue_for(int lane);
  Task *steal(LocalQueue *own);
  Task *take_overflow(LocalQueue *own);
  void overflow(LocalQueue &queue, Task *task);
  bool push_priority(Task *task);
  Task *take_priority(int at_least);

  const int workers_;
  const int pool_threads_;
  const int most_spinning_;
  IdleWaiters &idle_;
  IdleWaiters &also_wake_;
  std::shared_ptr<Registry> registry_;  // shared with the threads that hold a queue

  // Written rarely (only when threads go idle or wake, or tasks with priorities come and go);
  // each on its own line, read by every push.
  alignas(64) std::atomic<int> spinning_{0};
  alignas(64) std::atomic<bool> waking_{false};  // a sleeper is being woken: no second one yet
  alignas(64) std::atomic<int> prioritised_{0};  // tasks in the priority queue
  std::atomic<int> top_priority_{INT_MIN};       // the highest there (INT_MIN: none)
  alignas(64) SpinLock priority_lock_;
  std::map<int, std::deque<Task *>> by_priority_;  // under priority_lock_
  alignas(64) std::atomic<std::size_t> overflow_size_{0};
  SpinLock overflow_lock_;
  std::deque<Task *> overflow_;  // under overflow_lock_
};

}  // namespace nanort::rt
