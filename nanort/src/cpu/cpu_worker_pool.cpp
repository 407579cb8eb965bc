#include "cpu_worker_pool.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "../spin_lock.hpp"
#include "../topology/topology.hpp"

namespace nanort::rt {

namespace {
thread_local int tls_lane = -1;

long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

CpuWorkerPool::CpuWorkerPool(int workers, int spin_us, bool bind, const Topology &topology,
                             Hooks hooks)
    : workers_(std::max(1, workers)), max_drainers_(workers_ - 1), spin_ns_(spin_us * 1000L),
      hooks_(std::move(hooks)), tbb_(std::make_unique<Tbb>()) {
  // TBB caps its worker threads at the number of CPUs; a larger explicit count is honoured.
  if (static_cast<std::size_t>(workers_) >
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism))
    tbb_->parallelism = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(workers_));
  tbb_->arena.initialize(workers_, /*reserved_for_masters=*/1);
  if (bind) tbb_->binder = std::make_unique<CoreBinder>(tbb_->arena, topology);
}

CpuWorkerPool::~CpuWorkerPool() {
  // The runtime is going away: let every drainer leave first (the arena does not wait for
  // running jobs). They leave once the scheduler is empty and their polling time is over.
  // A drainer is counted from its enqueueing until its last touch of the pool.
  while (drainers_.load() > 0 || inside_drain_.load() > 0) std::this_thread::yield();
  if (tbb_->binder) tbb_->binder.reset();
  tbb_->arena.terminate();
}

int CpuWorkerPool::current_lane() { return tls_lane; }

void CpuWorkerPool::work_available() {
  int drainers = drainers_.load();
  while (drainers < max_drainers_) {
    if (drainers_.compare_exchange_weak(drainers, drainers + 1)) {
      tbb_->arena.enqueue([this] { drain(); });
      return;
    }
  }
}

void CpuWorkerPool::drain() {
  inside_drain_.fetch_add(1);
  const int previous_lane = tls_lane;
  tls_lane = tbb::this_task_arena::current_thread_index();
  for (;;) {
    while (hooks_.run_one(tls_lane)) {
    }
    // Poll a little before giving the thread back: the next task is often close behind.
    bool found = false;
    const long deadline = now_ns() + spin_ns_;
    for (int polls = 0; !found; ++polls) {
      if (hooks_.has_ready()) {
        found = true;
        break;
      }
      NANORT_CPU_RELAX();
      if ((polls & 63) == 63 && now_ns() >= deadline) break;
    }
    if (found) continue;
    drainers_.fetch_sub(1);
    // A push may have seen us still counted and enqueued nobody: look once more.
    if (!hooks_.has_ready()) break;
    int drainers = drainers_.load();
    if (drainers >= max_drainers_ || !drainers_.compare_exchange_strong(drainers, drainers + 1))
      break;
  }
  tls_lane = previous_lane;
  inside_drain_.fetch_sub(1);  // the last touch of the pool
}

void CpuWorkerPool::run_inside(const std::function<void()> &body) {
  if (tls_lane >= 0) {
    body();
    return;
  }
  tbb_->arena.execute([&] {
    // Usually the calling thread in the reserved slot; TBB may hand the body to a worker.
    const int previous_lane = tls_lane;
    tls_lane = tbb::this_task_arena::current_thread_index();
    body();
    tls_lane = previous_lane;
  });
}

}  // namespace nanort::rt
