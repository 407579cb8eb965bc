#include "taskiter.hpp"

#include "dependencies.hpp"
#include "reduction.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <stdexcept>

namespace nanort::rt {

namespace {

// Some byte of 'a' is a byte of 'b'.
bool overlaps(const dc::Region &a, const dc::Region &b) {
  if (a.empty() || b.empty() || a.last_end() <= b.first() || b.last_end() <= a.first())
    return false;
  if (a.is_contiguous() && b.is_contiguous()) return true;
  bool found = false;
  a.for_each_range([&](std::uintptr_t a0, std::uintptr_t a1) {
    if (found || a1 <= b.first() || b.last_end() <= a0) return;
    b.for_each_range([&](std::uintptr_t b0, std::uintptr_t b1) {
      found = found || (a0 < b1 && b0 < a1);
    });
  });
  return found;
}

// A writer that every later access of its bytes follows, and that follows every earlier one
// (not so a concurrent access: the other concurrent ones do not wait for it).
bool shadows(nanort_access_mode mode) { return mode != NANORT_IN && mode != NANORT_CONCURRENT; }

// Two accesses of the same bytes that must happen in program order.
bool ordered(nanort_access_mode earlier, nanort_access_mode later) {
  if (earlier == NANORT_IN && later == NANORT_IN) return false;
  if (earlier == NANORT_CONCURRENT && later == NANORT_CONCURRENT) return false;
  return true;  // (commutative ones one after the other: an order, which is one of theirs)
}

}  // namespace

TaskIter::~TaskIter() {
  for (Task *task : tasks_) task->drop_ref();
}

void TaskIter::record(Task &task) {
  std::string refused;
  if (task.reductions)
    refused = "has a reduction (a replay cannot combine its private copies again)";
  else if (task.site && task.site->args_destroy)
    refused = "has arguments with a destructor (C++ captures): a replay repeats its argument "
              "block byte for byte";
  if (!refused.empty()) {
    if (spoiled_.empty()) spoiled_ = task.describe() + " " + refused;
    throw std::invalid_argument(task.describe() + " in a taskiter " + refused);
  }
  Recorded r;
  r.site = task.site;
  r.impl = task.impl;
  r.label = task.label;
  r.file = task.file;
  r.line = task.line;
  r.priority = task.priority;
  r.is_final = task.is_final;
  r.undeferred = task.undeferred;
  r.copy_deps = task.copy_deps;
  r.wanted_kind = task.wanted_kind;
  r.wanted_index = task.wanted_index;
  r.placed_device = task.placed_device;  // (before any policy places it: only a wanted device)
  r.args.assign(task.args, task.args + task.args_size);
  r.accesses.assign(task.accesses.begin(), task.accesses.end());
  r.copies.assign(task.copies.begin(), task.copies.end());
  r.ndrange_dims = task.ndrange_dims;
  std::copy(task.ndrange_global, task.ndrange_global + 3, r.ndrange_global);
  std::copy(task.ndrange_local, task.ndrange_local + 3, r.ndrange_local);
  r.shmem_bytes = task.shmem_bytes;
  recorded_.push_back(std::move(r));
  task.replay = this;  // (its launch is counted: recorded_launch)
  task.replay_index = static_cast<std::uint32_t>(recorded_.size() - 1);
}

void TaskIter::begin_update() {
  update_args_.resize(recorded_.size());
  updated_ = 0;
  updating_ = true;
}

void TaskIter::refuse_in_update(const Task &task, const std::string &why) {
  const std::string what = task.describe() + " in a taskiter's update " + why;
  if (spoiled_.empty()) spoiled_ = what;
  fail();
  throw std::invalid_argument(what);
}

void TaskIter::unrecorded_in_update(const Task &task) {
  // It would run now, while the recorded tasks of its iteration run only at the replay (and
  // the replay before may still run): nothing would order it against them.
  if (!task.accesses.empty() || !task.copies.empty() || task.reductions)
    refuse_in_update(task, "is not replayable and names data: it would run at once, unordered "
                           "against the replayed tasks of its iteration (their updated bodies "
                           "run at the replay)");
}

void TaskIter::update(const Task &task) {
  const auto refuse = [&](const std::string &why) { refuse_in_update(task, why); };
  if (updated_ >= recorded_.size())
    refuse("is task " + std::to_string(updated_ + 1) + " of an iteration that recorded " +
           std::to_string(recorded_.size()) + ": an updated iteration must create the same "
           "tasks (and the same ones replayable)");
  const Recorded &r = recorded_[updated_];
  const std::string place = "(task " + std::to_string(updated_ + 1) + " of the iteration, "
                            "recorded as " + describe_recorded(r) + ")";
  if (task.site != r.site) refuse("is not the recorded task at its place " + place);
  const auto same = [](const std::vector<Access> &a, const auto &b) {
    if (a.size() != b.size()) return false;
    std::size_t i = 0;
    for (const Access &x : b) {
      const Access &y = a[i++];
      if (x.mode != y.mode || x.region.address != y.region.address ||
          x.region.row_bytes != y.region.row_bytes || x.region.rows != y.region.rows ||
          x.region.stride != y.region.stride)
        return false;
    }
    return true;
  };
  if (!same(r.accesses, task.accesses) || !same(r.copies, task.copies) ||
      task.copy_deps != r.copy_deps)
    refuse("accesses other data than recorded " + place + ": its dependences were matched "
           "once, on the recorded data");
  if (task.args_size != r.args.size())
    refuse("has an argument block of " + std::to_string(task.args_size) + " bytes, not " +
           std::to_string(r.args.size()) + " as recorded " + place);
  const int dims = std::max(0, std::min(3, r.ndrange_dims));
  if (task.ndrange_dims != r.ndrange_dims || task.shmem_bytes != r.shmem_bytes ||
      !std::equal(r.ndrange_global, r.ndrange_global + dims, task.ndrange_global) ||
      !std::equal(r.ndrange_local, r.ndrange_local + dims, task.ndrange_local))
    refuse("has another launch size (ndrange or shmem) than recorded " + place);
  if (task.wanted_kind != r.wanted_kind || task.wanted_index != r.wanted_index ||
      task.placed_device != r.placed_device)
    refuse("asks for another device than recorded " + place);
  if (task.undeferred != r.undeferred || task.is_final != r.is_final)
    refuse("has another if or final value than recorded " + place);
  update_args_[updated_].assign(task.args, task.args + task.args_size);
  ++updated_;
}

void TaskIter::finish_update() {
  updating_ = false;
  if (!spoiled_.empty()) {  // (said at the submit that spoiled it; the replay says it again)
    discard_update();
    return;
  }
  if (updated_ != recorded_.size()) {
    const std::string what = "taskiter: an updated iteration created " +
                             std::to_string(updated_) + " tasks, the recorded one " +
                             std::to_string(recorded_.size()) + " (" +
                             describe_recorded(recorded_[updated_]) + " and after it are "
                             "missing): an updated iteration must create the same tasks (and "
                             "the same ones replayable)";
    if (spoiled_.empty()) spoiled_ = what;
    fail();
    discard_update();
    throw std::invalid_argument(what);
  }
  for (std::size_t k = 0; k < recorded_.size(); ++k) {
    recorded_[k].args.swap(update_args_[k]);
    // (Between replays: the task was reset with the old block when it ended.)
    if (k < tasks_.size() && !recorded_[k].args.empty())
      std::memcpy(tasks_[k]->args, recorded_[k].args.data(), recorded_[k].args.size());
  }
  discard_update();
}

std::string TaskIter::describe_recorded(const Recorded &r) {
  return Task::describe(r.label, r.file, r.line);
}

void TaskIter::build() {
  // As the dependency domain matches siblings, once: per region named (its exact bytes), the
  // last writer and the readers and concurrent accesses since. An access follows what it
  // must among those of every region it overlaps; only a writer of the same region replaces
  // that region's state (what it replaces is ordered before it already). Regions are kept by
  // their first byte, so that those an access overlaps are found without a scan of them all.
  struct Entry {
    std::uint32_t task;
    nanort_access_mode mode;
  };
  struct State {
    dc::Region region;
    bool has_writer = false;
    Entry writer{};
    std::vector<Entry> readers, concurrent;  // since the writer
  };
  using Key = std::tuple<std::uintptr_t, std::size_t, std::size_t, std::size_t>;
  std::map<Key, State> regions;
  std::size_t widest = 0;  // the largest last_end - first of any region kept
  std::vector<std::uint32_t> before;
  // The latest if(0) task: its creator ran it before creating the next ones, so they follow
  // it in a replay too (which runs it as any task); the earlier ones follow it through it.
  std::int64_t last_undeferred = -1;
  for (std::size_t v = 0; v < recorded_.size(); ++v) {
    before.clear();
    if (last_undeferred >= 0) before.push_back(static_cast<std::uint32_t>(last_undeferred));
    const auto follow = [&](const Entry &earlier, nanort_access_mode mode) {
      if (earlier.task != v && ordered(earlier.mode, mode)) before.push_back(earlier.task);
    };
    for (const Access &access : recorded_[v].accesses) {
      const dc::Region &r = access.region;
      if (r.empty()) continue;
      const std::uintptr_t from = r.first() > widest ? r.first() - widest : 0;
      for (auto it = regions.lower_bound(Key{from, 0, 0, 0});
           it != regions.end() && std::get<0>(it->first) < r.last_end(); ++it) {
        const State &state = it->second;
        if (!overlaps(state.region, r)) continue;
        if (state.has_writer) follow(state.writer, access.mode);
        if (access.mode != NANORT_IN)  // (readers among themselves need no order)
          for (const Entry &reader : state.readers) follow(reader, access.mode);
        if (access.mode != NANORT_CONCURRENT)
          for (const Entry &member : state.concurrent) follow(member, access.mode);
      }
      State &own = regions[Key{r.address, r.row_bytes, r.rows, r.stride}];
      own.region = r;
      widest = std::max(widest, static_cast<std::size_t>(r.last_end() - r.first()));
      const Entry entry{static_cast<std::uint32_t>(v), access.mode};
      if (shadows(access.mode)) {
        own.has_writer = true;
        own.writer = entry;
        own.readers.clear();
        own.concurrent.clear();
      } else {
        (access.mode == NANORT_IN ? own.readers : own.concurrent).push_back(entry);
      }
    }
    if (recorded_[v].undeferred) last_undeferred = static_cast<std::int64_t>(v);
    std::sort(before.begin(), before.end());
    before.erase(std::unique(before.begin(), before.end()), before.end());
    recorded_[v].predecessors = static_cast<int>(before.size());
    for (std::uint32_t u : before) recorded_[u].successors.push_back(static_cast<std::uint32_t>(v));
  }
}

void TaskIter::reset(Task &task, const Recorded &r, Task *owner) {
  // What a task's life changes, back to what submit would make of the recorded one.
  // The recording's reference alone: a replayed task is never freed by its end (ended()),
  // and not one of the owner's children (the owner waits on the replay's count).
  task.refs.store(1, std::memory_order_relaxed);
  task.pending.store(r.predecessors, std::memory_order_relaxed);
  task.released.store(false, std::memory_order_relaxed);
  task.counted_children = false;
  task.in_domain = false;
  task.has_successors = false;
  task.undeferred = false;
  task.is_final = r.is_final;
  task.counted_in_parent = true;
  task.args_constructed = true;
  task.ready_for_creator.store(false, std::memory_order_relaxed);
  task.early_released = false;
  task.placed_device = r.placed_device;
  task.wanted_kind = r.wanted_kind;
  task.wanted_index = r.wanted_index;
  task.launched_on = -1;
  task.not_run_after.reset();
  task.impl = r.impl;
  task.label = r.label;
  task.file = r.file;
  task.line = r.line;
  task.priority = r.priority;
  task.parent = owner;
  task.child_credits.store(0, std::memory_order_relaxed);
  task.finished.store(false, std::memory_order_relaxed);
  task.failed = false;
  task.ran_behind_failure = false;
  task.expected_ns = 0;
  task.from_shared_queue = false;
  task.early_device = kEarlyNone;
  task.pending_launched = 0;
  task.launch_done.reset();
  task.early_after.clear();
  task.alive.store(1, std::memory_order_relaxed);
  if (!r.args.empty()) std::memcpy(task.args, r.args.data(), r.args.size());
}

void TaskIter::make_tasks(const std::function<Task *(const nanort_task_site *, std::size_t)> &create) {
  tasks_.reserve(recorded_.size());
  for (std::size_t i = 0; i < recorded_.size(); ++i) {
    const Recorded &r = recorded_[i];
    Task *task = create(r.site, r.args.size());
    for (const Access &access : r.accesses) task->accesses.push_back(access);
    for (const Access &copy : r.copies) task->copies.push_back(copy);
    task->copy_deps = r.copy_deps;
    task->ndrange_dims = r.ndrange_dims;
    std::copy(r.ndrange_global, r.ndrange_global + 3, task->ndrange_global);
    std::copy(r.ndrange_local, r.ndrange_local + 3, task->ndrange_local);
    task->shmem_bytes = r.shmem_bytes;
    task->replayed = true;
    task->replay = this;
    task->replay_index = static_cast<std::uint32_t>(i);
    any_device_ = any_device_ || (r.impl && r.impl->device != NANORT_DEVICE_SMP);
    tasks_.push_back(task);
    reset(*task, r, owner_);  // (the later replays: reset as each task ends, ended())
  }
}

void TaskIter::count_launched(Task *successor, const Task *predecessor) {
  // Behind kernels of its own device only: one manager sees them end in launch order, so a
  // successor never ends (and is reset for the next replay) before its predecessors' ends
  // counted it down.
  if (successor->early_device == kEarlyNever) return;
  const bool same_kind = successor->impl && predecessor->impl &&
                         successor->impl->device == predecessor->impl->device &&
                         successor->impl->device != NANORT_DEVICE_SMP;
  const int device = predecessor->launched_on;
  if (!same_kind || !predecessor->launch_done ||
      (successor->placed_device >= 0 && successor->placed_device != device) ||
      (successor->early_device >= 0 && successor->early_device != device)) {
    successor->early_device = kEarlyNever;
    return;
  }
  successor->early_device = device;
  ++successor->pending_launched;
  successor->early_after.emplace_back(device, predecessor->launch_done);
}

int TaskIter::one_device() const {
  const int device = launch_device_.load(std::memory_order_relaxed);
  if (device < 0 || launches_.load(std::memory_order_relaxed) != recorded_.size()) return -1;
  for (const Recorded &r : recorded_)
    if (!r.impl || r.impl->device == NANORT_DEVICE_SMP) return -1;
  return device;
}

std::vector<Access> TaskIter::merged_accesses() const {
  struct Span {
    std::uintptr_t first, end;
    bool written;
  };
  std::vector<Span> spans;
  for (const Recorded &r : recorded_)
    for (const std::vector<Access> *list : {&r.accesses, &r.copies}) {
      if (list == &r.accesses && !r.copy_deps) continue;  // (dependences only: not moved)
      for (const Access &access : *list)
        if (!access.region.empty())
          access.region.for_each_range([&](std::uintptr_t first, std::uintptr_t end) {
            spans.push_back({first, end, access.mode != NANORT_IN});
          });
    }
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.first < b.first; });
  std::vector<Access> merged;
  for (std::size_t i = 0; i < spans.size();) {
    Span run = spans[i++];
    // (Overlapping spans only: bytes between them, or next to them, are no task's.)
    while (i < spans.size() && spans[i].first < run.end) {
      run.end = std::max(run.end, spans[i].end);
      run.written = run.written || spans[i].written;
      ++i;
    }
    merged.push_back({dc::Region::contiguous(reinterpret_cast<const void *>(run.first),
                                             run.end - run.first),
                      run.written ? NANORT_INOUT : NANORT_IN});
  }
  return merged;
}

bool TaskIter::starts_aligned(const std::vector<Access> &merged, std::size_t alignment) const {
  if (alignment <= 1) return true;
  for (const Recorded &r : recorded_)
    for (const std::vector<Access> *list : {&r.accesses, &r.copies}) {
      if (list == &r.accesses && !r.copy_deps) continue;
      for (const Access &access : *list) {
        if (access.region.empty()) continue;
        const std::uintptr_t first = access.region.first();
        // (The spans are sorted and apart: the last one starting at or before 'first'.)
        auto span = std::upper_bound(merged.begin(), merged.end(), first,
                                     [](std::uintptr_t address, const Access &m) {
                                       return address < m.region.first();
                                     });
        if (span == merged.begin()) return false;
        if ((first - std::prev(span)->region.first()) % alignment != 0) return false;
      }
    }
  return true;
}

void TaskIter::arm(std::vector<Task *> &roots, bool last, Task *owner) {
  if (owner != owner_) {
    owner_ = owner;
    for (Task *task : tasks_) task->parent = owner;
  }
  last_ = last;
  left_.store(tasks_.size(), std::memory_order_relaxed);
  roots.clear();
  for (std::size_t i = 0; i < tasks_.size(); ++i)
    if (recorded_[i].predecessors == 0) roots.push_back(tasks_[i]);
}

bool TaskIter::ended(Task *task) {
  // Ready for the next replay now, by the thread that ended it (the reset of every task would
  // otherwise be the creator's alone, between replays): nothing of this run of it is read
  // any more, and no predecessor counts it down until the next replay starts. Not after a
  // failure: no replay follows, and a task released early that failed (in staging, say)
  // ends before its predecessors, which still count it down.
  if (!failed()) reset(*task, recorded_[task->replay_index], owner_);
  return left_.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

bool TaskIter::replay_done() const {
  // (Each task dropped its reference before it counted down: none is touched any more.)
  return left_.load(std::memory_order_acquire) == 0;
}

}  // namespace nanort::rt
