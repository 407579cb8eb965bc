// nanort-info: what the runtime sees on this machine: version, CPU topology, workers,
// scheduling policies, the devices in use with their memory limits, every OpenCL device found
// (numbered as NANORT_OPENCL_DEVICES counts them), accelerators on the PCI bus, and the
// NANORT_* environment variables with their current values, a malformed value or an unknown
// NANORT_* variable flagged (--env: those alone, without starting the runtime).
#include <nanort/nanort.h>
#include <nanort/dc/human_size.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "config.hpp"
#include "device/accelerator.hpp"
#include "device/device_numbering.hpp"
#include "cuda/cuda_device.hpp"
#include "opencl/opencl_device.hpp"
#include "opencl/opencl_program_cache.hpp"
#include "runtime.hpp"
#include "scheduler/scheduler.hpp"
#include "topology/topology.hpp"

namespace rt = nanort::rt;

extern char **environ;

// The table of variables with each one's value now; a malformed value and an unknown NANORT_
// variable are flagged. Returns the number of malformed values (the runtime would not start).
static int print_environment() {
  std::printf("Environment variables:\n");
  int malformed = 0;
  for (const rt::EnvVar &var : rt::environment_table()) {
    const char *value = std::getenv(var.name);
    const std::string why = value ? rt::check_variable(var.name, value) : std::string();
    const char *shown = !value ? "(unset)" : *value ? value : "(empty)";
    std::printf("  %-24s default %-14s now %s%s\n      %s\n", var.name, var.default_value, shown,
                why.empty() ? "" : "   <- MALFORMED", var.description);
    if (!why.empty()) {
      std::printf("      MALFORMED: %s\n", why.c_str());
      ++malformed;
    }
  }
  // A NANORT_ variable that the runtime does not know is ignored by it: most often a typo.
  std::vector<std::string> unknown;
  for (char **entry = environ; entry && *entry; ++entry) {
    if (std::strncmp(*entry, "NANORT_", 7) != 0) continue;
    const char *equals = std::strchr(*entry, '=');
    const std::string name(*entry, equals ? static_cast<std::size_t>(equals - *entry)
                                          : std::strlen(*entry));
    bool known = false;
    for (const rt::EnvVar &var : rt::environment_table()) known = known || name == var.name;
    if (!known) unknown.push_back(*entry);
  }
  if (!unknown.empty()) {
    std::printf("\nUnknown NANORT_ variables (the runtime ignores them):\n");
    for (const std::string &entry : unknown) {
      const std::string name = entry.substr(0, entry.find('='));
      const char *closest = rt::closest_variable(name);  // as the runtime's warning says
      std::printf("  %s   <- UNKNOWN%s%s%s\n", entry.c_str(), closest ? ": did you mean " : "",
                  closest ? closest : "", closest ? "?" : "");
    }
  }
  if (malformed > 0)
    std::printf("\n%d malformed value(s): the runtime refuses to start with them\n", malformed);
  return malformed;
}

static void usage(std::FILE *out) {
  std::fprintf(out,
               "Usage: nanort-info [--env]\n"
               "\n"
               "Prints what the nanort runtime sees on this machine: version, CPU topology, "
               "workers,\nscheduling policies, devices, and the NANORT_ environment variables.\n"
               "\n"
               "  --env       only the NANORT_ environment variables, without starting the "
               "runtime:\n"
               "              each one's default, value and meaning; a malformed value and an "
               "unknown\n"
               "              NANORT_ variable are flagged (exit status 1 when a value is "
               "malformed)\n"
               "  --help, -h  print this text\n"
               "  --version   print nanort's version\n");
}

int main(int argc, char **argv) {
  bool env_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if (!std::strcmp(argv[i], "--version")) {
      std::printf("nanort-info (nanort %s)\n", nanort_version_string());
      return 0;
    }
    if (!std::strcmp(argv[i], "--env")) {
      env_only = true;
      continue;
    }
    std::fprintf(stderr, "nanort-info: unknown option '%s'\n", argv[i]);
    usage(stderr);
    return 2;
  }
  if (env_only) return print_environment() > 0 ? 1 : 0;
  // A malformed variable would end the program inside the runtime's start: say it here, with
  // where to look. (What only the start can tell, such as NANORT_REQUIRE against the devices
  // found, ends it there with the runtime's own message.)
  for (char **entry = environ; entry && *entry; ++entry) {
    const char *equals = std::strchr(*entry, '=');
    if (std::strncmp(*entry, "NANORT_", 7) != 0 || !equals) continue;
    const std::string name(*entry, static_cast<std::size_t>(equals - *entry));
    bool known = false;  // (an unknown one is only a warning)
    for (const rt::EnvVar &var : rt::environment_table()) known = known || name == var.name;
    if (!known) continue;
    const std::string why = rt::check_variable(name, equals + 1);
    if (why.empty()) continue;
    std::fprintf(stderr,
                 "nanort-info: the runtime does not start: %s\n(nanort-info --env checks every "
                 "NANORT_ variable)\n",
                 why.c_str());
    return 1;
  }
  if (nanort_init() != NANORT_SUCCESS) {
    std::fprintf(stderr,
                 "nanort-info: the runtime does not start: %s\n(nanort-info --env checks every "
                 "NANORT_ variable)\n",
                 nanort_last_error());
    return 1;
  }
  rt::Runtime &runtime = rt::Runtime::get();
  const rt::Topology &topo = runtime.topology();
  std::printf("nanort %s (ABI %d)\n\n", nanort_version_string(), nanort_abi_version());
  std::printf("Machine: %d core(s), %d logical CPU(s), %d NUMA node(s)\n", topo.cores(),
              topo.logical_cpus(), topo.numa_nodes());
  if (topo.usable_cpus() < topo.logical_cpus())
    std::printf("This process is bound to %d of them (taskset, mpirun, the batch system)\n",
                topo.usable_cpus());
  std::printf("CPU workers: %d%s\n", nanort_device_count(NANORT_DEVICE_SMP),
              runtime.config().bind_workers ? ", bound to cores" : "");
  std::printf("Scheduler: %s\n", runtime.scheduler_name());
  for (const rt::SchedulerInfo &info : rt::scheduler_policies())
    std::printf("  %-16s %s\n", info.name, info.description);
  std::printf("\nDevices the runtime runs tasks on:\n");
  std::printf("  smp     %d worker(s)\n", nanort_device_count(NANORT_DEVICE_SMP));
#if NANORT_HAVE_CUDA
  std::printf("  cuda    %d\n", nanort_device_count(NANORT_DEVICE_CUDA));
#else
  std::printf("  cuda    0 (this build has no CUDA backend: cuda.h was not found)\n");
#endif
  std::printf("  opencl  %d\n", nanort_device_count(NANORT_DEVICE_OPENCL));
  const auto &accelerators = runtime.accelerators();
  for (std::size_t i = 0; i < accelerators.size(); ++i)
    std::printf("    %-9s %s, memory limit %s\n", accelerators[i]->name().c_str(),
                accelerators[i]->description().c_str(),
                nanort::dc::human_size(
                    runtime.directory()->capacity(rt::space_of(static_cast<int>(i))))
                    .c_str());

#if NANORT_HAVE_CUDA
  std::printf("\nCUDA devices found (NANORT_CUDA_DEVICES=%s):\n",
              runtime.config().cuda_devices.c_str());
  try {
    std::string why;
    const auto gpus = rt::cuda::list_devices(&why);
    if (gpus.empty()) std::printf("  none: %s\n", why.c_str());
    for (std::size_t i = 0; i < gpus.size(); ++i)
      std::printf("  %zu  %s, compute capability %d.%d, %d SMs, %s, PCI %s\n", i,
                  gpus[i].name.c_str(), gpus[i].major, gpus[i].minor, gpus[i].multiprocessors,
                  nanort::dc::human_size(gpus[i].memory).c_str(), gpus[i].pci_bus_id.c_str());
  } catch (const std::exception &e) {
    std::printf("  cannot list them: %s\n", e.what());
  }
#endif
  std::printf("\nOpenCL devices found (NANORT_OPENCL_DEVICES=%s):\n",
              runtime.config().opencl_devices.c_str());
  // What the ICD loader was told: a launcher that passes these on changed, or not at all,
  // hides platforms without a word (docs/mpi.md, "Running").
  for (const char *name : {"OCL_ICD_VENDORS", "OCL_ICD_FILENAMES"})
    if (const char *value = std::getenv(name)) std::printf("  (%s=%s)\n", name, value);
  try {
    const auto devices = rt::opencl::list_devices();
    if (devices.empty()) std::printf("  none (no OpenCL platform, or none with devices)\n");
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const auto &d = devices[i];
      std::printf(
          "  %zu  %-11s %s\n      platform %s (%s), %s, driver %s\n      %u compute "
          "units, %s global memory, largest buffer %s, alignment %zu bytes\n",
          i, rt::opencl::type_name(d.type), d.name.c_str(), d.platform_name.c_str(),
          d.platform_version.c_str(), d.version.c_str(), d.driver.c_str(), d.compute_units,
          nanort::dc::human_size(d.global_memory).c_str(),
          nanort::dc::human_size(d.max_allocation).c_str(), d.address_alignment);
    }
  } catch (const std::exception &e) {
    std::printf("  cannot list them: %s\n", e.what());
  }
  const std::string cache = rt::opencl::default_program_cache_folder();
  std::printf("OpenCL program cache: %s\n", cache.empty() ? "off" : cache.c_str());
  std::printf("\nAccelerators on the PCI bus (hwloc):\n");
  if (topo.accelerators().empty()) std::printf("  none\n");
  for (const rt::AcceleratorInfo &acc : topo.accelerators())
    std::printf("  %-12s %-11s %-24s %-28s near CPUs %s%s\n", acc.pci_bus_id.c_str(),
                acc.kind.c_str(), acc.vendor.empty() ? "-" : acc.vendor.c_str(),
                acc.name.empty() ? "-" : acc.name.c_str(),
                acc.near_cpus.empty() ? "?" : acc.near_cpus.c_str(),
                acc.numa_node >= 0 ? (" (NUMA " + std::to_string(acc.numa_node) + ")").c_str()
                                   : "");
  std::printf("\n");
  print_environment();
  return 0;
}
