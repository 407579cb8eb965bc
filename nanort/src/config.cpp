#include "config.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "scheduler/scheduler.hpp"

extern char **environ;

namespace nanort::rt {

const std::vector<EnvVar> &environment_table() {
  static const std::vector<EnvVar> table = {
      {"NANORT_CPU_WORKERS", "logical CPUs",
       "number of CPU workers (threads running smp tasks, the main thread included while it "
       "waits)"},
      {"NANORT_SCHEDULER", "breadth-first", "scheduling policy, by name (nanort-info lists them)"},
      {"NANORT_STATS", "0", "1: print a summary at exit (tasks and busy time per worker)"},
      {"NANORT_TRACE", "(none)",
       "file.json: write a Chrome/Perfetto trace at exit, one lane per worker and device"},
      {"NANORT_BIND", "none", "cores: bind each CPU worker to a core of its own (hwloc)"},
      {"NANORT_SPIN_US", "50",
       "microseconds an idle worker polls for work before it sleeps (0 to 100000)"},
      {"NANORT_READY_PER_WORKER", "64",
       "queued ready tasks per worker past which a new task that is ready at once runs in the "
       "thread creating it"},
      {"NANORT_TASKS_IN_FLIGHT", "65536",
       "unfinished children of one task past which its creator helps or waits until half are "
       "done (bounds memory when creation runs far ahead)"},
  };
  return table;
}

namespace {

long parse_integer(const char *name, const char *text, long low, long high) {
  errno = 0;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high)
    throw ConfigError(std::string(name) + "='" + text + "' is not an integer in [" +
                      std::to_string(low) + ", " + std::to_string(high) + "]");
  return value;
}

bool parse_flag(const char *name, const char *text) {
  if (!std::strcmp(text, "1") || !std::strcmp(text, "yes") || !std::strcmp(text, "true"))
    return true;
  if (!std::strcmp(text, "0") || !std::strcmp(text, "no") || !std::strcmp(text, "false") ||
      !*text)
    return false;
  throw ConfigError(std::string(name) + "='" + text + "' is not one of 1, yes, true, 0, no, false");
}

}  // namespace

Config read_config(std::vector<std::string> &warnings) {
  Config config;
  if (const char *v = std::getenv("NANORT_CPU_WORKERS"))
    config.cpu_workers = static_cast<int>(parse_integer("NANORT_CPU_WORKERS", v, 1, 4096));
  if (const char *v = std::getenv("NANORT_SCHEDULER")) {
    if (!make_scheduler(v)) {
      std::string known;
      for (const SchedulerInfo &info : scheduler_policies())
        known += std::string(known.empty() ? "" : ", ") + info.name;
      throw ConfigError(std::string("NANORT_SCHEDULER='") + v + "' names no policy; known: " +
                        known);
    }
    config.scheduler = v;
  }
  if (const char *v = std::getenv("NANORT_STATS")) config.stats = parse_flag("NANORT_STATS", v);
  if (const char *v = std::getenv("NANORT_TRACE")) config.trace_path = v;
  if (const char *v = std::getenv("NANORT_BIND")) {
    if (!std::strcmp(v, "cores"))
      config.bind_workers = true;
    else if (std::strcmp(v, "none") != 0 && *v)
      throw ConfigError(std::string("NANORT_BIND='") + v + "' is not one of none, cores");
  }
  if (const char *v = std::getenv("NANORT_SPIN_US"))
    config.spin_us = static_cast<int>(parse_integer("NANORT_SPIN_US", v, 0, 100000));
  if (const char *v = std::getenv("NANORT_READY_PER_WORKER"))
    config.ready_per_worker =
        static_cast<std::size_t>(parse_integer("NANORT_READY_PER_WORKER", v, 1, 1 << 24));
  if (const char *v = std::getenv("NANORT_TASKS_IN_FLIGHT"))
    config.tasks_in_flight =
        static_cast<std::size_t>(parse_integer("NANORT_TASKS_IN_FLIGHT", v, 2, 1L << 30));

  for (char **entry = environ; entry && *entry; ++entry) {
    if (std::strncmp(*entry, "NANORT_", 7) != 0) continue;
    const char *equals = std::strchr(*entry, '=');
    std::string name(*entry, equals ? static_cast<std::size_t>(equals - *entry) : 0);
    bool known = false;
    for (const EnvVar &var : environment_table()) known = known || name == var.name;
    if (!known) warnings.push_back("unknown variable " + name + " ignored");
  }
  return config;
}

}  // namespace nanort::rt
