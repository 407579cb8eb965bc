// Where a task may run, and where it runs. At submit, the implementation it runs with: the
// first whose kind has a device, or the one nanort_task_set_device asked for. When it is ready,
// its place among the CPU workers and the devices (Runtime::place): the candidates (each device
// of each kind the task has an implementation for, the CPU workers) with their load, affinity,
// power, the bytes of its data they hold and the time the performance model expects; the
// placement policy (placement.hpp) chooses. With the queries that tests and the early launch
// across devices make of the same state.
#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "../device/accelerator.hpp"
#include "../device/device_manager.hpp"
#include "../device/device_numbering.hpp"
#include "../observe/energy.hpp"
#include "../ready/ready_path.hpp"
#include "../runtime.hpp"
#include "../small_vector.hpp"
#include "perf_model.hpp"
#include "placement.hpp"

namespace nanort::rt {

bool Runtime::choose_implementation(Task *task, std::string &why_not) const {
  if (!task->site) return true;  // internal tasks (taskwait on) have no body
  if (task->wanted_kind >= 0) return choose_wanted_device(task, why_not);
  for (std::uint32_t i = 0; i < task->site->num_impls; ++i) {
    const nanort_task_impl &impl = task->site->impls[i];
    if (impl.device == NANORT_DEVICE_SMP && impl.smp_fn && device_count(NANORT_DEVICE_SMP) > 0) {
      task->impl = &impl;
      return true;
    }
    if ((impl.device == NANORT_DEVICE_OPENCL || impl.device == NANORT_DEVICE_CUDA) &&
        impl.kernel_name && impl.module && device_counts_[impl.device] > 0) {
      task->impl = &impl;
      return true;
    }
  }
  why_not = task->describe() + " cannot run anywhere: it has ";
  if (task->site->num_impls == 0) why_not += "no implementation";
  for (std::uint32_t i = 0; i < task->site->num_impls; ++i)
    why_not += std::string(i ? ", " : "an implementation for ") +
               device_name(task->site->impls[i].device);
  why_not += "; devices found: smp (" + std::to_string(device_count(NANORT_DEVICE_SMP)) +
             " workers), cuda (" + std::to_string(device_count(NANORT_DEVICE_CUDA)) +
             "), opencl (" + std::to_string(device_count(NANORT_DEVICE_OPENCL)) + ")";
  return false;
}

// nanort_task_set_device: the implementation for that kind, on that one device (index -1: on
// a device of that kind that the scheduler picks).
bool Runtime::choose_wanted_device(Task *task, std::string &why_not) const {
  const int kind = task->wanted_kind;
  const char *kind_name = kind < NANORT_DEVICE_KIND_COUNT ? device_name(kind) : "unknown";
  const nanort_task_impl *chosen = nullptr;
  for (std::uint32_t i = 0; i < task->site->num_impls && !chosen; ++i)
    if (static_cast<int>(task->site->impls[i].device) == kind) chosen = &task->site->impls[i];
  if (!chosen) {
    why_not = task->describe() + " was placed on a " + kind_name +
              " device but has no implementation for it";
    return false;
  }
  task->impl = chosen;
  if (kind == NANORT_DEVICE_SMP) {
    if (device_count(NANORT_DEVICE_SMP) > 0) return true;
    why_not = task->describe() + " was placed on the CPU workers but there are none";
    return false;
  }
  const int devices = kind < NANORT_DEVICE_KIND_COUNT ? device_counts_[kind] : 0;
  if (task->wanted_index < 0) {  // any device of the kind: the scheduler picks
    if (devices > 0) return true;
    why_not = task->describe() + " was placed on the " + kind_name + " devices but there are none";
    return false;
  }
  const int device = device_of_kind_index(
      accelerators_.size(), [&](std::size_t d) { return accelerators_[d]->kind(); }, kind,
      task->wanted_index);
  if (device >= 0) {
    task->placed_device = device;
    return true;
  }
  why_not = task->describe() + " was placed on " + kind_name + " device " +
            std::to_string(task->wanted_index) + " but there are " + std::to_string(devices) +
            " " + kind_name + " device(s)";
  return false;
}

void Runtime::place(Task *task) {
  // The candidates: each device of each kind the task has an implementation for, and the CPU
  // workers if it has an smp one.
  SmallVector<PlacementCandidate, 8> candidates;
  const bool scored = affinity_.has(task->label);
  for (std::uint32_t i = 0; i < task->site->num_impls; ++i) {
    const nanort_task_impl &impl = task->site->impls[i];
    // nanort_task_set_device with index -1: any device of that kind.
    if (task->wanted_kind >= 0 && static_cast<int>(impl.device) != task->wanted_kind) continue;
    if (impl.device == NANORT_DEVICE_SMP) {
      if (!impl.smp_fn || device_count(NANORT_DEVICE_SMP) == 0) continue;
      PlacementCandidate cpu;
      cpu.impl = &impl;
      cpu.load = static_cast<double>(ready_->approximate_size()) / device_count(NANORT_DEVICE_SMP);
      if (scored) cpu.affinity = affinity_.score(task->label, "smp", "smp");
      cpu.watts = config_.smp_watts;
      candidates.push_back(cpu);
      continue;
    }
    if (!impl.kernel_name || !impl.module) continue;
    for (std::size_t d = 0; d < accelerators_.size(); ++d) {
      if (static_cast<std::uint32_t>(accelerators_[d]->kind()) != impl.device) continue;
      PlacementCandidate device;
      device.impl = &impl;
      device.kind = accelerators_[d]->kind();
      device.device = static_cast<int>(d);
      device.load = managers_[d]->load();
      if (scored)
        device.affinity = affinity_.score(task->label, device_name(device.kind),
                                          accelerators_[d]->name());
      if (energy_policy_) {
        const double measured =
            energy_ && energy_gpu_[d] >= 0
                ? energy_->busy_watts(static_cast<std::size_t>(energy_gpu_[d])) : 0.0;
        device.watts = measured > 0 ? measured
                       : device.kind == NANORT_DEVICE_CUDA ? config_.cuda_watts
                                                           : config_.opencl_watts;
      }
      candidates.push_back(device);
    }
  }
  if (candidates.empty()) return;  // (submit checked that it can run somewhere)
  if (energy_policy_ && energy_) {  // the GPUs' power while busy, every 100 ms at most
    static thread_local std::vector<bool> busy;
    busy.assign(accelerators_.size(), false);
    for (std::size_t d = 0; d < accelerators_.size(); ++d)
      if (energy_gpu_[d] >= 0) busy[static_cast<std::size_t>(energy_gpu_[d])] = managers_[d]->load() > 0;
    energy_->sample(busy);
  }
  std::size_t chosen = 0;
  if (!placement_) {  // breadth-first: only the affinity scores place
    chosen = choose_by_affinity(std::span<const PlacementCandidate>(candidates.begin(),
                                                                     candidates.size()));
    if (chosen == candidates.size()) return;  // no score for the places of this machine
  } else if (candidates.size() > 1) {
    // Where its data lives: asked of the directory only when there is a choice to make.
    static thread_local std::vector<dc::DataAccess> data;
    static thread_local std::vector<dc::LocatedBytes> located;
    device_data(*task, data);
    directory_->locate(data, located);
    std::uint64_t read_bytes = 0, written_bytes = 0;
    for (const dc::DataAccess &access : data) {
      if (access.reads) read_bytes += access.region.bytes();
      if (access.writes) written_bytes += access.region.bytes();
    }
    const int workers = device_count(NANORT_DEVICE_SMP);
    for (PlacementCandidate &candidate : candidates) {
      const dc::SpaceId space = space_of(candidate.device);  // the host's for the CPU workers
      candidate.valid = located[space].valid;
      candidate.owned = located[space].owned;
      if (!perf_model_) continue;
      // Copies: the bytes it reads that are not there, and on a device the bytes it writes,
      // which go home later, at the rate the device's staging has shown (16 GB/s for data
      // going to the host from a device: the CPU's side has no staging of its own to measure).
      const std::uint64_t missing = read_bytes - std::min(read_bytes, candidate.valid);
      if (candidate.device < 0)
        candidate.transfer = static_cast<double>(missing) / 16e9;
      else
        candidate.transfer =
            static_cast<double>(missing + written_bytes) *
            managers_[static_cast<std::size_t>(candidate.device)]->seconds_per_byte();
      if (candidate.device < 0) {
        candidate.free_in = static_cast<double>(cpu_expected_ns_.load(std::memory_order_relaxed)) *
                            1e-9 / std::max(1, workers);
        candidate.expected = perf_model_->expected(perf_key(*task, "smp")).value_or(-1);
      } else {
        const std::size_t d = static_cast<std::size_t>(candidate.device);
        candidate.free_in = managers_[d]->expected_work_s();
        candidate.expected =
            perf_model_->expected(perf_key(*task, accelerators_[d]->model())).value_or(-1);
      }
    }
    chosen = placement_->choose(std::span<const PlacementCandidate>(candidates.begin(),
                                                                     candidates.size()));
  }
  const PlacementCandidate &where = candidates[chosen];
  task->impl = where.impl;
  task->placed_device = where.device;
  if (perf_model_) {  // counted in the place's queued work until the task ends
    // Its copies too: a GPU's queue of small tasks is mostly copies when data dominates.
    task->expected_ns =
        where.expected > 0 ? static_cast<std::int64_t>((where.expected + where.transfer) * 1e9) : 0;
    if (where.device < 0)
      cpu_expected_ns_.fetch_add(task->expected_ns, std::memory_order_relaxed);
    else
      managers_[static_cast<std::size_t>(where.device)]->add_expected_work(task->expected_ns);
  }
}

PerfKey Runtime::perf_key(const Task &task, std::string place) const {
  std::uint64_t bytes = 0;
  for (const Access &access : task.accesses) bytes += access.region.bytes();
  for (const Access &copy : task.copies) bytes += copy.region.bytes();
  // The task kind's name, made once per label and location (static strings) and thread.
  static thread_local std::map<std::tuple<const char *, const char *, int>, std::string> names;
  std::string &name = names[{task.label, task.file, task.line}];
  if (name.empty()) name = task.describe();
  return PerfKey{name, std::move(place), PerfModel::size_class(bytes)};
}

double Runtime::expected_seconds(const nanort_task_site &site, const std::string &place,
                                 std::uint64_t bytes) const {
  if (!perf_model_) return -1;
  const PerfKey key{Task::describe(site.label, site.file, site.line), place,
                    PerfModel::size_class(bytes)};
  return perf_model_->expected(key).value_or(-1);
}

std::size_t Runtime::shared_load(std::size_t index) const {
  return managers_ready_.load(std::memory_order_acquire) && index < managers_.size()
             ? managers_[index]->shared_load()
             : 0;
}

std::uint32_t Runtime::early_across_kinds() const {
  std::uint32_t kinds = 0;
  for (int kind = 0; kind < NANORT_DEVICE_KIND_COUNT; ++kind) {
    if (kind == NANORT_DEVICE_SMP) continue;
    std::vector<dc::SpaceId> spaces;
    for (std::size_t i = 0; i < accelerators_.size(); ++i)
      if (accelerators_[i]->kind() == kind) spaces.push_back(space_of(static_cast<int>(i)));
    bool all_direct = spaces.size() > 1;
    for (dc::SpaceId from : spaces)
      for (dc::SpaceId to : spaces)
        if (from != to && !directory_->copies_directly(from, to)) all_direct = false;
    if (all_direct) kinds |= 1u << kind;
  }
  return kinds;
}

}  // namespace nanort::rt
