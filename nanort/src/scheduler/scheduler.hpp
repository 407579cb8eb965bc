// Scheduler: the policies by name (NANORT_SCHEDULER), and the queues device tasks wait in.
//
// CPU tasks wait in the ready path (ready/ready_path.hpp: a queue per worker, stealing), the
// same under every policy; what a policy decides is where a task runs (placement.hpp). Device
// tasks wait in a SchedulerPolicy per device kind: push a ready task, pop one for a device, and
// how many tasks wait (a hint read without locking, for idle checks).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nanort::rt {

struct Task;

class SchedulerPolicy {
 public:
  virtual ~SchedulerPolicy() = default;
  virtual const char *name() const = 0;
  // Thread-safe. 'task' is ready: all its predecessors are done.
  virtual void push(Task *task) = 0;
  // Thread-safe. A task for 'worker' to run, or nullptr.
  virtual Task *pop(int worker) = 0;
  // Tasks waiting, as of some recent moment; no lock, no write to shared memory.
  virtual std::size_t size_hint() const = 0;
};

struct SchedulerInfo {
  const char *name;
  const char *description;
  std::unique_ptr<SchedulerPolicy> (*make)();
};

// Every policy that can be named.
const std::vector<SchedulerInfo> &scheduler_policies();
// nullptr if no policy has this name.
std::unique_ptr<SchedulerPolicy> make_scheduler(std::string_view name);

}  // namespace nanort::rt
