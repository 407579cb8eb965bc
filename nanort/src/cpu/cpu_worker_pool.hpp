// CpuWorkerPool: the CPU workers, as a oneTBB arena.
//
// The arena has one slot per worker, the first reserved for a thread that waits (the main
// thread in taskwait joins there and runs tasks too). Ready tasks live in the runtime's
// scheduler, not in TBB's queues: when work arrives and fewer drainers run than the arena has
// worker threads, a drainer job is enqueued; it runs tasks until the scheduler is empty, polls
// a little longer (NANORT_SPIN_US), then returns, and TBB puts the idle thread to sleep. So a
// program waiting on a device or on I/O burns no CPU, and a busy one pays no wake-up per task.
// All TBB use of the runtime lives here.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

namespace nanort::rt {

class Topology;

class CpuWorkerPool {
 public:
  struct Hooks {
    std::function<bool(int lane)> run_one;  // pops and runs one task; false if none
    std::function<bool()> has_ready;
  };

  CpuWorkerPool(int workers, int spin_us, bool bind, const Topology &topology, Hooks hooks);
  ~CpuWorkerPool();  // waits for the worker threads to leave
  CpuWorkerPool(const CpuWorkerPool &) = delete;
  CpuWorkerPool &operator=(const CpuWorkerPool &) = delete;

  int workers() const { return workers_; }
  // Pool threads currently running or polling for tasks.
  int draining() const { return drainers_.load(); }
  // Called after tasks became ready: makes sure enough workers are draining.
  void work_available();
  // Runs 'body' in the arena (taking the reserved slot) unless already inside it.
  void run_inside(const std::function<void()> &body);
  // Lane (arena slot) of the calling thread, or -1 outside the arena.
  static int current_lane();

 private:
  void drain();

  struct Tbb;
  int workers_;
  int max_drainers_;
  long spin_ns_;
  Hooks hooks_;
  std::atomic<int> drainers_{0};
  std::atomic<int> inside_drain_{0};  // drainers that may still touch the pool or the runtime
  std::unique_ptr<Tbb> tbb_;
};

}  // namespace nanort::rt
