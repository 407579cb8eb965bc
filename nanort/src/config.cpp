#include "config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "device/rank_share.hpp"
#include "scheduler/affinity.hpp"
#include "scheduler/scheduler.hpp"

extern char **environ;

namespace nanort::rt {

const std::vector<EnvVar> &environment_table() {
  static const std::vector<EnvVar> table = {
      {"NANORT_CPU_WORKERS", "logical CPUs",
       "number of CPU workers (threads running smp tasks, the main thread included while it "
       "waits); by default one per logical CPU of the process's binding, or of its share of "
       "the node when several unbound MPI ranks run on it"},
      {"NANORT_SCHEDULER", "breadth-first", "scheduling policy, by name (nanort-info lists them)"},
      {"NANORT_STATS", "0",
       "1: print a summary at exit (tasks and busy time per worker and device, each device "
       "manager's time per task, the data moved, CUDA Driver API calls timed)"},
      {"NANORT_TRACE", "(none)",
       "file.json: write a Chrome/Perfetto trace at exit, one lane per worker and device (%r "
       "in the name: the MPI rank, %p: the process id)"},
      {"NANORT_BIND", "none",
       "cores: bind each CPU worker to a core of its own (hwloc), within the process's binding"},
      {"NANORT_SPIN_US", "50",
       "microseconds an idle worker polls for work before it sleeps (0 to 100000)"},
      {"NANORT_BLOCK_POLL_US", "10000",
       "microseconds a task blocked in a call it waits on (MPI inside tasks: nanort-mpi) "
       "polls that call without pause before it polls between short sleeps (0 to 10000000); "
       "MPI moves a message's data only while polled, as in its own blocking calls"},
      {"NANORT_READY_PER_WORKER", "64",
       "queued ready tasks per worker past which a new task that is ready at once runs in the "
       "thread creating it"},
      {"NANORT_TASKS_IN_FLIGHT", "65536",
       "unfinished children of one task past which its creator helps or waits until half are "
       "done (bounds memory when creation runs far ahead)"},
      {"NANORT_OPENCL_DEVICES", "auto",
       "OpenCL devices to use: auto (the GPUs and accelerators if any, else the CPU devices), "
       "all, none, or a comma list of selectors, each an index (as "
       "nanort-info lists them) or conditions joined by '+': platform:TEXT, vendor:TEXT, "
       "name:TEXT, type:gpu|cpu|accelerator (e.g. type:gpu, 0,2, platform:portable+type:cpu)"},
      {"NANORT_CUDA_DEVICES", "all",
       "NVIDIA GPUs to run CUDA kernels on: all, none, or a comma list of device numbers (as "
       "nanort-info lists them)"},
      {"NANORT_OPENCL_CONTEXTS", "device",
       "OpenCL contexts: device (one per device, as programs that drive each GPU alone do: "
       "data between devices goes through the host) or platform (one per platform: its "
       "devices share buffers and copy among themselves directly)"},
      {"NANORT_OPENCL_LAUNCH", "manager",
       "who enqueues an OpenCL device's kernels: manager (its manager thread) or thread (a "
       "launcher thread of its own, while the manager prepares the next task); either way an "
       "event per 8 kernels at most"},
      {"NANORT_OPENCL_CACHE", "$XDG_CACHE_HOME/nanort/opencl or ~/.cache/nanort/opencl",
       "folder of the on-disk cache of OpenCL program binaries (private to the user); off: no "
       "cache"},
      {"NANORT_DEVICE_MEMORY", "90%",
       "memory each device may hold for task data: a size (bytes, or with K, M, G), a percent "
       "of the device's memory, or a comma list of NAME=LIMIT for single devices (e.g. "
       "512M,opencl1=64K); past it, least recently used data is evicted"},
      {"NANORT_PERF_MODEL", "$XDG_CACHE_HOME/nanort/perfmodels/HOST.model or ~/.cache/...",
       "NANORT_SCHEDULER=dmda or energy: the file of this machine's performance model (read at start, "
       "written at the end); off: learnt afresh, not kept"},
      {"NANORT_AFFINITY", "(none)",
       "affinity scores, lower is better: TASK:PLACE=SCORE,...;TASK:... where TASK is a task's "
       "label (a function task's name) and PLACE smp, cuda, opencl or one device (cuda1); a "
       "score is a relative cost (cuda=1,smp=8: eight times as long on a CPU worker); tasks "
       "with scores go by them under breadth-first and locality, and under dmda until measured"},
      {"NANORT_ENERGY_RATE", "1",
       "NANORT_SCHEDULER=energy: joules a task must save per millisecond it finishes later for "
       "the slower place to be taken (0: the least energy, whatever the time)"},
      {"NANORT_POWER", "smp=10,opencl=100,cuda=300",
       "NANORT_SCHEDULER=energy: watts of a busy CPU worker, OpenCL device, CUDA GPU (a CUDA "
       "GPU's own figure replaces it once NVML has measured it running tasks)"},
      {"NANORT_CUDA_LAUNCH", "thread",
       "who launches a CUDA GPU's kernels: thread (a launcher thread of its own, while the "
       "GPU's manager thread prepares the next task) or manager (the manager thread itself)"},
      {"NANORT_CUDA_KERNEL_STREAMS", "2",
       "kernel streams per CUDA GPU: 2 (kernels of independent tasks take them in turn, so "
       "that one's start overlaps the tail of the one before) or 1 (every kernel in launch "
       "order)"},
      {"NANORT_CUDA_COPY_ALIGN", "page",
       "copies of 1 MiB and more between a CUDA GPU and host memory that starts inside a page "
       "(a malloc'd array starts 16 bytes past one): page (the bytes up to the next page go "
       "first, on their own, so that the rest moves from a page's start) or off (one copy)"},
      {"NANORT_TASKITER_GRAPH", "enqueue",
       "a taskiter whose recorded tasks all ran on one device replays as one launch per "
       "iteration: on a CUDA GPU a CUDA Graph (its kernels captured once), on an OpenCL device "
       "its kernels recorded once, their arguments set, and enqueued again in order: enqueue; "
       "all (the same, OpenCL as a command buffer where the device has cl_khr_command_buffer); "
       "cuda (OpenCL replays task by task); or off (each replayed task launched by itself)"},
      {"NANORT_CUDA_GRAPH_DOT", "(none)",
       "a file: each CUDA Graph captured for a taskiter's replays is written there (the last "
       "one stays), as Graphviz DOT with every node's kernel, grid, block and parameters"},
      {"NANORT_CUDA_GRAPH_TIMING", "(unset)",
       "set: each series of a taskiter's CUDA Graph launches is timed on the GPU and reported "
       "on stderr (a diagnostic: the launcher thread waits for the series to end)"},
      {"NANORT_EARLY_LAUNCH", "across",
       "a device task whose predecessors' kernels are all launched is launched behind them "
       "before they end, to wait for them on the device: across (also behind kernels of "
       "other devices of its kind, where every pair of them copies directly and waits for "
       "each other's kernels: CUDA GPUs with peer access, OpenCL devices of one context) or "
       "device (only behind kernels of the device it runs on)"},
      {"NANORT_WRITE_BACK", "eager",
       "when a device's results go home: eager (as soon as a task ends that no submitted task "
       "waits for, while the device goes on; page-locked host memory only) or taskwait (at the "
       "flushing taskwait, all at once)"},
      {"NANORT_HOST_REGISTER", "auto",
       "ordinary host memory that moves to and from CUDA GPUs (else NVIDIA's OpenCL GPUs): "
       "auto (a range of at least 256K "
       "copied twice, or one of NANORT_HOST_REGISTER_LARGE copied once, is page-locked by a "
       "helper thread, and its later copies go direct at the "
       "bus's speed; memory the program frees or unmaps is unlocked first; docs/devices.md "
       "says what is not seen) or off (copies of it go through pinned staging buffers; "
       "nanort_host_register still locks what it is given)"},
      {"NANORT_HOST_REGISTER_LARGE", "8M",
       "with NANORT_HOST_REGISTER=auto: a range at least this large (a size, e.g. 64M) is "
       "locked at its first copy rather than its second (NANORT_HOST_REGISTER_FIRST), so that "
       "its locking is done by the time the program comes back to it"},
      {"NANORT_HOST_REGISTER_FIRST", "wait",
       "with NANORT_HOST_REGISTER=auto: the first copy to a GPU of a range of "
       "NANORT_HOST_REGISTER_LARGE or more waits for its locking and goes direct (wait), or "
       "goes through staging while the helper locks it (stage; the staged copy's enqueues "
       "wait for the driver, which the locking holds)"},
      {"NANORT_HOST_REGISTER_PIECE", "whole",
       "with NANORT_HOST_REGISTER=auto: ranges are locked in registrations of at most this "
       "size (e.g. 64M), so that copies other threads start in the meantime wait less for the "
       "driver (whole: a range in one registration)"},
      {"NANORT_HOST_REGISTER_LIMIT", "50%",
       "host memory page-locked by NANORT_HOST_REGISTER=auto at most: a size (e.g. 8G) or a "
       "percent of the machine's memory; ranges past it stay ordinary"},
      {"NANORT_DEVICE_LOOKAHEAD", "2",
       "with several devices of a kind: tasks a device holds at once from the queue they share "
       "(1 to 64; those launched behind its own kernels do not count); the others wait there for "
       "whichever device frees up first, so that tasks of unequal cost even out"},
      {"NANORT_DEVICE_IN_FLIGHT", "auto",
       "tasks per device staged or running at once (1 to 64): the inputs of the next tasks move "
       "while the device computes; auto: 32 for CUDA GPUs and OpenCL devices (completions in "
       "launch order, checked in groups), 8 for others"},
      {"NANORT_STAGING_THREADS", "auto",
       "threads copying between ordinary host memory and the pinned staging buffers of GPUs "
       "(1 to 64); auto: the logical CPUs, at least 2 and at most 16 (they sleep between copies)"},
      {"NANORT_REQUIRE", "(none)",
       "devices this machine must have, e.g. cuda:2,opencl-gpu:2 (cuda: NVIDIA GPUs through "
       "CUDA, opencl: OpenCL devices of any type, opencl-gpu: OpenCL GPUs; a kind alone means "
       "1): the program stops at start, with the backend's error, when fewer are found or one "
       "chosen by NANORT_CUDA_DEVICES / NANORT_OPENCL_DEVICES cannot be opened (for test "
       "scripts and jobs that must not quietly run without their GPUs)"},
      {"NANORT_STAGING_CHUNK", "16M",
       "bytes of each of the two pinned staging buffers per device (64K to 1G); a copy moves in "
       "chunks of a quarter of its size, at least 1M, at most this"},
      // Read by the nanocc / nanocxx wrappers, not by the runtime: known, so that a program
      // run from the shell where they are set draws no warning.
      {"NANORT_CC", "clang 19", "nanocc: the host C compiler (pragma-plugin/README.md)"},
      {"NANORT_CXX", "clang++ 19", "nanocxx: the host C++ compiler"},
      {"NANORT_NVCC", "nvcc", "nanocc / nanocxx: the CUDA compiler of .cu files"},
      {"NANORT_CUDA_ARCH", "80,90", "nanocc / nanocxx: GPU architectures of the fatbin"},
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

// "512M", "64K", "1G", "4096" or "50%".
MemoryLimit parse_limit(const std::string &text, const char *name = "NANORT_DEVICE_MEMORY") {
  MemoryLimit limit;
  char *end = nullptr;
  errno = 0;
  const double number = std::strtod(text.c_str(), &end);
  std::string unit = end ? end : "";
  bool ok = errno == 0 && end != text.c_str() && number >= 0;
  if (ok && unit == "%") {
    ok = number > 0 && number <= 100;
    limit.fraction = number / 100;
  } else if (ok) {
    double scale = 1;
    if (unit == "K" || unit == "k") scale = 1024.0;
    else if (unit == "M" || unit == "m") scale = 1024.0 * 1024;
    else if (unit == "G" || unit == "g") scale = 1024.0 * 1024 * 1024;
    else ok = unit.empty();
    limit.bytes = static_cast<std::size_t>(number * scale);
    ok = ok && limit.bytes > 0;
  }
  if (!ok)
    throw ConfigError(std::string(name) + ": '" + text +
                      "' is not a size (e.g. 4096, 64K, 512M, 2G) or a percent (e.g. 50%)");
  return limit;
}

std::vector<MemoryLimit> parse_memory_limits(const std::string &text) {
  std::vector<MemoryLimit> limits;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, comma - begin);
    begin = comma + 1;
    const std::size_t equals = item.find('=');
    MemoryLimit limit = parse_limit(equals == std::string::npos ? item : item.substr(equals + 1));
    if (equals != std::string::npos) limit.device = item.substr(0, equals);
    limits.push_back(limit);
  }
  return limits;
}

// NANORT_POWER: smp=W,opencl=W,cuda=W (any of them).
void parse_power(const std::string &text, Config &config) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const std::size_t equals = item.find('=');
    const std::string kind = item.substr(0, equals == std::string::npos ? 0 : equals);
    double *target = kind == "smp" ? &config.smp_watts
                     : kind == "opencl" ? &config.opencl_watts
                     : kind == "cuda" ? &config.cuda_watts : nullptr;
    char *end = nullptr;
    const char *number = equals == std::string::npos ? "" : item.c_str() + equals + 1;
    const double watts = std::strtod(number, &end);
    if (!target || end == number || *end != '\0' || !(watts > 0) || watts > 1e6)
      throw ConfigError("NANORT_POWER='" + text + "': '" + item +
                        "' is not smp=W, opencl=W or cuda=W with W a positive number of watts");
    *target = watts;
  }
}

// NANORT_REQUIRE: KIND[:N],...
std::vector<DeviceRequirement> parse_requirements(const std::string &text) {
  std::vector<DeviceRequirement> requirements;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const std::size_t colon = item.find(':');
    DeviceRequirement requirement{item.substr(0, colon), 1};
    bool ok = requirement.kind == "cuda" || requirement.kind == "opencl" ||
              requirement.kind == "opencl-gpu";
    if (ok && colon != std::string::npos) {
      const std::string number = item.substr(colon + 1);
      ok = !number.empty() && number.size() <= 4 &&
           number.find_first_not_of("0123456789") == std::string::npos;
      if (ok) requirement.count = std::stoi(number);
      ok = ok && requirement.count >= 1;
    }
    if (!ok)
      throw ConfigError("NANORT_REQUIRE='" + text + "': '" + item +
                        "' is not KIND or KIND:N with KIND one of cuda, opencl, opencl-gpu and "
                        "N a number of devices from 1");
    requirements.push_back(requirement);
  }
  return requirements;
}

}  // namespace

std::size_t memory_limit_for(const std::vector<MemoryLimit> &limits, const std::string &device,
                             std::size_t memory) {
  std::size_t limit = static_cast<std::size_t>(static_cast<double>(memory) * 0.9);
  for (const MemoryLimit &entry : limits)
    if (entry.device.empty() || entry.device == device)
      limit = entry.bytes ? entry.bytes
                          : static_cast<std::size_t>(static_cast<double>(memory) * entry.fraction);
  return std::max<std::size_t>(limit, 1);
}

// The known variable a misspelt one most likely meant: the nearest by edit distance (letters
// added, dropped, changed, or two swapped; case ignored) when it is near enough for a typo
// (1 edit in the part after NANORT_ up to 4 letters, 2 up to 8, else 3); nullptr otherwise.
const char *closest_variable(const std::string &name) {
  auto upper = [](std::string text) {
    for (char &c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
  };
  const std::string a = upper(name);
  const char *best = nullptr;
  std::size_t best_distance = 0;
  for (const EnvVar &var : environment_table()) {
    const std::string b = upper(var.name);
    // Optimal string alignment distance, rows of the table kept three at a time.
    std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] != b[j - 1])});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          row[j] = std::min(row[j], before[j - 2] + 1);
      }
      std::swap(before, last);
      std::swap(last, row);
    }
    const std::size_t distance = last[b.size()];
    if (!best || distance < best_distance) {
      best = var.name;
      best_distance = distance;
    }
  }
  const std::size_t letters = name.size() > 7 ? name.size() - 7 : 0;  // after "NANORT_"
  const std::size_t near = letters <= 4 ? 1 : letters <= 8 ? 2 : 3;
  return best && best_distance <= near ? best : nullptr;
}

Config read_config(std::vector<std::string> &warnings) {
  Config config;
  if (const char *v = std::getenv("NANORT_CPU_WORKERS"))
    config.cpu_workers = static_cast<int>(parse_integer("NANORT_CPU_WORKERS", v, 1, 4096));
  if (const char *v = std::getenv("NANORT_SCHEDULER")) {
    if (!make_scheduler(v)) {
      std::string known;
      for (const SchedulerInfo &info : scheduler_policies())
        known += std::string(known.empty() ? "" : ", ") + info.name;
      throw ConfigError(std::string("NANORT_SCHEDULER='") + v + "' names no policy (known: " +
                        known + ")");
    }
    config.scheduler = v;
  }
  if (const char *v = std::getenv("NANORT_STATS")) config.stats = parse_flag("NANORT_STATS", v);
  if (const char *v = std::getenv("NANORT_TRACE")) config.trace_path = name_for_rank(v);
  if (const char *v = std::getenv("NANORT_BIND")) {
    if (!std::strcmp(v, "cores"))
      config.bind_workers = true;
    else if (std::strcmp(v, "none") != 0 && *v)
      throw ConfigError(std::string("NANORT_BIND='") + v + "' is not one of none, cores");
  }
  if (const char *v = std::getenv("NANORT_SPIN_US"))
    config.spin_us = static_cast<int>(parse_integer("NANORT_SPIN_US", v, 0, 100000));
  if (const char *v = std::getenv("NANORT_BLOCK_POLL_US"))
    config.block_poll_us = parse_integer("NANORT_BLOCK_POLL_US", v, 0, 10000000);
  if (const char *v = std::getenv("NANORT_READY_PER_WORKER"))
    config.ready_per_worker =
        static_cast<std::size_t>(parse_integer("NANORT_READY_PER_WORKER", v, 1, 1 << 24));
  if (const char *v = std::getenv("NANORT_TASKS_IN_FLIGHT"))
    config.tasks_in_flight =
        static_cast<std::size_t>(parse_integer("NANORT_TASKS_IN_FLIGHT", v, 2, 1L << 30));

  if (const char *v = std::getenv("NANORT_OPENCL_DEVICES")) config.opencl_devices = v;
  if (const char *v = std::getenv("NANORT_CUDA_DEVICES")) config.cuda_devices = v;
  if (const char *v = std::getenv("NANORT_DEVICE_LOOKAHEAD"); v && *v)
    config.device_lookahead =
        static_cast<std::size_t>(parse_integer("NANORT_DEVICE_LOOKAHEAD", v, 1, 64));
  if (const char *v = std::getenv("NANORT_DEVICE_IN_FLIGHT"); v && std::strcmp(v, "auto") != 0)
    config.device_in_flight = static_cast<int>(parse_integer("NANORT_DEVICE_IN_FLIGHT", v, 1, 64));
  if (const char *v = std::getenv("NANORT_DEVICE_MEMORY"); v && *v)
    config.device_memory = parse_memory_limits(v);
  if (const char *v = std::getenv("NANORT_STAGING_THREADS"); v && std::strcmp(v, "auto") != 0)
    config.staging_threads = static_cast<int>(parse_integer("NANORT_STAGING_THREADS", v, 1, 64));
  if (const char *v = std::getenv("NANORT_STAGING_CHUNK"); v && *v) {
    const MemoryLimit size = parse_limit(v, "NANORT_STAGING_CHUNK");
    if (size.bytes < (std::size_t(64) << 10) || size.bytes > (std::size_t(1) << 30))
      throw ConfigError(std::string("NANORT_STAGING_CHUNK='") + v +
                        "' is not a size from 64K to 1G");
    config.staging_chunk = size.bytes;
  }

  if (const char *v = std::getenv("NANORT_AFFINITY")) config.affinity = v;
  if (const char *v = std::getenv("NANORT_CUDA_KERNEL_STREAMS");
      v && std::strcmp(v, "1") != 0 && std::strcmp(v, "2") != 0)
    throw ConfigError(std::string("NANORT_CUDA_KERNEL_STREAMS='") + v + "' is not 1 or 2");
  if (const char *v = std::getenv("NANORT_CUDA_COPY_ALIGN");
      v && std::strcmp(v, "page") != 0 && std::strcmp(v, "off") != 0)
    throw ConfigError(std::string("NANORT_CUDA_COPY_ALIGN='") + v + "' is not one of page, off");
  if (const char *v = std::getenv("NANORT_OPENCL_CONTEXTS"); v && *v) {
    if (std::strcmp(v, "platform") != 0 && std::strcmp(v, "device") != 0)
      throw ConfigError(std::string("NANORT_OPENCL_CONTEXTS='") + v +
                        "' is not one of device, platform");
    config.opencl_context_per_device = !std::strcmp(v, "device");
  }
  if (const char *v = std::getenv("NANORT_CUDA_LAUNCH"); v && *v) {
    if (std::strcmp(v, "manager") != 0 && std::strcmp(v, "thread") != 0)
      throw ConfigError(std::string("NANORT_CUDA_LAUNCH='") + v +
                        "' is not one of manager, thread");
    config.cuda_launch_thread = !std::strcmp(v, "thread");
  }
  if (const char *v = std::getenv("NANORT_OPENCL_LAUNCH"); v && *v) {
    if (std::strcmp(v, "manager") != 0 && std::strcmp(v, "thread") != 0)
      throw ConfigError(std::string("NANORT_OPENCL_LAUNCH='") + v +
                        "' is not one of manager, thread");
    config.opencl_launch_thread = !std::strcmp(v, "thread");
  }
  if (const char *v = std::getenv("NANORT_EARLY_LAUNCH"); v && *v) {
    if (!std::strcmp(v, "across") || !std::strcmp(v, "device"))
      config.early_across = !std::strcmp(v, "across");
    else
      throw ConfigError(std::string("NANORT_EARLY_LAUNCH='") + v + "' is not one of across, device");
  }
  if (const char *v = std::getenv("NANORT_TASKITER_GRAPH"); v && *v) {
    if (!std::strcmp(v, "enqueue") || !std::strcmp(v, "all") || !std::strcmp(v, "cuda") ||
        !std::strcmp(v, "off")) {
      config.taskiter_graphs = std::strcmp(v, "off") != 0;
      config.taskiter_opencl_graphs = !std::strcmp(v, "all") || !std::strcmp(v, "enqueue");
      config.taskiter_opencl_command_buffers = !std::strcmp(v, "all");
    } else {
      throw ConfigError(std::string("NANORT_TASKITER_GRAPH='") + v +
                        "' is not one of enqueue, all, cuda, off");
    }
  }
  if (const char *v = std::getenv("NANORT_WRITE_BACK"); v && *v) {
    if (!std::strcmp(v, "eager") || !std::strcmp(v, "taskwait"))
      config.eager_write_back = !std::strcmp(v, "eager");
    else
      throw ConfigError(std::string("NANORT_WRITE_BACK='") + v + "' is not one of eager, taskwait");
  }
  if (const char *v = std::getenv("NANORT_HOST_REGISTER"); v && *v) {
    if (!std::strcmp(v, "auto") || !std::strcmp(v, "off"))
      config.auto_host_register = !std::strcmp(v, "auto");
    else
      throw ConfigError(std::string("NANORT_HOST_REGISTER='") + v + "' is not one of auto, off");
  }
  // A size in bytes (no percent), for the two below.
  const auto size_of = [](const char *v, const char *name, const char *examples) {
    MemoryLimit size;
    try {
      size = parse_limit(v, name);
    } catch (const ConfigError &) {
    }
    if (!size.bytes)
      throw ConfigError(std::string(name) + ": '" + v + "' is not a size (e.g. " + examples + ")");
    return size.bytes;
  };
  if (const char *v = std::getenv("NANORT_HOST_REGISTER_LARGE"); v && *v)
    config.host_register_large = size_of(v, "NANORT_HOST_REGISTER_LARGE", "4M, 64M, 1G");
  if (const char *v = std::getenv("NANORT_HOST_REGISTER_FIRST"); v && *v) {
    if (!std::strcmp(v, "wait") || !std::strcmp(v, "stage"))
      config.host_register_wait = !std::strcmp(v, "wait");
    else
      throw ConfigError(std::string("NANORT_HOST_REGISTER_FIRST='") + v +
                        "' is not one of wait, stage");
  }
  if (const char *v = std::getenv("NANORT_HOST_REGISTER_PIECE"); v && *v && std::strcmp(v, "whole"))
    config.host_register_piece = size_of(v, "NANORT_HOST_REGISTER_PIECE", "16M, 64M, or whole");
  if (const char *v = std::getenv("NANORT_HOST_REGISTER_LIMIT"); v && *v)
    config.host_register_limit = parse_limit(v, "NANORT_HOST_REGISTER_LIMIT");
  if (const char *v = std::getenv("NANORT_ENERGY_RATE"); v && *v) {
    char *end = nullptr;
    const double rate = std::strtod(v, &end);
    if (*end != '\0' || !(rate >= 0) || rate > 1e12)
      throw ConfigError(std::string("NANORT_ENERGY_RATE='") + v +
                        "' is not a number of joules per millisecond (0 or more)");
    config.energy_rate = rate;
  }
  if (const char *v = std::getenv("NANORT_POWER"); v && *v) parse_power(v, config);
  if (const char *v = std::getenv("NANORT_REQUIRE"); v && *v) config.require = parse_requirements(v);

  for (char **entry = environ; entry && *entry; ++entry) {
    if (std::strncmp(*entry, "NANORT_", 7) != 0) continue;
    const char *equals = std::strchr(*entry, '=');
    std::string name(*entry, equals ? static_cast<std::size_t>(equals - *entry) : 0);
    bool known = false;
    for (const EnvVar &var : environment_table()) known = known || name == var.name;
    if (known) continue;
    const char *close = closest_variable(name);
    warnings.push_back("unknown variable " + name + " ignored" +
                       (close ? std::string("; did you mean ") + close + "?" : ""));
  }
  return config;
}

std::string check_variable(const std::string &name, const std::string &value) {
  bool known = false;
  for (const EnvVar &var : environment_table()) known = known || name == var.name;
  if (!known) return name + " is not a variable of nanort (nanort-info --env lists them)";
  // read_config itself, over an environment of this one variable, so that the checks are the
  // runtime's own and cannot drift from them.
  std::string entry = name + "=" + value;
  char *alone[] = {entry.data(), nullptr};
  struct Restore {
    char **saved = environ;
    ~Restore() { environ = saved; }
  } restore;
  environ = alone;
  try {
    std::vector<std::string> warnings;
    read_config(warnings);
  } catch (const ConfigError &e) {
    return e.what();
  }
  // Parsed when the runtime starts, with the message it stops with.
  if (name == "NANORT_AFFINITY") {
    AffinityTable table;
    if (const auto why = table.parse(value)) return "NANORT_AFFINITY: " + *why;
  }
  return "";
}

}  // namespace nanort::rt
