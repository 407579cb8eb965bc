#include "runtime.hpp"

#include <nanort/dc/human_size.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>

#include <unistd.h>

#include "cpu/cpu_worker_pool.hpp"
#include "cpu/spare_threads.hpp"
#include "device/accelerator.hpp"
#include "device/backend.hpp"
#include "device/device_manager.hpp"
#include "device/device_numbering.hpp"
#include "device/host_registration.hpp"
#include "device/rank_share.hpp"
#include "observe/energy.hpp"
#include "observe/memory_summary.hpp"
#include "observe/observer.hpp"
#include "observe/trace_copies.hpp"
#include "scheduler/perf_model.hpp"
#include "scheduler/placement.hpp"
#include "scheduler/scheduler.hpp"
#include "spin_lock.hpp"
#include "task_context.hpp"
#include "topology/topology.hpp"

namespace nanort::rt {

namespace {

std::mutex lifecycle_mutex;
std::atomic<Runtime *> instance{nullptr};
bool stopped = false;  // guarded by lifecycle_mutex

void shutdown_at_exit() {
  if (tls_current) {  // exit() inside a task: the other tasks cannot be waited for
    std::fprintf(stderr, "nanort: exit called inside %s: no orderly stop\n",
                 tls_current->describe().c_str());
    if (Runtime *rt = instance.load(std::memory_order_acquire)) rt->report_before_fatal_exit();
    return;
  }
  try {
    Runtime::shutdown();
  } catch (const TaskFailedError &e) {
    // Failures no taskwait collected (listed by the stop): the program must not end with
    // status 0. (The handlers registered before the runtime started, which would run after
    // this one, are skipped.)
    std::fprintf(stderr, "nanort: %s; exit status 1\n", e.what());
    std::fflush(nullptr);
    std::_Exit(1);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nanort: %s\n", e.what());
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Start and stop

Runtime &Runtime::get() {
  if (Runtime *rt = instance.load(std::memory_order_acquire)) return *rt;
  std::string bad_configuration;
  {
    std::lock_guard<std::mutex> guard(lifecycle_mutex);
    if (Runtime *rt = instance.load(std::memory_order_acquire)) return *rt;
    if (stopped) throw std::logic_error("the runtime was shut down; it does not start again");
    try {
      auto *rt = new Runtime();
      instance.store(rt, std::memory_order_release);
      static bool registered = false;
      if (!registered) {
        std::atexit(&shutdown_at_exit);
        registered = true;
      }
      return *rt;
    } catch (const ConfigError &e) {
      bad_configuration = e.what();
    }
  }
  // A bad environment: nothing has run yet, and every later call would fail the same way.
  // The program ends, saying which variable is wrong (docs/configuration.md). (One thread
  // ends it; another that started the runtime at the same time waits for the end.)
  static std::atomic<bool> ending{false};
  if (ending.exchange(true))
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  std::fprintf(stderr, "nanort: configuration error: %s\n", bad_configuration.c_str());
  std::fflush(nullptr);
  std::exit(1);
}

bool Runtime::shutdown() {
  bool failures_left = false;
  {
    std::lock_guard<std::mutex> guard(lifecycle_mutex);
    Runtime *rt = instance.load(std::memory_order_acquire);
    if (!rt) return false;
    if (tls_current || CpuWorkerPool::current_lane() >= 0)
      // Stopping waits for every task, the caller's included: it can only happen outside.
      throw std::logic_error("nanort_shutdown called inside " +
                             (tls_current ? tls_current->describe() : std::string("a worker")) +
                             "; the runtime stops only from outside its tasks");
    rt->stop();
    failures_left = rt->uncollected_failures_;
    instance.store(nullptr, std::memory_order_release);
    stopped = true;
    delete rt;
  }
  if (failures_left)
    throw TaskFailedError("task failures were left that no taskwait collected (listed above)");
  return true;
}

void Runtime::exit_after_failure(int status) {
  if (tls_current || CpuWorkerPool::current_lane() >= 0) {
    // Inside a task the other tasks cannot be waited for (some may wait for this one): the
    // statistics and trace of what ran so far, then the end.
    if (Runtime *rt = instance.load(std::memory_order_acquire)) rt->report_before_fatal_exit();
    std::fflush(nullptr);
    std::_Exit(status);
  }
  std::exit(status);  // the runtime stops at exit as usual: statistics and trace are written
}

void Runtime::fail_current_task(const char *message, void *payload, void (*destroy)(void *)) {
  Failure failure(std::string(), payload, destroy);  // destroys the payload on any way out
  Task *task = tls_current;
  if (!task || !task->site)
    throw std::invalid_argument("nanort_task_fail called outside a task's body");
  failure.message = task->describe() + " " + (message && *message ? message : "failed");
  task->failed = true;
  task->parent->record_failure(std::move(failure));
}

void Runtime::report(bool fatal) {
  // Once; a second thread ending the program at the same time waits until the first has
  // written everything (it would cut the output short by ending the process).
  std::lock_guard<std::mutex> guard(report_mutex_);
  if (reported_) return;
  reported_ = true;
  try {
    // (After a fatal error the directory may be locked by the thread that failed: its table
    // is left out.)
    observer_->finish(std::cerr, DependencyDomain::total_edges(),
                      fatal ? "" : memory_summary(directory_.get(), accelerators_));
    if (config_.stats)
      for (const auto &backend : backends_) std::cerr << backend->summary();
    if (energy_ && config_.stats) std::cerr << energy_->summary();
    if (fatal && config_.stats)
      std::cerr << "  (written at a fatal error, while tasks may still have run)\n";
  } catch (const std::exception &e) {
    std::cerr << "nanort: statistics or trace not written: " << e.what() << "\n";
  }
  std::cerr.flush();
}

Runtime::Runtime() {
  std::vector<std::string> warnings;
  config_ = read_config(warnings);
  topology_ = std::make_unique<Topology>();
  if (config_.cpu_workers <= 0)
    config_.cpu_workers = default_cpu_workers(
        topology_->usable_cpus(), topology_->logical_cpus(), local_rank_from_environment());
  // (Before anything that may push: device managers start with open_devices.)
  ready_ = std::make_unique<ReadyPath>(config_.cpu_workers, std::max(1, config_.cpu_workers) - 1,
                                       idle_, spare_idle_);
  // Spare threads run tasks with help_until as workers do, but sleep apart from them.
  spares_ = std::make_unique<SpareThreads>(
      spare_idle_, stopping_,
      [this](const std::function<bool()> &leave) { help_as_spare(leave); });
  placement_ = make_placement(config_.scheduler, config_.energy_rate);
  energy_policy_ = config_.scheduler == "energy";
  if (const auto why = affinity_.parse(config_.affinity))
    throw ConfigError("NANORT_AFFINITY: " + *why);
  if (config_.scheduler == "dmda" || energy_policy_) {
    perf_model_ = std::make_unique<PerfModel>();
    perf_model_path_ = default_perf_model_path();
    std::string why;
    if (!perf_model_path_.empty() && !perf_model_->load(perf_model_path_, why))
      warnings.push_back("performance model not used: " + why + " (it is rewritten at the end)");
  }
  ready_limit_ = config_.ready_per_worker * static_cast<std::size_t>(config_.cpu_workers);
  open_devices(warnings);
  if (config_.auto_host_register) {
    const MemoryLimit &limit = config_.host_register_limit;
    const double machine = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                           static_cast<double>(sysconf(_SC_PAGESIZE));
    HostLockCache::Options options;
    options.limit = limit.bytes ? limit.bytes : static_cast<std::size_t>(limit.fraction * machine);
    options.large_bytes = config_.host_register_large;
    options.piece_bytes = config_.host_register_piece;
    options.wait_for_large = config_.host_register_wait;
    host_registration_.start_auto(options, accelerators_, warnings);
  }
  for (const std::string &warning : warnings) std::cerr << "nanort: warning: " << warning << "\n";
  if (config_.stats || energy_policy_) {
    std::vector<EnergyMeter::Gpu> gpus;
    energy_gpu_.assign(accelerators_.size(), -1);
    for (std::size_t d = 0; d < accelerators_.size(); ++d)
      if (accelerators_[d]->kind() == NANORT_DEVICE_CUDA) {
        energy_gpu_[d] = static_cast<int>(gpus.size());
        gpus.push_back({accelerators_[d]->name(), accelerators_[d]->pci_bus_id()});
      }
    if (!gpus.empty()) energy_ = std::make_unique<EnergyMeter>(gpus);
  }

  // Lanes: one per pool thread, then one for waiting threads (the main thread's taskwait),
  // then one per device.
  std::vector<std::string> lanes;
  for (int i = 0; i + 1 < config_.cpu_workers; ++i)
    lanes.push_back("cpu worker " + std::to_string(i));
  lanes.push_back("cpu worker " + std::to_string(config_.cpu_workers - 1) +
                  " (waiting threads)");
  for (const auto &accelerator : accelerators_) lanes.push_back(accelerator->name());
  observer_ = std::make_unique<Observer>(config_.stats, config_.trace_path, std::move(lanes),
                                         config_.cpu_workers - 1);

  if (!accelerators_.empty()) {
    std::vector<dc::SpaceSettings> spaces;
    for (const auto &accelerator : accelerators_) {
      const std::size_t memory = accelerator->memory().memory_size();
      // What set the limit, for the messages of tasks that need more.
      const bool set = std::any_of(config_.device_memory.begin(), config_.device_memory.end(),
                                   [&](const MemoryLimit &m) {
                                     return m.device.empty() || m.device == accelerator->name();
                                   });
      spaces.push_back({&accelerator->memory(),
                        memory_limit_for(config_.device_memory, accelerator->name(), memory),
                        set ? "NANORT_DEVICE_MEMORY"
                            : "by default 90% of its " + dc::human_size(memory) +
                                  "; NANORT_DEVICE_MEMORY sets it"});
    }
    dc::DirectoryOptions options;
    options.staging_chunk = config_.staging_chunk;
    options.staging_threads = config_.staging_threads > 0
                                  ? config_.staging_threads
                                  : std::clamp(topology_->usable_cpus(), 2, 16);
    directory_ = std::make_unique<dc::Directory>(std::move(spaces), options);
    if (observer_->recording()) {
      copy_listener_ = std::make_unique<TraceCopies>(*observer_, config_.cpu_workers);
      directory_->set_listener(copy_listener_.get());
    }
    auto kind_of = [&](std::size_t d) { return accelerators_[d]->kind(); };
    for (std::size_t i = 0; i < accelerators_.size(); ++i) {
      Accelerator &accelerator = *accelerators_[i];
      const int device = static_cast<int>(i);
      managers_.push_back(std::make_unique<DeviceManager>(
          *this, *topology_, config_.stats, accelerator, *directory_, device,
          index_in_kind(kind_of, device), config_.cpu_workers + device,
          config_.device_in_flight > 0 ? config_.device_in_flight
          : accelerator.completes_in_order() ? 32 : 8));
    }
    managers_ready_.store(true, std::memory_order_release);  // managers_ complete from here
    DependencyDomain::set_early_across_kinds(config_.early_across ? early_across_kinds() : 0);
  }

  cpu_ = std::make_unique<CpuWorkerPool>(config_.cpu_workers, config_.bind_workers, *topology_,
                                         [this](int lane) { worker_loop(lane); });
}

Runtime::~Runtime() = default;

void Runtime::stop() {
  // Wait for the tasks of every thread, from here.
  std::vector<Task *> roots;
  {
    std::lock_guard<std::mutex> guard(roots_mutex_);
    roots = roots_;
  }
  for (Task *root : roots) {
    settle_owned(root, false);  // (replays a thread launched and never ended)
    wait_for_children(root, 0);
  }
  if (directory_) {
    try {
      directory_->flush();
    } catch (const std::exception &e) {
      std::cerr << "nanort: writing device data back at shutdown failed: " << e.what() << "\n";
    }
  }
  stopping_.store(true);
  idle_.notify_all();
  spare_idle_.notify_all();
  spares_->stop();
  managers_ready_.store(false, std::memory_order_release);  // managers_ is being emptied
  DependencyDomain::set_early_across_kinds(0);
  managers_.clear();  // each returns once its device is idle
  for (auto &accelerator : accelerators_) accelerator->quiesce();
  host_registration_.stop_auto(accelerators_);  // (no copy in flight any more)
  cpu_.reset();       // returns once no worker runs runtime code any more
  std::vector<Failure> uncollected;
  for (Task *root : roots) {
    for (Failure &failure : root->take_errors()) uncollected.push_back(std::move(failure));
    if (root->child_domain) root->child_domain->clear();
  }
  if (!uncollected.empty()) {
    std::cerr << "nanort: " << uncollected.size()
              << " task failure(s) not collected by any taskwait:\n";
    for (const Failure &failure : uncollected) std::cerr << "  " << failure.message << "\n";
    uncollected_failures_ = true;
  }
  report(false);
  if (perf_model_ && !perf_model_path_.empty()) {
    std::string why;
    if (!perf_model_->save(perf_model_path_, why))
      std::cerr << "nanort: warning: the performance model was not saved: " << why << "\n";
  }
  for (Task *root : roots) root->drop_ref();
  roots_.clear();
}

// ---------------------------------------------------------------------------------------------
// Host registration

void Runtime::host_register(void *address, std::size_t bytes) {
  host_registration_.add(address, bytes, accelerators_);
}

void Runtime::host_unregister(void *address) {
  host_registration_.remove(address, directory_.get(), accelerators_);
}

int Runtime::device_count(nanort_device_kind kind) const {
  if (kind == NANORT_DEVICE_SMP) return cpu_ ? cpu_->workers() : 0;
  return device_counts_[kind];
}

// ---------------------------------------------------------------------------------------------
// Devices

void Runtime::open_devices(std::vector<std::string> &warnings) {
  for (auto &queue : device_queues_) queue = make_scheduler(config_.scheduler);
  // Each backend lists, selects and opens its devices (device/backend.hpp); NANORT_REQUIRE is
  // checked against what each found and what went wrong.
  backends_ = make_backends();
  open_backends(backends_, config_, accelerators_, warnings);
  for (const auto &accelerator : accelerators_) ++device_counts_[accelerator->kind()];
  check_requirements(backends_, config_);
}

bool Runtime::is_device_task(const Task *task) const {
  return task->impl && task->impl->device != NANORT_DEVICE_SMP;
}

void Runtime::acquire_host_data(Task *task) {
  if (!directory_ || directory_->host_holds_everything()) return;
  std::vector<dc::DataAccess> data;
  for (const Access &access : task->accesses)
    data.push_back({access.region, access.mode != NANORT_OUT, access.mode != NANORT_IN});
  for (const Access &copy : task->copies)
    data.push_back({copy.region, copy.mode != NANORT_OUT, copy.mode != NANORT_IN});
  directory_->acquire_host(data);
}

int Runtime::current_worker() {
  const int lane = CpuWorkerPool::current_lane();
  if (lane >= 0) return lane;
  return tls_current ? config_.cpu_workers - 1 : -1;
}

bool Runtime::in_final() const { return tls_current && tls_current->is_final; }

const char *Runtime::scheduler_name() const { return config_.scheduler.c_str(); }

}  // namespace nanort::rt
