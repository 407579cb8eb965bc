#include "scheduler.hpp"

namespace nanort::rt {

std::unique_ptr<SchedulerPolicy> make_breadth_first();

const std::vector<SchedulerInfo> &scheduler_policies() {
  static const std::vector<SchedulerInfo> policies = {
      {"breadth-first", "CPU tasks wait in a queue per worker, oldest first, and idle workers "
       "steal; higher priority first; device tasks wait in one queue per device kind and go to "
       "whichever device of that kind is free first (the default)", &make_breadth_first},
      {"locality", "breadth-first queues; each ready task that several devices could run goes "
       "where the data it writes lives alone, else to the device holding most of what it reads "
       "unless that one is markedly more loaded, else to the least loaded device (the CPU "
       "workers only when no device can run it)", &make_breadth_first},
      {"dmda", "breadth-first queues; each ready task that several places could run goes where "
       "it is expected to finish first (the place's queued work + copies of the inputs it lacks "
       "+ the task's time there, learnt per task kind, place and data size and kept per machine "
       "in NANORT_PERF_MODEL); tried on each place until measured", &make_breadth_first},
      {"energy", "as dmda, but a later finish is taken when each millisecond of it saves "
       "NANORT_ENERGY_RATE joules (energy = the place's power, NANORT_POWER or measured by NVML, "
       "x the task's expected time)", &make_breadth_first},
  };
  return policies;
}

std::unique_ptr<SchedulerPolicy> make_scheduler(std::string_view name) {
  for (const SchedulerInfo &info : scheduler_policies())
    if (name == info.name) return info.make();
  return nullptr;
}

}  // namespace nanort::rt
