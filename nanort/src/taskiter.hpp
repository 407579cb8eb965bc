// TaskIter: the tasks of one iteration of a loop, recorded as its body creates them, then run
// again as a graph whose dependences were matched once (OmpSs-2 taskiter; nanort_taskiter_*).
//
// Recording: while a task (or a program thread) records, every task it submits runs as usual
// and, unless it is not replayable (replayable(0): run, not recorded), is also copied here:
// its site, chosen implementation, argument block as it was at submit (the firstprivate values
// stay those of the recorded iteration), accesses, copies and launch settings. The end of the
// recording waits for those tasks (as taskwait noflush does), matches their accesses once into
// edges between them, and replays the graph: each replay resets the same Task objects (no
// allocation, no dependency domain), releases the roots, and each task that completes counts
// down its successors (Runtime::complete). Replays run one after the other: a replay starts
// once every task of the one before has completed, which orders every access of an iteration
// after every access of the iteration before it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "spin_lock.hpp"
#include "task.hpp"

namespace nanort::rt {

class TaskIter {
 public:
  explicit TaskIter(Task *owner) : owner_(owner), id_(next_id_.fetch_add(1) + 1) {}
  // Unique in the process (an address may be reused by a later recording).
  std::uint64_t id() const { return id_; }
  ~TaskIter();
  TaskIter(const TaskIter &) = delete;
  TaskIter &operator=(const TaskIter &) = delete;

  Task *owner() const { return owner_; }
  // The graph was matched and its tasks made (before the first replay).
  bool built() const { return !tasks_.empty() || recorded_.empty(); }
  // A task the owner submits while recording. Throws std::invalid_argument, naming the task,
  // for what a replay cannot repeat (arguments that need a destructor, reductions); the
  // recording is then spoiled: end() replays nothing and says why.
  void record(Task &task);
  // A recorded task's kernel was launched on 'device' (Runtime::device_task_launched).
  void recorded_launch(int device) { note_launch(device); }
  // The task launches this recording's replays as CUDA Graphs.
  static bool is_graph_launcher(const Task &task) {
    return task.replay && !task.replayed && task.replay_index == kGraphLauncher;
  }
  // Why the recording cannot be replayed; empty when it can.
  const std::string &spoiled() const { return spoiled_; }

  // OmpSs-2's update clause (nanort_taskiter_update): the body runs again, and the replayable
  // tasks its owner submits meanwhile are not run: each gives its argument block to the
  // recorded task at its place (the k-th submitted to the k-th recorded), for the next replay.
  // update() throws std::invalid_argument, naming the task, for one that is not the recorded
  // one (its construct, data, device or launch size differ) or one too many; finish_update()
  // for too few; unrecorded_in_update() for a task that is not replayable and names data
  // (it runs at once; those without data run as usual). Each spoils the taskiter: nothing
  // more is replayed.
  void begin_update();
  void update(const Task &task);
  void unrecorded_in_update(const Task &task);
  // The update is complete: its blocks become the recorded ones, and the replayed tasks'
  // own (they are between replays).
  void finish_update();
  void discard_update() {
    update_args_.clear();
    updated_ = 0;
    updating_ = false;
  }
  bool updating() const { return updating_; }
  std::size_t size() const { return recorded_.size(); }

  // Matches the recorded accesses into edges (once, before the first replay).
  void build();
  // The Task objects every replay runs, made once by 'create' (Runtime::create) and set as
  // submit would set the recorded ones.
  void make_tasks(const std::function<Task *(const nanort_task_site *, std::size_t)> &create);
  // One more run of the graph by 'owner' (the replayed tasks' parent: a taskgraph's later
  // encounters may come from other tasks): its roots in 'roots'; 'last' marks the final
  // replay (results may then go home early). The caller pushes the roots and waits for
  // replay_done().
  void arm(std::vector<Task *> &roots, bool last, Task *owner);
  // Every task of the current replay has completed and no thread touches them any more.
  bool replay_done() const;
  // A replayed task completed: its successors that wait for nothing more go to 'ready'.
  // A task that failed (or was not run) keeps its successors from running, and no replay
  // follows this one.
  template <class ReadyList>
  void completed(Task *task, ReadyList &ready);
  // A replayed task's kernel was launched on 'device' (which runs its kernels in launch
  // order): its successors of the same kind whose unfinished predecessors were all launched
  // there go to 'ready' now, to be launched behind those kernels (as the dependency domain
  // does for submitted tasks), instead of waiting for the host to see them end.
  template <class ReadyList>
  void launched(Task *task, int device, ReadyList &ready);
  // Then, once its successors are on their way: resets the task for the next replay and
  // counts it down; true for the last task of the replay. (Replayed tasks are not counted
  // among their creator's children: one shared count per task is enough, and the creator
  // waits on this one.)
  bool ended(Task *task);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  bool last_replay() const { return last_; }
  void set_last(bool last) { last_ = last; }
  // A replay left running by nanort_taskiter_launch (the owner's thread only): the next call
  // on the taskiter waits for it (Runtime::settle): a graph launcher where graph_device >= 0,
  // else the replayed tasks themselves.
  std::atomic<bool> in_flight{false};  // (read by other owners' settle_owned)
  // The task has successors in the graph (its results are read again within the iteration).
  bool has_successors(const Task *task) const {
    return !recorded_[task->replay_index].successors.empty();
  }
  // One launch per replay (a CUDA Graph, CudaDevice::launch): the device every recorded task
  // was launched on, when they were all device tasks launched on one device; else -1. Read
  // once the recording has ended.
  int one_device() const;
  // The replayed tasks, in recorded order (each after its predecessors): a graph launch reads
  // their kernels and argument blocks.
  const std::vector<Task *> &tasks() const { return tasks_; }
  // The data of a whole replay as few accesses: the bytes its tasks move (rows of a block
  // region each), overlapping spans merged, each written (inout) where any task writes part
  // of it, else read.
  std::vector<Access> merged_accesses() const;
  // Whether each task's data starts a multiple of 'alignment' bytes into the merged span that
  // holds it (of 'merged', from merged_accesses): an OpenCL device can give a kernel a buffer
  // only at such an offset into an allocation.
  bool starts_aligned(const std::vector<Access> &merged, std::size_t alignment) const;

  // Set by the runtime (Runtime::replay, the owner's thread only): the device of graph
  // launches (-1 not decided, -2 never), its index among the CUDA GPUs, and the accesses of
  // each launch. Decided from where the recorded iteration's tasks ran.
  int graph_device = -1;
  int graph_index = 0;
  std::vector<Access> graph_accesses;
  // By the device that launches the graphs: how often one was captured (and instantiated) for
  // this recording, or an OpenCL command buffer recorded, and how often an instantiated CUDA
  // Graph only took new kernel parameters.
  std::atomic<int> graph_captures{0}, graph_updates{0};
  void fail() { failed_.store(true, std::memory_order_release); }
  // Its owner returned while it recorded: no call may use it any more.
  void abandon() { owner_ = nullptr; }

 private:
  struct Recorded {
    const nanort_task_site *site;
    const nanort_task_impl *impl;
    const char *label, *file;
    int line, priority;
    bool is_final, copy_deps;
    bool undeferred;  // if(0): the tasks after it were created once it had ended
    int wanted_kind, wanted_index, placed_device;  // placed_device: by nanort_task_set_device
    std::vector<unsigned char> args;
    std::vector<Access> accesses, copies;
    int ndrange_dims;
    std::size_t ndrange_global[3], ndrange_local[3];
    std::size_t shmem_bytes;
    std::vector<std::uint32_t> successors;  // indices, after build()
    int predecessors = 0;
  };
  static void reset(Task &task, const Recorded &recorded, Task *owner);
  [[noreturn]] void refuse_in_update(const Task &task, const std::string &why);
  static std::string describe_recorded(const Recorded &recorded);
  // Early launch (under early_lock_): the successor counts a launched predecessor, and goes
  // to 'ready' once every unfinished predecessor is one launched on its device.
  void count_launched(Task *successor, const Task *predecessor);
  template <class ReadyList>
  void try_early(Task *task, ReadyList &ready);

  Task *owner_;
  const std::uint64_t id_;
  static inline std::atomic<std::uint64_t> next_id_{0};
  std::vector<Recorded> recorded_;
  std::string spoiled_;
  std::vector<Task *> tasks_;  // one per recorded task, reused by every replay
  // An update under way: the argument blocks given so far, in recorded order.
  std::vector<std::vector<unsigned char>> update_args_;
  std::size_t updated_ = 0;
  bool updating_ = false;
  std::atomic<std::size_t> left_{0};  // tasks of the current replay not yet completed
  std::atomic<bool> failed_{false};
  std::mutex failure_mutex_;
  bool last_ = false;
  // A task of the graph may run on a device: completions then take early_lock_, as launches
  // do (a graph of CPU tasks counts its successors down without it).
  bool any_device_ = false;
  SpinLock early_lock_;
  // Launches of the recorded tasks (recorded_launch): how many, and on which device (-1 none
  // yet, -2 several).
  std::atomic<std::size_t> launches_{0};
  std::atomic<int> launch_device_{-1};
  void note_launch(int device) {
    launches_.fetch_add(1, std::memory_order_relaxed);
    int seen = -1;
    if (!launch_device_.compare_exchange_strong(seen, device, std::memory_order_relaxed) &&
        seen != device)
      launch_device_.store(-2, std::memory_order_relaxed);
  }
};

template <class ReadyList>
void TaskIter::completed(Task *task, ReadyList &ready) {
  const Recorded &recorded = recorded_[task->replay_index];
  const bool ran = !task->failed && !task->not_run_after;
  if (!ran) {
    failed_.store(true, std::memory_order_release);
    // (Several predecessors may end at once: one of them names itself.)
    std::lock_guard<std::mutex> guard(failure_mutex_);
    for (std::uint32_t s : recorded.successors)
      if (!tasks_[s]->not_run_after)
        tasks_[s]->not_run_after = std::make_unique<std::string>(
            task->describe() + (task->failed ? ", which failed" : ", which was not run"));
  }
  if (!any_device_) {
    for (std::uint32_t s : recorded.successors)
      if (tasks_[s]->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
        ready.push_back(tasks_[s]);
    return;
  }
  std::lock_guard<SpinLock> guard(early_lock_);
  for (std::uint32_t s : recorded.successors) {
    Task *successor = tasks_[s];
    if (task->launched_on >= 0 && successor->early_device == task->launched_on)
      --successor->pending_launched;
    if (successor->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (!successor->early_released) ready.push_back(successor);
    } else {
      try_early(successor, ready);
    }
  }
  task->launch_done.reset();  // the successors that wait for it hold their own
}

template <class ReadyList>
void TaskIter::try_early(Task *task, ReadyList &ready) {
  if (task->early_released || task->not_run_after || task->early_device < 0 ||
      task->pending.load(std::memory_order_relaxed) != task->pending_launched)
    return;
  task->early_released = true;
  ready.push_back(task);
}

template <class ReadyList>
void TaskIter::launched(Task *task, int device, ReadyList &ready) {
  std::lock_guard<SpinLock> guard(early_lock_);
  task->launched_on = device;
  for (std::uint32_t s : recorded_[task->replay_index].successors) {
    count_launched(tasks_[s], task);
    try_early(tasks_[s], ready);
  }
}

}  // namespace nanort::rt
