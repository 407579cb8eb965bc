// DeviceWork: all that a DeviceManager asks of the rest of the runtime, which implements it
// (Runtime): take the next ready task for its device, the data a task moves, and report a
// kernel launched, a task measured and a task finished. The manager knows nothing else of the
// runtime.
#pragma once

#include <nanort/dc/directory.hpp>
#include <nanort/nanort.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nanort::rt {

struct Task;

class DeviceWork {
 public:
  // Take work: the next ready task from the shared queue of 'kind' for the manager of device
  // number 'device', index 'index' in its kind (device_numbering.hpp); null when it should
  // take none now. Whether any task of 'kind' waits there.
  virtual Task *pop_device_task(nanort_device_kind kind, int index, std::size_t device) = 0;
  virtual bool device_work_waiting(nanort_device_kind kind) const = 0;
  // The data 'task' moves (its copies, and its accesses unless copy clauses replace them),
  // into 'data'.
  virtual void device_data(const Task &task, std::vector<dc::DataAccess> &data) const = 0;
  // NANORT_WRITE_BACK=eager and no task waits for 'task' yet: its results may go home now.
  virtual bool write_back_now(const Task *task) const = 0;
  // Launched: the kernel of 'task' was enqueued on device number 'device',
  // which runs kernels in launch order: successors that can follow it there are handed to it.
  virtual void device_task_launched(Task *task, int device) = 0;
  // Measured: 'task' ended on device 'device'; its expected time leaves the device's queued
  // work and, if it ran, how long it took ('nanoseconds') goes into the model.
  virtual void device_task_measured(const Task &task, int device, std::uint64_t nanoseconds,
                                    bool ran) = 0;
  // Finished: the end of a device task on trace lane 'lane' (its failure already recorded).
  virtual void device_task_done(Task *task, int lane, std::uint64_t start_ns, bool failed) = 0;
  // A fatal error ends the program next: statistics and trace of what ran so far.
  virtual void report_before_fatal_exit() = 0;

 protected:
  ~DeviceWork() = default;
};

}  // namespace nanort::rt
