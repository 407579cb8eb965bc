// How devices are numbered, and the one place that converts between the numberings.
//
// A device (an opened GPU or OpenCL device) has three numbers:
//
//  - its device number (also "manager number"): its place among all the devices the runtime
//    opened, 0, 1, ...: the CUDA devices first, then the OpenCL ones (make_backends' order).
//    It indexes Runtime's accelerators_ and managers_ (Runtime::accelerators() for tools and
//    tests), and is the device in Task::placed_device, Task::launched_on, Task::early_device,
//    Task::early_after, PlacementCandidate::device and DeviceWork's reports. -1, where a
//    place is meant (placement), is the CPU workers.
//  - its index in its kind: its place among the opened devices of its kind, 0, 1, ...: the
//    number in its name ("cuda1", "opencl0"), the index of nanort_task_set_device (kept in
//    Task::wanted_kind and Task::wanted_index), of the kind's shared queue
//    (SchedulerPolicy::pop) and of DeviceManager's index_. It is not the number that
//    NANORT_CUDA_DEVICES or NANORT_OPENCL_DEVICES selects by: those number every device the
//    driver or the OpenCL platforms list (nanort-info's "devices found"), opened or not.
//  - its memory space in the directory (dc::SpaceId): the host is space 0 (dc::kHost), and
//    device d is space d + 1. space_of and device_of below are the only places that say so.
//
// Plain ints rather than a type of their own: the device numbers travel through Task, the
// dependency graph and DeviceWork as ints, with negative values that mean something
// (kEarlyNone, kEarlyNever, kEarlyAnyDevice, -1 for none or the CPU workers).
#pragma once

#include <nanort/dc/coherence.hpp>

#include <cstddef>

namespace nanort::rt {

// The memory space of device number 'device'; -1 (the CPU workers) gives the host's space.
constexpr dc::SpaceId space_of(int device) {
  return static_cast<dc::SpaceId>(device + 1);
}

// The device number whose memory space is 'space'; the host's space gives -1.
constexpr int device_of(dc::SpaceId space) {
  return static_cast<int>(space) - 1;
}

// The device number of the device of kind 'kind' with index 'index' in that kind, or -1 when
// there is none, given the kind of each of 'devices' devices: kind_of(d) for device number d.
template <class KindOf>
int device_of_kind_index(std::size_t devices, KindOf kind_of, int kind, int index) {
  int seen = 0;
  for (std::size_t d = 0; d < devices; ++d)
    if (static_cast<int>(kind_of(d)) == kind && seen++ == index) return static_cast<int>(d);
  return -1;
}

// The index in its kind of device number 'device' (kind_of as above).
template <class KindOf>
int index_in_kind(KindOf kind_of, int device) {
  const int kind = static_cast<int>(kind_of(static_cast<std::size_t>(device)));
  int index = 0;
  for (int d = 0; d < device; ++d)
    if (static_cast<int>(kind_of(static_cast<std::size_t>(d))) == kind) ++index;
  return index;
}

}  // namespace nanort::rt
