#include "scheduler.hpp"

namespace nanort::rt {

std::unique_ptr<SchedulerPolicy> make_breadth_first();

const std::vector<SchedulerInfo> &scheduler_policies() {
  static const std::vector<SchedulerInfo> policies = {
      {"breadth-first", "one shared FIFO queue, higher priority first; for CPU-only task graphs",
       &make_breadth_first},
  };
  return policies;
}

std::unique_ptr<SchedulerPolicy> make_scheduler(std::string_view name) {
  for (const SchedulerInfo &info : scheduler_policies())
    if (name == info.name) return info.make();
  return nullptr;
}

}  // namespace nanort::rt
