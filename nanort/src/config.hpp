// Config: the NANORT_* environment variables, read once at start-up.
//
// The table of variables is data (environment_table), so that the documentation printed by
// `nanort-info --env` and the checks below cannot drift apart. A malformed value stops the
// program with a message naming the variable and what it accepts; an unknown NANORT_*
// variable gets a warning (a typo should not be silently ignored).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanort::rt {

struct EnvVar {
  const char *name;
  const char *default_value;
  const char *description;
};

const std::vector<EnvVar> &environment_table();

// A device memory limit from NANORT_DEVICE_MEMORY: for one device by name ("opencl1") or for
// all (empty name); in bytes, or as a fraction of the device's memory.
struct MemoryLimit {
  std::string device;
  std::size_t bytes = 0;
  double fraction = 0;  // used when bytes == 0
};

// The limit that applies to 'device' with 'memory' bytes (90% of it by default).
std::size_t memory_limit_for(const std::vector<MemoryLimit> &limits, const std::string &device,
                             std::size_t memory);

// NANORT_REQUIRE: devices this machine must have, by kind ("cuda", "opencl", "opencl-gpu").
struct DeviceRequirement {
  std::string kind;
  int count = 1;
};

struct Config {
  int cpu_workers = 0;               // 0: one per logical CPU
  std::string scheduler = "breadth-first";
  bool stats = false;
  std::string trace_path;            // empty: no trace
  bool bind_workers = false;
  int spin_us = 50;                  // idle workers poll this long before sleeping
  long block_poll_us = 10000;        // nanort_block_until polls this long before sleeping
  std::size_t ready_per_worker = 64;  // past this many queued per worker, creators run tasks
  std::size_t tasks_in_flight = 65536;  // children of one task past which its creator waits
  std::string opencl_devices = "auto";  // selection, see opencl_device.hpp
  // NANORT_OPENCL_CONTEXTS: a context per device (the default) or per platform.
  bool opencl_context_per_device = true;
  // NANORT_OPENCL_LAUNCH: kernels enqueued by a launcher thread per device (thread) or by the
  // device's manager thread (manager, the default).
  bool opencl_launch_thread = false;
  std::string cuda_devices = "all";     // selection, see cuda_device.hpp
  // NANORT_CUDA_LAUNCH: kernels launched by a launcher thread per GPU (thread) or by the GPU's
  // manager thread (manager).
  bool cuda_launch_thread = true;
  int device_in_flight = 0;            // tasks staged or running per device; 0: by device kind
  std::size_t device_lookahead = 2;    // NANORT_DEVICE_LOOKAHEAD
  std::vector<MemoryLimit> device_memory;  // later entries win
  int staging_threads = 0;                 // 0: auto (the logical CPUs, 2 to 16)
  std::size_t staging_chunk = std::size_t(16) << 20;  // bytes per pinned staging buffer
  std::string affinity;                // NANORT_AFFINITY, parsed by AffinityTable
  bool eager_write_back = true;        // NANORT_WRITE_BACK: eager (true) or taskwait
  bool auto_host_register = true;      // NANORT_HOST_REGISTER: auto (true) or off
  MemoryLimit host_register_limit{"", 0, 0.5};  // NANORT_HOST_REGISTER_LIMIT
  std::size_t host_register_large = std::size_t(8) << 20;  // NANORT_HOST_REGISTER_LARGE
  std::size_t host_register_piece = 0;                     // NANORT_HOST_REGISTER_PIECE
  bool host_register_wait = true;  // NANORT_HOST_REGISTER_FIRST: wait (true) or stage
  bool early_across = true;            // NANORT_EARLY_LAUNCH: across (true) or device
  bool taskiter_graphs = true;  // NANORT_TASKITER_GRAPH: enqueue, cuda or all (true), or off
  bool taskiter_opencl_graphs = true;  // NANORT_TASKITER_GRAPH=enqueue or all: OpenCL too
  bool taskiter_opencl_command_buffers = false;  // NANORT_TASKITER_GRAPH=all: as command buffers
  double energy_rate = 1.0;            // NANORT_SCHEDULER=energy: joules per millisecond
  // Watts of a busy place for the energy policy (per CPU worker, per OpenCL device, per CUDA
  // GPU until NVML has measured it).
  double smp_watts = 10, opencl_watts = 100, cuda_watts = 300;
  std::vector<DeviceRequirement> require;  // NANORT_REQUIRE
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads the environment. Throws ConfigError on a malformed value. Unknown NANORT_*
// variables are appended to 'warnings'.
Config read_config(std::vector<std::string> &warnings);

// The known variable a misspelt NANORT_ name most likely meant (a typo away: letters added,
// dropped, changed or two swapped, case ignored), or nullptr.
const char *closest_variable(const std::string &name);

// Checks one variable as the runtime's start would, without starting it (nanort-info --env):
// an empty string when 'value' is valid for 'name', else the reason (the message the runtime
// would stop with). A name that is not in environment_table() gives a reason too. The device
// selections (NANORT_OPENCL_DEVICES, NANORT_CUDA_DEVICES) depend on the devices found and are
// not checked. Reads the environment through read_config with 'environ' pointing at this one
// variable for the call: not for use while other threads read the environment.
std::string check_variable(const std::string &name, const std::string &value);

}  // namespace nanort::rt
