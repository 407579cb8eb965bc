// Accelerator: what a device backend (OpenCL, CUDA) gives the runtime for each device. The
// DeviceManager drives it: stages a task's data through the directory, then launches.
#pragma once

#include <nanort/dc/directory.hpp>
#include <nanort/dc/memory_space.hpp>
#include <nanort/nanort.h>

#include <string>
#include <vector>

namespace nanort::rt {

struct Task;

class Accelerator {
 public:
  virtual ~Accelerator() = default;

  virtual nanort_device_kind kind() const = 0;
  // Short and unique: "opencl0".
  virtual const std::string &name() const = 0;
  // For nanort-info and statistics: "NVIDIA H100 80GB HBM3 (NVIDIA CUDA, OpenCL 3.0 CUDA)".
  virtual std::string description() const = 0;
  virtual dc::MemorySpace &memory() = 0;

  // Enqueues the task's kernel to start once 'staging.ready' are done; returns its
  // completion. 'data[i]' lives at 'staging.placements[i]'. Called from the device's manager
  // thread only. Throws std::exception with a message that says what is wrong (the caller
  // names the task): a build failure with its log, a kernel name the module lacks, an
  // argument no data clause covers.
  virtual dc::CompletionPtr launch(const Task &task, const nanort_task_impl &impl,
                                   const std::vector<dc::DataAccess> &data,
                                   const dc::Directory::Staging &staging) = 0;

  // True when launches complete in the order they were made (one in-order queue): the
  // manager then polls only the oldest one.
  virtual bool completes_in_order() const { return false; }
};

}  // namespace nanort::rt
