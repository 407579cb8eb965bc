// The runtime's side of reductions (reduction.hpp has their parts): a task's reductions
// checked at submit and tied to its parent's, nanort_reduction_private, the lookup of
// nanort_task_in_reduction in the taskgroups around a task, and the OpenMP taskgroup.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cpu/cpu_worker_pool.hpp"
#include "runtime.hpp"
#include "spin_lock.hpp"

namespace nanort::rt {

namespace {
std::string bytes_at(std::uintptr_t start, std::uintptr_t end) {
  char at[32];
  std::snprintf(at, sizeof at, "%p", reinterpret_cast<void *>(start));
  return std::to_string(end - start) + " bytes at " + at;
}
}  // namespace

void Runtime::prepare_reductions(Task *task, Task *parent) const {
  // Private copies live in host memory and are combined there: CPU workers only.
  if (task->impl && task->impl->device != NANORT_DEVICE_SMP) {
    const nanort_task_impl *smp = nullptr;
    for (std::uint32_t i = 0; task->wanted_kind < 0 && i < task->site->num_impls; ++i)
      if (task->site->impls[i].device == NANORT_DEVICE_SMP && task->site->impls[i].smp_fn)
        smp = &task->site->impls[i];
    if (!smp)
      throw NoDeviceError(task->describe() +
                          " takes part in a reduction, which only CPU workers run, and has no "
                          "smp implementation to run there");
    task->impl = smp;
  }
  for (ReductionEntry &entry : task->reductions->entries) {
    if (entry.in_reduction) continue;
    for (const Access &access : task->accesses) {
      if (access.mode == kReductionAccess) continue;
      bool overlaps = false;
      access.region.for_each_range([&](std::uintptr_t start, std::uintptr_t end) {
        overlaps = overlaps || (start < entry.end && entry.start < end);
      });
      if (overlaps)
        throw std::invalid_argument(task->describe() + ": the reduction on " +
                                    bytes_at(entry.start, entry.end) +
                                    " overlaps another access of the task");
    }
    // Inside the parent's reduction on these bytes: a part of it, combined into the parent's
    // private copy (OmpSs-2's weakreduction needs nothing more).
    entry.target = reinterpret_cast<unsigned char *>(entry.start);
    if (!parent->reductions) continue;
    for (ReductionEntry &outer : parent->reductions->entries) {
      if (outer.end <= entry.start || entry.end <= outer.start) continue;
      if (entry.start < outer.start || outer.end < entry.end)
        throw std::invalid_argument(task->describe() + ": the reduction on " +
                                    bytes_at(entry.start, entry.end) +
                                    " reaches beyond the reduction of its parent on " +
                                    bytes_at(outer.start, outer.end));
      if (!outer.op.same_as(entry.op))
        throw std::invalid_argument(
            task->describe() + ": the reduction " + entry.op.describe() + " on " +
            bytes_at(entry.start, entry.end) + " is inside the reduction " +
            outer.op.describe() + " of its parent, which has another operator");
      entry.target = reduction_private_of(parent, entry.start, CpuWorkerPool::current_lane());
    }
  }
}

void *Runtime::reduction_private(const void *original) {
  Task *task = running_task();
  if (!task)
    throw std::invalid_argument(
        "nanort_reduction_private was called outside a task body: only a task that takes part "
        "in a reduction has a private copy");
  const auto address = reinterpret_cast<std::uintptr_t>(original);
  if (unsigned char *bytes = reduction_private_of(task, address, CpuWorkerPool::current_lane()))
    return bytes;
  char at[32];
  std::snprintf(at, sizeof at, "%p", original);
  throw std::invalid_argument("nanort_reduction_private: " + task->describe() +
                              " takes part in no reduction on the byte at " + at);
}

ReductionInfo *Runtime::find_taskgroup_reduction(Task *task, std::uintptr_t start,
                                                 std::uintptr_t end, const ReductionOp &op) {
  for (TaskgroupScope *scope = current_task()->taskgroup; scope; scope = scope->outer) {
    std::lock_guard<SpinLock> guard(scope->lock);
    for (TaskgroupScope::Item &item : scope->items) {
      if (item.key_end <= start || end <= item.key) continue;
      if (start < item.key || item.key_end < end)
        throw std::invalid_argument(task->describe() + ": the in_reduction on " +
                                    bytes_at(start, end) +
                                    " reaches beyond the taskgroup's reduction on " +
                                    bytes_at(item.key, item.key_end));
      if (!item.info->op().same_as(op))
        throw std::invalid_argument(task->describe() + ": the in_reduction " + op.describe() +
                                    " on " + bytes_at(start, end) +
                                    " is inside the taskgroup's reduction " +
                                    item.info->op().describe() + ", another operator");
      return item.info.get();
    }
  }
  throw std::invalid_argument(task->describe() + ": the in_reduction on " + bytes_at(start, end) +
                              " is in no reduction of an enclosing taskgroup");
}

void Runtime::taskgroup_begin() {
  Task *task = current_task();
  if (task->recording)  // (its end waits, and the replays would not)
    throw std::invalid_argument("taskgroup inside a taskiter's body: the replays would not wait "
                                "at its end");
  auto *scope = new TaskgroupScope();
  scope->outer = task->taskgroup;
  scope->owner = task;
  task->taskgroup = scope;
}

void Runtime::taskgroup_reduction(std::uintptr_t start, std::uintptr_t end,
                                  const ReductionOp &op) {
  Task *task = current_task();
  TaskgroupScope *scope = task->taskgroup;
  if (!scope || scope->owner != task)
    throw std::invalid_argument(
        "nanort_taskgroup_reduction: no taskgroup is open in the calling task (call "
        "nanort_taskgroup_begin first)");
  // Inside a task that reduces these bytes itself: combined into its private copy.
  unsigned char *target = reinterpret_cast<unsigned char *>(start);
  if (task->reductions)
    if (ReductionEntry *outer = task->reductions->find(start)) {
      if (!outer->op.same_as(op) || end > outer->end)
        throw std::invalid_argument(
            "nanort_taskgroup_reduction: the reduction " + op.describe() + " on " +
            bytes_at(start, end) + " is not inside the calling task's reduction " +
            outer->op.describe() + " on " + bytes_at(outer->start, outer->end));
      target = reduction_private_of(task, start, CpuWorkerPool::current_lane());
    }
  std::lock_guard<SpinLock> guard(scope->lock);
  for (const TaskgroupScope::Item &item : scope->items)
    if (start < item.key_end && item.key < end)
      throw std::invalid_argument("nanort_taskgroup_reduction: the reduction on " +
                                  bytes_at(start, end) +
                                  " overlaps the taskgroup's reduction on " +
                                  bytes_at(item.key, item.key_end));
  scope->items.push_back(
      {start, end, std::make_unique<ReductionInfo>(start, end - start, target, op)});
}

void Runtime::taskgroup_end() {
  Task *task = current_task();
  if (task->recording)  // (a taskgroup begun before the taskiter: the replays would not wait)
    throw std::invalid_argument("taskgroup end inside a taskiter's body: the replays would not "
                                "wait there");
  TaskgroupScope *scope = task->taskgroup;
  if (!scope || scope->owner != task)
    throw std::invalid_argument(
        "nanort_taskgroup_end: no taskgroup is open in the calling task (nanort_taskgroup_begin "
        "and its end must be called by the same task)");
  wait_for_children(task, 0);
  // A reduction with a failed or unrun task is not combined: the original keeps its value, and
  // the next taskwait reports the failure.
  for (TaskgroupScope::Item &item : scope->items)
    if (!item.info->participant_failed.load()) item.info->combine();
  task->taskgroup = scope->outer;
  delete scope;
}

}  // namespace nanort::rt
