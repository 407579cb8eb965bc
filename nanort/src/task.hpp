// Task: one instance of a task pragma, from creation to the release of its dependences.
//
// Life of a task:
//   created -> accesses registered in the parent's DependencyDomain -> (predecessors done)
//   ready -> pushed to the scheduler (or run by its creator when undeferred) -> body runs ->
//   body done and every child complete -> "complete": dependences released, parent told.
//
// Ownership is by reference count: one reference for the task's own life until complete, one
// for each dependency-graph fragment that remembers it, one for each thread waiting on it.
#pragma once

#include <nanort/dc/memory_space.hpp>
#include <nanort/dc/region.hpp>
#include <nanort/nanort.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "small_vector.hpp"
#include "spin_lock.hpp"

namespace nanort::rt {

class DependencyDomain;
class TaskIter;
struct TaskReductions;
struct TaskgroupScope;

// Task::early_device besides a device number (device/device_numbering.hpp).
// Task::replay_index of a task that launches a taskiter's replays as CUDA Graphs.
constexpr std::uint32_t kGraphLauncher = 0xffffffffu;
constexpr int kEarlyNone = -1;       // no launched predecessor counted yet
constexpr int kEarlyNever = -2;      // a predecessor it cannot be launched behind
constexpr int kEarlyAnyDevice = -3;  // launched predecessors on several devices of its kind

struct Access {
  dc::Region region;
  nanort_access_mode mode;
};

// The mode of an OmpSs-2 reduction access among siblings (not one that nanort_task_access
// takes: a reduction needs its operator, nanort_task_reduction).
constexpr nanort_access_mode kReductionAccess = static_cast<nanort_access_mode>(6);

// A failure of a task: what to report, and what the language layer that ran the task handed
// over with it (nanort_task_fail: the C++ header's exception, rethrown at the taskwait that
// collects it). The payload is destroyed with the failure unless it is taken.
struct Failure {
  std::string message;
  void *payload = nullptr;
  void (*destroy)(void *) = nullptr;

  explicit Failure(std::string text, void *data = nullptr, void (*destroy_data)(void *) = nullptr)
      : message(std::move(text)), payload(data), destroy(destroy_data) {}
  Failure(Failure &&other) noexcept
      : message(std::move(other.message)), payload(other.payload), destroy(other.destroy) {
    other.payload = nullptr;
  }
  Failure &operator=(Failure &&other) noexcept {
    if (this != &other) {
      drop_payload();
      message = std::move(other.message);
      payload = other.payload;
      destroy = other.destroy;
      other.payload = nullptr;
    }
    return *this;
  }
  ~Failure() { drop_payload(); }
  void *take_payload() {
    void *taken = payload;
    payload = nullptr;
    return taken;
  }

 private:
  void drop_payload() {
    if (payload && destroy) destroy(payload);
    payload = nullptr;
  }
};

// Failures of children, kept until the parent's next taskwait.
struct ErrorList {
  std::mutex mutex;
  std::vector<Failure> failures;
};

struct Task {
  static constexpr std::size_t kInlineArgs = 96;

  // The fields are ordered so that creating and running a task touch as few cache lines as
  // possible (a task's memory usually comes from another thread's cache): the header that
  // every task uses first, then the inline argument block, then what only some tasks need.
  //
  // The first line, to 'args', is the one that the thread running a CPU task writes (and
  // 'alive' if it made children): its reference count, dependence state and flags. Its
  // creator writes the task again once it ended (forgetting its fragments, reusing its
  // memory), so the fewer lines both write, the fewer move between their caches; the end of a
  // task writes the lines after this one only where something changes (child_domain,
  // finished, successors).
  std::atomic<int> refs{1};

  // Dependences (DependencyDomain), guarded by the parent's domain lock except where said.
  // Unfinished predecessors, plus one until registration ends; a release without the domain
  // lock decrements it too.
  std::atomic<int> pending{1};
  // Dependences released: successors no longer wait for it. Set, and 'successors' taken and
  // added to, under 'successors_lock' (as well as the domain lock, except by a release
  // without it).
  std::atomic<bool> released{false};
  mutable SpinLock successors_lock;
  bool has_commutative = false;
  // A successor whose release needs nothing but its count (a CPU task, not commutative):
  // predecessors whose successors are all such release them without the domain lock.
  bool plain_successor = false;
  // It created children (Runtime::count_child, by the thread running its body): only then
  // does 'alive' count more than its body, and only then does the end of its body write that
  // line (finish_body), which otherwise stays with its creator.
  bool counted_children = false;
  // Registered in its parent's domain (it has accesses), and given a successor there (set
  // with 'successors', under successors_lock): the end of a task reads these here instead of
  // the vectors' headers, on a line the running thread would otherwise not touch.
  bool in_domain = false;
  bool has_successors = false;
  // Replayed from a taskiter's recording: its end counts down its successors there.
  bool replayed = false;
  Task *prune_next = nullptr;  // in its domain's list of fragments to forget (DependencyDomain)

  // Flags.
  bool undeferred = false;         // if(0): run by the creating thread
  bool is_final = false;
  // replayable(0) (OpenMP 6.0): in a taskiter's or taskgraph's body it runs as written and is
  // not recorded, so no replay repeats it.
  bool replayable = true;
  bool counted_in_parent = true;   // false: run at once by its creator, not a pending child
  bool args_constructed = false;   // site->args_destroy still owed
  std::atomic<bool> ready_for_creator{false};
  // Read on every task's way to a queue (the rest of the device and placement fields are
  // further down, with the cold ones).
  bool early_released = false;  // went to 'early_device' before its predecessors ended
  int placed_device = -1;       // the one device it runs on (a device number), if chosen
  int wanted_kind = -1;         // nanort_task_set_device: a nanort_device_kind, and an index
  int wanted_index = -1;        // in that kind (device/device_numbering.hpp)
  int launched_on = -1;         // where its kernel was launched (read by every release)
  // Set, under the domain lock, when a predecessor failed or was not run: the task is not run
  // either, and this says which predecessor ("task 'a' (f.c:3), which failed").
  std::unique_ptr<std::string> not_run_after;

  unsigned char *args = nullptr;

  // What and where.
  const nanort_task_site *site = nullptr;
  const char *label = nullptr;
  const char *file = nullptr;
  const nanort_task_impl *impl = nullptr;  // chosen at submit
  Task *parent = nullptr;
  int line = 0;
  int priority = 0;

  // Counts taken in 'alive' ahead for children not created yet (Runtime::count_child): the
  // creator adds to that contended line once per batch of children, not once per child. Only
  // the thread running the body (or a root's thread) changes it; the rest goes back when the
  // body ends and before it waits, so that waiters and completing children see exact counts.
  // Atomic (plain loads and stores on the creator's path) because the stop gives back the
  // credits of other threads' roots, threads that may have ended with no ordering to the stop.
  std::atomic<std::int64_t> child_credits{0};
  std::size_t args_size = 0;

  std::unique_ptr<DependencyDomain> child_domain;  // created with the first child
  std::atomic<ErrorList *> errors{nullptr};        // created with the first failure

  // Set once complete, for a creator waiting for this task alone (an undeferred device task;
  // set for undeferred tasks only).
  std::atomic<bool> finished{false};
  // Its body or kernel failed (set before its dependences are released).
  bool failed = false;
  // Launched early behind a kernel that then failed (read and written under the domain lock):
  // the tasks after it are not run. (Here, by 'failed': every release reads both.)
  bool ran_behind_failure = false;

  // Reductions it takes part in (nanort_task_reduction, nanort_task_in_reduction).
  std::unique_ptr<TaskReductions> reductions;
  // The innermost OpenMP taskgroup its body is in: one it opened, else its creator's when it
  // was created (so that in_reduction finds the taskgroup's reductions from any depth).
  TaskgroupScope *taskgroup = nullptr;
  // The creator's, as it was at creation: the scopes above it in 'taskgroup' are the task's own.
  // (Told apart by address, never by reading the creator's scope: that one may be gone by the
  // time the task is destroyed, its taskgroup ended once the task completed.)
  TaskgroupScope *inherited_taskgroup = nullptr;

  // Taskiter (taskiter.hpp): the recording this task's body makes of the tasks it submits;
  // for a task replayed from a recording ('replayed' above), that recording and the task's
  // place in it; for a task recorded ('replayed' false), the recording it is in (its launch
  // tells where the recorded iteration ran); for a task that launches whole replays as CUDA
  // Graphs ('replayed' false, replay_index kGraphLauncher), the recording it launches.
  // (Also while the body makes an update of that recording, nanort_taskiter_update: then the
  // tasks it submits give their argument blocks to the recorded ones instead of running.)
  TaskIter *recording = nullptr;
  TaskIter *replay = nullptr;  // (its place in it: replay_index, below)

  // Argument block: inline when small, 16-byte aligned either way.
  alignas(16) unsigned char inline_args[kInlineArgs];

  SmallVector<Task *, 2> successors;  // guarded by successors_lock (see 'released')
  SmallVector<Access, 4> accesses;

  // What only device tasks, placement, failures and copies need (written when the task is
  // made, but on lines of their own that a CPU task's life does not touch again).
  // Early start behind kernels in flight on devices that run their kernels in launch order
  // (DependencyDomain::launched), guarded by the same lock: where the task's kernel was
  // launched; for a successor, the device its launched predecessors share (kEarlyNone none
  // yet, kEarlyAnyDevice several that wait for each other's kernels, kEarlyNever one it
  // cannot follow) and how many of its unfinished predecessors those are (early_released,
  // placed_device above).
  std::int64_t expected_ns = 0;  // dmda: its expected time, counted in its place's queued work
  bool from_shared_queue = false;  // a device's manager took it from its kind's queue
  bool copy_deps = true;  // copy_deps: see 'copies' below (here, in a padding hole)
  int early_device = kEarlyNone;
  int pending_launched = 0;
  std::uint32_t replay_index = 0;  // taskiter: its place in 'replay' (here, in a padding hole)
  // The end of its kernel once launched (for successors launched behind it to wait for on
  // their device); dropped when its dependences are released.
  dc::CompletionPtr launch_done;
  // Its launched predecessors' kernel ends and the devices they run on: a task launched
  // behind them waits for them on its device.
  std::vector<std::pair<int, dc::CompletionPtr>> early_after;

  int ndrange_dims = 0;            // device launch: valid dimensions of the arrays below
  std::size_t shmem_bytes = 0;     // device launch: dynamic shared memory

  // Device data: copy clauses (copy_in/out/inout), and whether the dependences are copied
  // too (copy_deps, the default).
  SmallVector<Access, 1> copies;

  // Device launch: the index space.
  std::size_t ndrange_global[3];
  std::size_t ndrange_local[3];

  // The body while it runs, plus each child not yet complete, plus kWaiter for each thread
  // waiting for the children (so that completing children know whether to wake anyone). On
  // a line of its own: the creator of children adds and the threads completing them
  // subtract, all the time, and that must not evict the fields above that everyone reads.
  // Written only once 'counted_children' is set (a task without children ends its body
  // without touching it).
  static constexpr std::int64_t kWaiter = std::int64_t(1) << 40;
  alignas(64) std::atomic<std::int64_t> alive{1};

  // Children not yet complete, seen from the task's own body (or from a root's thread).
  std::int64_t children() const {
    return alive.load(std::memory_order_acquire) % kWaiter - 1 -
           child_credits.load(std::memory_order_relaxed);
  }


  static void *operator new(std::size_t bytes);
  static void operator delete(void *memory) noexcept;

  Task() = default;
  Task(const Task &) = delete;
  Task &operator=(const Task &) = delete;
  ~Task();

  void add_ref() { refs.fetch_add(1, std::memory_order_relaxed); }
  void drop_ref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  DependencyDomain &domain_for_children();
  void destroy_args();
  // Failures of children: recorded from any thread, taken (and forgotten) by the task.
  void record_error(std::string message) { record_failure(Failure(std::move(message))); }
  void record_failure(Failure failure);
  std::vector<Failure> take_errors();
  // "'label' (file:line)" for messages.
  std::string describe() const { return describe(label, file, line); }
  static std::string describe(const char *label, const char *file, int line);
};

}  // namespace nanort::rt
