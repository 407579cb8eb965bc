// CpuWorkerPool: the CPU workers, as a oneTBB arena.
//
// NANORT_CPU_WORKERS counts the threads that run tasks: the arena's worker threads plus one
// waiting thread (the main thread in taskwait runs tasks too, outside the arena, so that any
// number of threads may wait at once). Ready tasks live in the runtime's scheduler, not in
// TBB's queues: each of the arena's worker threads runs one long job, the
// runtime's worker loop, which takes tasks from the scheduler, polls briefly when there are
// none, and then sleeps on the runtime's own futex until work arrives. So a program waiting
// on a device or on I/O burns no CPU, and a wake-up costs one futex call, not a trip through
// TBB's thread market. All TBB use of the runtime lives here.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

namespace nanort::rt {

class Topology;

class CpuWorkerPool {
 public:
  // 'worker_loop(lane)' runs in each pool thread until the runtime stops.
  CpuWorkerPool(int workers, bool bind, const Topology &topology,
                std::function<void(int lane)> worker_loop);
  // Waits until every worker loop has returned (the runtime makes them return first).
  ~CpuWorkerPool();
  CpuWorkerPool(const CpuWorkerPool &) = delete;
  CpuWorkerPool &operator=(const CpuWorkerPool &) = delete;

  int workers() const { return workers_; }
  int pool_threads() const { return workers_ - 1; }
  // Lane (arena slot, 0 to pool_threads() - 1) of the calling thread, or -1 outside the pool.
  static int current_lane();

 private:
  struct Tbb;
  int workers_;
  std::function<void(int lane)> worker_loop_;
  std::atomic<int> loops_not_done_{0};  // counted from enqueueing to the loop's last touch
  std::unique_ptr<Tbb> tbb_;
};

}  // namespace nanort::rt
