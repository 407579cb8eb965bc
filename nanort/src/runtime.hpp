// Runtime: ties the parts together. The start-up / shutdown sequence and the wiring of the
// parts (runtime.cpp); the life of a task: creation and submission, the ready path into the
// scheduler, execution on CPU workers, and waiting (ready/task_path.cpp). The parts live in
// the folders that name them: the
// backends (device/backend.hpp, cuda/, opencl/), the device managers and what they ask of the
// runtime (device/device_work.hpp, device/runtime_device_work.cpp), the implementation choice
// and placement (scheduler/runtime_placement.cpp), the CPU tasks' queues (ready/), spare
// threads for blocking calls (cpu/spare_threads.hpp), reductions (runtime_reductions.cpp),
// host registration (device/host_registration.hpp), statistics (observe/).
//
// Every thread outside the runtime's tasks (the main thread, threads the program starts) gets
// an implicit root task of its own, so that its tasks have a parent, a dependency domain and
// a place to collect failures for its next taskwait.
#pragma once

#include <nanort/nanort.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nanort/dc/directory.hpp>

#include "config.hpp"
#include "dependencies.hpp"
#include "device/device_work.hpp"
#include "device/host_registration.hpp"
#include "idle_waiters.hpp"
#include "ready/ready_path.hpp"
#include "scheduler/affinity.hpp"
#include "scheduler/task_costs.hpp"
#include "task.hpp"
#include "taskiter.hpp"

namespace nanort::rt {

class Accelerator;
class Backend;
class CpuWorkerPool;
class DeviceManager;
class EnergyMeter;
class Observer;
class PerfModel;
struct PerfKey;
class PlacementPolicy;
class SchedulerPolicy;
class SpareThreads;
class Topology;

// No device can run any implementation of a task.
struct NoDeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Children failed since the last taskwait; the message names each one.
struct TaskFailedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Runtime final : public DeviceWork {
 public:
  // The running runtime, started on first use. A bad environment (ConfigError) ends the
  // program with a message and exit status 1. Throws std::logic_error after shutdown.
  static Runtime &get();
  // Stops the runtime if it runs; false if it was never started or already stopped. Throws
  // TaskFailedError after the stop when task failures were left uncollected.
  static bool shutdown();
  // nanort_exit: ends the program with 'status' after a failure, statistics and trace written.
  [[noreturn]] static void exit_after_failure(int status);
  // nanort_task_fail: the task the calling thread runs has failed.
  static void fail_current_task(const char *message, void *payload, void (*destroy)(void *));
  // nanort_take_failure_payload: the payload of the first failure that the calling thread's
  // last taskwait collected, if not taken yet.
  static void *take_failure_payload();
  // Statistics and trace now, from what ran so far, while tasks may still run (a fatal error:
  // the program ends next). Once; the stop does not repeat them.
  void report_before_fatal_exit() override { report(true); }

  Task *create(const nanort_task_site *site, std::size_t args_size);
  nanort_status submit(Task *task);
  nanort_status taskwait(bool flush);
  nanort_status taskwait_on(const void *const *addresses, const std::size_t *sizes,
                            std::size_t count);
  // nanort_taskiter_begin / _end (taskiter.hpp): the calling task starts recording the tasks
  // it submits (null in a final task: nothing to record, the program runs its loop); then
  // waits for them, replays the recorded graph 'replays' times, one replay after the other,
  // and returns as taskwait_noflush does.
  TaskIter *taskiter_begin();
  nanort_status taskiter_end(TaskIter *iter, std::uint64_t replays);
  // The same, keeping 'iter' for more replays (nanort_taskiter_replay).
  // more: nanort_taskiter_launch (returns once they are under way; their results stay).
  nanort_status taskiter_replay(TaskIter *iter, std::uint64_t replays, bool more = false);
  // nanort_taskiter_update: the calling task's next submits update 'iter''s tasks.
  nanort_status taskiter_update(TaskIter *iter);
  // nanort_taskgraph_begin / _end: a recording kept per (construct, graph id), replayed at the
  // construct's later encounters.
  nanort_status taskgraph_begin(const void *construct, std::uint64_t graph_id, bool reset,
                                TaskIter **graph, bool &run_block);
  nanort_status taskgraph_end(TaskIter *graph, bool wait);
  // A task whose body returned while recording: the recording is dropped and the task fails.
  void end_abandoned_recording(Task *task);

  // Reductions (reduction.hpp): nanort_reduction_private; nanort_task_in_reduction's lookup
  // in the taskgroups around the calling task; the OpenMP taskgroup.
  static void *reduction_private(const void *original);
  ReductionInfo *find_taskgroup_reduction(Task *task, std::uintptr_t start, std::uintptr_t end,
                                          const ReductionOp &op);
  void taskgroup_begin();
  void taskgroup_reduction(std::uintptr_t start, std::uintptr_t end, const ReductionOp &op);
  void taskgroup_end();

  int device_count(nanort_device_kind kind) const;
  // nanort_block_until: the calling thread polls 'ready' until it returns nonzero; inside a
  // task, a spare thread runs other tasks meanwhile, so the CPU workers stay busy however many
  // tasks wait in a blocking call (MPI, I/O).
  void block_until(int (*ready)(void *), void *arg);
  // nanort_block_call: call(arg) in the calling thread, its worker's place handed to a spare
  // meanwhile as above (for a blocking call that is best made as it is, such as an MPI
  // collective whose blocking form MPI implements better than its non-blocking one).
  void blocking_call(void (*call)(void *), void *arg);
  // nanort_in_task: the calling thread runs a task's body.
  static bool in_task();
  // The task whose body the calling thread runs; null outside task bodies.
  static Task *running_task();
  // nanort_set_affinity.
  void set_affinity(const char *task, const char *place, double score) {
    affinity_.set(task, place, score);
  }
  // nanort_host_register / nanort_host_unregister.
  void host_register(void *address, std::size_t bytes);
  void host_unregister(void *address);
  // The CPU worker running the calling task: a pool thread's index, or the last index for a
  // thread that runs tasks while it waits. -1 outside tasks and pool threads.
  int current_worker();
  bool in_final() const;
  const Config &config() const { return config_; }
  const Topology &topology() const { return *topology_; }
  const char *scheduler_name() const;

  // The task whose body the calling thread runs, else the thread's root task.
  Task *current_task();

  // For device managers (device/device_work.hpp): the next ready task for a device, whether
  // any waits, the data a device task moves, its results home early, and a device task's
  // kernel launched, its time measured, its end (its failure already recorded).
  Task *pop_device_task(nanort_device_kind kind, int index, std::size_t device) override;
  bool device_work_waiting(nanort_device_kind kind) const override;
  void device_data(const Task &task, std::vector<dc::DataAccess> &data) const override;
  void device_task_done(Task *task, int lane, std::uint64_t start_ns, bool failed) override;
  bool write_back_now(const Task *task) const override {
    // (A task with accesses was registered in its parent's domain, which exists by then.)
    if (task->replayed)  // (the next replay reads what this one wrote: only the last goes home)
      return config_.eager_write_back && task->replay->last_replay() &&
             !task->replay->has_successors(task);
    // A recorded iteration's results: the replays after it write them again (before the
    // replays start, nothing in the runtime depends on them yet). They go home with the last
    // replay's, or at the flush.
    if (task->replay && task->replay_index != kGraphLauncher) return false;
    // Graph launches with more to come (nanort_taskiter_launch): the next ones read them.
    if (task->replay && !task->replay->last_replay()) return false;
    return config_.eager_write_back && !task->accesses.empty() && task->parent &&
           task->parent->child_domain && !task->parent->child_domain->has_successors(task);
  }
  void device_task_launched(Task *task, int device) override;
  void device_task_measured(const Task &task, int device, std::uint64_t nanoseconds,
                            bool ran) override;

  // The devices and the directory (null when there is no device), for nanort-info and tests.
  const std::vector<std::unique_ptr<Accelerator>> &accelerators() const { return accelerators_; }
  dc::Directory *directory() const { return directory_.get(); }
  // The ranges the runtime page-locked by itself (NANORT_HOST_REGISTER=auto); null when off.
  HostLockCache *auto_host_locks() { return host_registration_.auto_locks(); }
  // Device tasks released before their predecessors' kernels on several devices ended
  // (NANORT_EARLY_LAUNCH=across), since the start: for tests.
  std::uint64_t early_across_releases() const { return early_across_releases_.load(); }
  // Tasks device 'index' (as accelerators() numbers them) holds from its kind's shared queue
  // now (NANORT_DEVICE_LOOKAHEAD): for tests.
  std::size_t shared_load(std::size_t index) const;
  // dmda and energy: the time the performance model expects a task of 'site' with 'bytes' of
  // data (accesses and copies) to take on 'place' ("smp", or a device's model()); -1 while it
  // knows none (or no policy keeps a model): for tests.
  double expected_seconds(const nanort_task_site &site, const std::string &place,
                          std::uint64_t bytes) const;

 private:
  Runtime();
  // At submit: a task with reductions runs on a CPU worker; its reductions are checked and
  // those inside its parent's reductions combine into the parent's private copies.
  void prepare_reductions(Task *task, Task *parent) const;
  ~Runtime();
  void stop();

  void open_devices(std::vector<std::string> &warnings);
  bool choose_implementation(Task *task, std::string &why_not) const;
  bool choose_wanted_device(Task *task, std::string &why_not) const;
  bool is_device_task(const Task *task) const;
  void acquire_host_data(Task *task);
  // 'next', when given, may receive one ready task for the caller to run next.
  void push_ready(ReadyList &ready, Task **next = nullptr);
  // The placement policy chooses where 'task' runs (its implementation, and the device or the
  // CPU workers); the device's number goes to task->placed_device.
  void place(Task *task);
  // The device kinds (bits) with two devices or more, every pair of which copies directly
  // (DependencyDomain::set_early_across_kinds).
  std::uint32_t early_across_kinds() const;

  // Runs 'task', then each task it hands on to run next (a successor it released).
  // Runs 'task', then the successors handed to this thread one after another, until 'done'
  // holds or a waiting task outranks the next one: that one goes back to the queues.
  template <class Done>
  void run_from(Task *task, int lane, Done done);
  void run_body(Task *task, int lane);
  void execute(Task *task, int lane, Task **next);
  void run_included(Task *task);
  void not_run(Task *task);  // records that 'task' is not run after a failed predecessor
  void report(bool fatal);
  void finish_body(Task *task, Task **next);
  void complete(Task *task, Task **next);
  template <class Done>
  void help_until(int lane, Done done);
  template <class Done>
  void help_until(int lane, Done done, IdleWaiters &sleep_in);
  template <class Done>
  void wait_until(Done done);
  void help_as_spare(const std::function<bool()> &leave);  // a spare thread's loop
  // Runs tasks or sleeps until 'task' has at most 'at_most' unfinished children.
  void wait_for_children(Task *task, std::int64_t at_most);
  // Counts one more child of 'parent' in its 'alive' (from the thread running its body);
  // true when its children in flight passed the bound (NANORT_TASKS_IN_FLIGHT).
  bool count_child(Task *parent);
  static void give_back_credits(Task *task);
  void worker_loop(int lane);
  nanort_status collect_errors(Task *task);
  // Taskiter and taskgraph: the end of a recording (waits for its tasks; throws when it
  // cannot be replayed), and 'count' replays of a recorded graph by 'owner'.
  nanort_status end_recording(TaskIter *iter, Task *owner);
  // 'more': the last of them is not waited for (settle waits, at the next call on iter) and
  // its results stay on the devices (more replays follow).
  nanort_status replay(TaskIter *iter, Task *owner, std::uint64_t count, bool more = false);
  // Waits for a replay nanort_taskiter_launch left running (and, with 'collect', returns the
  // owner's failures, failing the taskiter); settle_owned: every one 'owner' left running.
  nanort_status settle(TaskIter *iter, Task *owner, bool collect = true);
  nanort_status settle_owned(Task *owner, bool collect);
  // Throws (naming 'call') unless 'iter' is a kept taskiter of 'owner'.
  void check_kept(TaskIter *iter, Task *owner, const char *call);
  // After a replay whose tasks all ran on one CUDA GPU: later replays are graph launches
  // there (NANORT_TASKITER_GRAPH); false when they cannot be.
  bool try_graph_replays(TaskIter *iter);

  Config config_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<PlacementPolicy> placement_;  // null: breadth-first places nothing
  std::unique_ptr<PerfModel> perf_model_;       // dmda only
  std::unique_ptr<EnergyMeter> energy_;         // NANORT_STATS or the energy policy, CUDA GPUs
  std::vector<int> energy_gpu_;  // per accelerator: its number in energy_, -1 if not a CUDA GPU
  bool energy_policy_ = false;
  AffinityTable affinity_;
  std::unique_ptr<SpareThreads> spares_;  // run tasks while tasks wait in blocking calls
  std::string perf_model_path_;
  PerfKey perf_key(const Task &task, std::string place) const;
  std::unique_ptr<Observer> observer_;
  std::vector<std::unique_ptr<Backend>> backends_;  // outlive their devices (OpenCL programs)
  // Devices, by device number: each with its memory space in the directory (space_of) and a
  // manager thread (device/device_numbering.hpp).
  std::vector<std::unique_ptr<Accelerator>> accelerators_;
  std::unique_ptr<dc::Directory> directory_;  // null without devices
  std::atomic<std::uint64_t> early_across_releases_{0};
  std::unique_ptr<dc::CopyListener> copy_listener_;
  std::unique_ptr<SchedulerPolicy> device_queues_[NANORT_DEVICE_KIND_COUNT];
  // What device tasks took, for kinds of several devices: the pace at which each device
  // takes tasks from their shared queue (scheduler/task_costs.hpp).
  TaskCosts task_costs_;
  int device_counts_[NANORT_DEVICE_KIND_COUNT] = {};
  std::vector<std::unique_ptr<DeviceManager>> managers_;
  std::atomic<bool> managers_ready_{false};  // every manager made (pop_device_task reads them)
  std::unique_ptr<CpuWorkerPool> cpu_;
  // Written while the program runs: each on a cache line of its own, away from the fields
  // above that every task creation reads.
  alignas(64) std::atomic<bool> stopping_{false};
  std::size_t ready_limit_ = 0;  // queued tasks past which creators run ready tasks at once
  alignas(64) IdleWaiters idle_;
  alignas(64) IdleWaiters spare_idle_;  // running spare threads sleep here (block_until)
  std::unique_ptr<ReadyPath> ready_;     // the CPU tasks' queues (ready/ready_path.hpp)
  std::mutex roots_mutex_;
  std::vector<Task *> roots_;
  alignas(64) std::atomic<std::int64_t> cpu_expected_ns_{0};  // dmda: queued CPU work
  std::mutex report_mutex_;                // held while statistics and trace are written
  bool reported_ = false;                  // under report_mutex_
  bool uncollected_failures_ = false;       // seen by stop()
  HostRegistration host_registration_;  // nanort_host_register
  // Taskiters whose recording ended and that nanort_taskiter_replay keeps for more replays.
  std::mutex taskiters_mutex_;
  std::vector<std::unique_ptr<TaskIter>> kept_taskiters_;
  std::atomic<int> replays_in_flight_{0};  // launched, not yet settled (settle_owned's test)
  // Taskgraphs: per (construct, graph id), the recording kept (null: none yet, or dropped
  // after a failure) and whether an encounter records or replays it now.
  struct TaskGraph {
    std::unique_ptr<TaskIter> graph;
    TaskIter *recording = nullptr;
    bool busy = false;
  };
  std::mutex taskgraphs_mutex_;
  std::map<std::pair<const void *, std::uint64_t>, TaskGraph> taskgraphs_;
};

}  // namespace nanort::rt
