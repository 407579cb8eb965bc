#include "cpu_worker_pool.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <algorithm>
#include <thread>

#include "../topology/topology.hpp"

namespace nanort::rt {

namespace {
thread_local int tls_lane = -1;

// Binds each worker thread to a core when it enters the arena.
class CoreBinder final : public tbb::task_scheduler_observer {
 public:
  CoreBinder(tbb::task_arena &arena, const Topology &topology)
      : tbb::task_scheduler_observer(arena), topology_(topology) {
    observe(true);
  }
  ~CoreBinder() override { observe(false); }
  void on_scheduler_entry(bool is_worker) override {
    if (is_worker) topology_.bind_thread_to_core(tbb::this_task_arena::current_thread_index());
  }

 private:
  const Topology &topology_;
};
}  // namespace

struct CpuWorkerPool::Tbb {
  std::unique_ptr<tbb::global_control> parallelism;
  tbb::task_arena arena;
  std::unique_ptr<CoreBinder> binder;
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
  tbb_->arena.initialize(pool_threads(), /*reserved_for_masters=*/0);
  if (bind) tbb_->binder = std::make_unique<CoreBinder>(tbb_->arena, topology);
  loops_not_done_.store(pool_threads());
  for (int i = 0; i < pool_threads(); ++i)
    tbb_->arena.enqueue([this] {
      tls_lane = tbb::this_task_arena::current_thread_index();
      worker_loop_(tls_lane);
      tls_lane = -1;
      loops_not_done_.fetch_sub(1);  // the last touch of the pool
    });
}

CpuWorkerPool::~CpuWorkerPool() {
  // The arena does not wait for running jobs: wait for the loops to leave first.
  while (loops_not_done_.load() > 0) std::this_thread::yield();
  if (tbb_->binder) tbb_->binder.reset();
  if (tbb_->arena.is_active()) tbb_->arena.terminate();
}

int CpuWorkerPool::current_lane() { return tls_lane; }

}  // namespace nanort::rt
