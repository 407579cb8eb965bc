// The runtime's side of DeviceWork (device/device_work.hpp): what the device managers ask of
// it. Tasks for a device kind's shared queue spread evenly among its devices, each taken shortly
// before its device needs it where its time is known (scheduler/task_costs.hpp); a device task's
// data, its kernel launched (successors that may follow it on that device), its time measured
// and its end.
#include <nanort/dc/directory.hpp>

#include <algorithm>
#include <vector>

#include "../observe/observer.hpp"
#include "../runtime.hpp"
#include "../scheduler/perf_model.hpp"
#include "../scheduler/scheduler.hpp"
#include "accelerator.hpp"
#include "device_manager.hpp"

namespace nanort::rt {

Task *Runtime::pop_device_task(nanort_device_kind kind, int index, std::size_t device) {
  if (device_queues_[kind]->size_hint() == 0) return nullptr;  // no lock taken for nothing
  // Even spread: past two tasks of its own, a device takes more only while no other device
  // of its kind holds fewer; else the first device to look would fill its whole in-flight
  // window with independent tasks that another device could start now. And holding
  // NANORT_DEVICE_LOOKAHEAD tasks from this queue it takes none: the rest go to whichever
  // device frees up first, so that tasks of unequal cost (Julia's slices) even out by time,
  // not by count. (The tasks of its own queue, such as those launched behind its kernels, do
  // not count: a chain of them goes on while the device takes other work.)
  // (managers_ is read only once every manager exists: the first ones run while the others
  // are made.)
  if (device_counts_[kind] < 2 || !managers_ready_.load(std::memory_order_acquire))
    return device_queues_[kind]->pop(index);
  DeviceManager &manager = *managers_[device];
  const double mine = manager.load();
  const std::size_t held = manager.shared_load();
  if (held >= config_.device_lookahead) return nullptr;
  if (mine >= 2)
    for (std::size_t m = 0; m < managers_.size(); ++m)
      if (m != device && accelerators_[m]->kind() == kind && managers_[m]->load() < mine)
        return nullptr;
  // Holding tasks whose times are known, it takes the next only when they are about to end
  // (task_costs.hpp says why).
  TaskCosts::Pace &pace = manager.shared_pace();
  const std::uint64_t now = Observer::now_ns();
  if (held > 0 && !TaskCosts::take_next_now(now, pace)) return nullptr;
  Task *task = device_queues_[kind]->pop(index);
  if (!task) return nullptr;
  std::uint64_t reads = 0;
  for (const Access &access : task->accesses)
    if (access.mode != NANORT_OUT) reads += access.region.bytes();
  for (const Access &copy : task->copies)
    if (copy.mode != NANORT_OUT) reads += copy.region.bytes();
  const std::uint64_t expected =  // (looked up only where it may pace)
      reads < TaskCosts::kPacedReadBytes ? task_costs_.expected_ns(*task, kind) : 0;
  pace = TaskCosts::after_taking(pace, held, now, expected, reads);
  return task;
}

bool Runtime::device_work_waiting(nanort_device_kind kind) const {
  return device_queues_[kind]->size_hint() > 0;
}

void Runtime::device_data(const Task &task, std::vector<dc::DataAccess> &data) const {
  data.clear();
  auto add = [&](const Access &access) {
    data.push_back({access.region, access.mode != NANORT_OUT, access.mode != NANORT_IN});
  };
  for (const Access &copy : task.copies) add(copy);
  if (task.copy_deps)
    for (const Access &access : task.accesses) {
      bool replaced = false;  // a copy clause of the same bytes says how they move
      for (const Access &copy : task.copies)
        replaced = replaced || (copy.region.first() == access.region.first() &&
                                copy.region.last_end() == access.region.last_end());
      if (!replaced) add(access);
    }
}

void Runtime::device_task_done(Task *task, int lane, std::uint64_t start_ns, bool failed) {
  task->failed = failed;
  if (observer_->recording()) observer_->task_ran(lane, *task, start_ns, Observer::now_ns(), failed);
  task->destroy_args();
  finish_body(task, nullptr);
}

void Runtime::device_task_measured(const Task &task, int device, std::uint64_t nanoseconds,
                                   bool ran) {
  const std::size_t d = static_cast<std::size_t>(device);
  if (task.expected_ns) managers_[d]->add_expected_work(-task.expected_ns);
  // (A taskiter's graph launch is not its first kernel's run: no sample of that kernel.)
  if (!ran || TaskIter::is_graph_launcher(task)) return;
  const nanort_device_kind kind = accelerators_[d]->kind();
  if (device_counts_[kind] > 1)
    task_costs_.record(task, kind, nanoseconds);  // (the pace of taking from their queue)
  if (perf_model_ && task.site)
    perf_model_->record(perf_key(task, accelerators_[d]->model()),
                        static_cast<double>(nanoseconds) * 1e-9);
}

void Runtime::device_task_launched(Task *task, int device) {
  ReadyList ready;
  if (task->replay && !task->replayed && task->replay_index != kGraphLauncher) [[unlikely]]
    task->replay->recorded_launch(device);  // (where the recorded iteration runs)
  if (task->replayed) [[unlikely]]  // its successors in the recorded graph
    task->replay->launched(task, device, ready);
  else if (task->in_domain)  // (not in its parent's domain: no accesses, nobody depends on it)
    task->parent->child_domain->launched(task, device, ready);
  else
    return;
  push_ready(ready);
}

}  // namespace nanort::rt
