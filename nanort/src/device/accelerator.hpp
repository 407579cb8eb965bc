// Accelerator: what a device backend (OpenCL, CUDA) gives the runtime for each device. The
// DeviceManager drives it: stages a task's data through the directory, then launches.
#pragma once

#include <nanort/dc/directory.hpp>
#include <nanort/dc/memory_space.hpp>
#include <nanort/nanort.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanort::rt {

struct Task;
class HostLockCache;

// A device kind's name, as messages and NANORT_AFFINITY name it.
inline const char *device_name(std::uint32_t kind) {
  switch (kind) {
    case NANORT_DEVICE_SMP: return "smp";
    case NANORT_DEVICE_CUDA: return "cuda";
    case NANORT_DEVICE_OPENCL: return "opencl";
    default: return "unknown";
  }
}

// Where a kernel's pointer argument lands on the device: the allocation and the offset in it
// of the host bytes 'pointer' names, from the task's data ('data', placed at
// 'staging.placements'). A pointer to the start of an access takes that access; one inside an
// access the first access that holds it. Throws, naming the argument ('which()' gives its
// name), when no access of the task covers the pointer.
template <class Which>
dc::Placement device_place(const Which &which, const void *pointer,
                           const std::vector<dc::DataAccess> &data,
                           const dc::Directory::Staging &staging) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  std::size_t best = data.size();
  for (std::size_t i = 0; i < data.size(); ++i) {
    const dc::Region &region = data[i].region;
    if (address == region.first()) {
      best = i;
      break;
    }
    if (best == data.size() && address > region.first() && address < region.last_end()) best = i;
  }
  if (best == data.size())
    throw std::runtime_error(which() + " points to host memory that no data clause of the task "
                                       "covers (add it to in/out/inout or copy_in/copy_out)");
  dc::Placement place = staging.placements[best];
  place.offset += address - data[best].region.first();
  return place;
}

// The same for data in address order whose regions do not overlap (a taskiter's graph launch:
// the spans its tasks access), found by halves.
template <class Which>
dc::Placement sorted_device_place(const Which &which, const void *pointer,
                                  const std::vector<dc::DataAccess> &data,
                                  const dc::Directory::Staging &staging) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  auto after = std::upper_bound(data.begin(), data.end(), address,
                                [](std::uintptr_t a, const dc::DataAccess &access) {
                                  return a < access.region.first();
                                });
  if (after == data.begin() || address >= std::prev(after)->region.last_end())
    return device_place(which, pointer, data, staging);  // (says which argument, and why)
  const std::size_t i = static_cast<std::size_t>(std::prev(after) - data.begin());
  dc::Placement place = staging.placements[i];
  place.offset += address - data[i].region.first();
  return place;
}

// A device's kernels held back by a test (Accelerator::hold_kernels): destroying it lets them
// start.
class KernelHold {
 public:
  KernelHold() = default;
  KernelHold(const KernelHold &) = delete;  // released once, by its one owner
  KernelHold &operator=(const KernelHold &) = delete;
  virtual ~KernelHold() = default;
};

class Accelerator {
 public:
  virtual ~Accelerator() = default;

  virtual nanort_device_kind kind() const = 0;
  // Short and unique: "opencl0".
  virtual const std::string &name() const = 0;
  // For nanort-info and statistics: "NVIDIA H100 80GB HBM3 (NVIDIA CUDA, OpenCL 3.0 CUDA)".
  virtual std::string description() const = 0;
  // The kind of device, for performance models shared by identical devices:
  // "cuda:NVIDIA H100 80GB HBM3".
  virtual std::string model() const { return name(); }
  virtual dc::MemorySpace &memory() = 0;

  // Enqueues the task's kernel to start once 'staging.ready' are done; returns its
  // completion. 'data[i]' lives at 'staging.placements[i]'. Called from the device's manager
  // thread only. Throws std::exception with a message that says what is wrong (the caller
  // names the task): a build failure with its log, a kernel name the module lacks, an
  // argument no data clause covers.
  virtual dc::CompletionPtr launch(const Task &task, const nanort_task_impl &impl,
                                   const std::vector<dc::DataAccess> &data,
                                   const dc::Directory::Staging &staging) = 0;

  // The device's PCI address ("0000:3b:00.0"), when the backend knows it: its manager thread
  // runs on the cores near it.
  virtual std::string pci_bus_id() const { return {}; }

  // True when launches complete in the order they were made (one in-order queue): the
  // manager then polls only the oldest one, and launches a task's successors behind it.
  virtual bool completes_in_order() const { return false; }
  // The manager has nothing more to launch for now: whatever the backend holds back to launch
  // or record in groups, it does now, so that the launches made complete (CUDA: the event
  // after the last kernels).
  virtual void flush_launches() {}
  // The runtime stops (no task will come): threads of the backend's own go, its work in flight
  // ends, and no callback of its driver is running when this returns (the directory frees the
  // device's buffers next).
  virtual void quiesce() {}
  // Its launch() takes a taskiter's graph launcher (TaskIter::is_graph_launcher): the replays
  // of a recording whose tasks all ran here, as one graph (CUDA) or command buffer (OpenCL).
  virtual bool replays_as_graph() const { return false; }

  // Page-locks host memory for this device and the others of the same host_lock_scope()
  // (nanort_host_register); throws what the driver said. Backends that cannot do nothing.
  virtual void register_host(void * /*address*/, std::size_t /*bytes*/) {}
  virtual void unregister_host(void * /*address*/) {}
  // The devices a register_host call locks for share this (CUDA: every GPU, by a portable
  // registration; OpenCL: the devices of one context); null: register_host locks nothing.
  virtual const void *host_lock_scope() const { return nullptr; }
  // The ranges that the runtime locks by itself (NANORT_HOST_REGISTER=auto): a backend whose
  // register_host locks for it answers is_page_locked from them, and reports there the ranges
  // it copies through staging. Null: none (before the runtime stops).
  virtual void use_host_locks(HostLockCache * /*locks*/) {}

  // For tests: kernels launched on this device from now on start only once the returned hold
  // is destroyed (copies are not held), so that a test sees work launched and not ended, or a
  // device kept busy, for as long as it needs, whatever the machine's load. Null where the
  // backend cannot hold its kernels. A test destroys the holds of several devices together:
  // one device's held kernels may hold another's (CUDA may run host functions one at a time).
  virtual std::unique_ptr<KernelHold> hold_kernels() { return nullptr; }

  // True for an error after which the device cannot run anything more (CUDA's sticky errors:
  // an illegal address, a failed launch): the program stops with the task's name.
  virtual bool is_fatal(const std::exception & /*error*/) const { return false; }
};

}  // namespace nanort::rt
