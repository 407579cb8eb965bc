#include "cpu_worker_pool.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <thread>

#include "../hot_tls.hpp"
#include "../topology/topology.hpp"

namespace nanort::rt {

namespace {
NANORT_HOT_TLS thread_local int tls_lane = -1;
}  // namespace

struct CpuWorkerPool::Tbb {
  std::unique_ptr<tbb::global_control> parallelism;
  tbb::task_arena arena;
};

CpuWorkerPool::CpuWorkerPool(int workers, bool bind, const Topology &topology,
                             std::function<void(int lane)> worker_loop)
    : workers_(std::max(1, workers)), worker_loop_(std::move(worker_loop)),
      tbb_(std::make_unique<Tbb>()) {
  // TBB caps its worker threads at the number of CPUs; a larger explicit count is honoured.
  if (static_cast<std::size_t>(workers_) >
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism))
    tbb_->parallelism = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(workers_));
  if (pool_threads() == 0) return;  // one worker: the waiting thread runs every task
  // One slot more than pool threads, reserved for a master that never comes: oneTBB gives an
  // arena of concurrency 1 without a master slot no worker thread at all.
  tbb_->arena.initialize(workers_, /*reserved_for_masters=*/1);
  loops_not_done_.store(pool_threads());
  for (int i = 0; i < pool_threads(); ++i)
    tbb_->arena.enqueue([this, bind, &topology] {
      tls_lane = tbb::this_task_arena::current_thread_index() - 1;  // slot 0 is the master's
      // The loop keeps its TBB thread until the runtime stops, so binding it here binds the
      // worker for good (core = lane; the waiting threads keep their own affinity).
      if (bind) topology.bind_thread_to_core(tls_lane);
      worker_loop_(tls_lane);
      tls_lane = -1;
      loops_not_done_.fetch_sub(1);  // the last touch of the pool
    });
}

CpuWorkerPool::~CpuWorkerPool() {
  // The arena does not wait for running jobs: wait for the loops to leave first.
  while (loops_not_done_.load() > 0) std::this_thread::yield();
  if (tbb_->arena.is_active()) tbb_->arena.terminate();
}

int CpuWorkerPool::current_lane() { return tls_lane; }

}  // namespace nanort::rt
