// SpareThreads: the threads that run tasks while a task's thread waits in a blocking call
// (nanort_block_until, nanort_block_call: MPI, I/O), so that the CPU workers stay busy however
// many tasks wait. A blocked task's thread hands its place to a spare (woken, or started when
// none is parked: the blocked call may wait for a task that has yet to run, such as a receive
// whose send is a later task); when the call returns, a spare beyond what is needed leaves.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "../idle_waiters.hpp"

namespace nanort::rt {

class SpareThreads {
 public:
  // 'run_tasks(leave)': the calling spare thread runs ready tasks, sleeping in 'spare_idle'
  // when there are none, until leave() holds. A spare ends once 'stopping' is set and stop()
  // wakes it.
  using RunTasks = std::function<void(const std::function<bool()> &leave)>;
  SpareThreads(IdleWaiters &spare_idle, const std::atomic<bool> &stopping, RunTasks run_tasks);
  SpareThreads(const SpareThreads &) = delete;
  SpareThreads &operator=(const SpareThreads &) = delete;

  // Polls 'ready' until it returns nonzero; 'in_task': the calling thread runs a task, whose
  // place a spare takes meanwhile. Polls without pause for 'poll_us', then in short sleeps.
  void block_until(int (*ready)(void *), void *arg, bool in_task, long poll_us);
  // call(arg), the calling task's place handed to a spare meanwhile ('in_task' as above).
  void blocking_call(void (*call)(void *), void *arg, bool in_task);
  // At the stop, with 'stopping' set and no task left: wakes and joins every spare.
  void stop();

 private:
  // Inside a task: counts the thread as blocked and wakes or starts a spare to run tasks in
  // its place (false outside tasks, or when no thread can be started); then the reverse.
  bool hand_over_worker(bool in_task);
  void take_back_worker(bool handed_over);
  // While 'blocked_' task threads wait, as many spares run tasks.
  void spare_loop();

  IdleWaiters &spare_idle_;  // running spare threads sleep here
  const std::atomic<bool> &stopping_;
  RunTasks run_tasks_;
  std::mutex spares_mutex_;
  std::condition_variable spare_wanted_;
  std::vector<std::thread> spares_;
  int parked_spares_ = 0;  // under spares_mutex_: waiting to be wanted
  int woken_spares_ = 0;   // under spares_mutex_: parked ones notified, not yet awake
  std::atomic<int> blocked_{0}, running_spares_{0};
};

}  // namespace nanort::rt
