// opencl_bench: what the runtime's OpenCL path costs next to raw OpenCL on the same device,
// measured side by side in one run (issue 3, item 6; bench/README.md says how).
//
//   A. transfer bandwidth: host -> device and device -> host through the runtime's directory
//      (tasks with in/out accesses, taskwait flushes) against blocking clEnqueueWriteBuffer /
//      clEnqueueReadBuffer from pageable memory and from pinned memory;
//   B. kernel-task overhead: N tiny kernel tasks, dependent (a chain) and independent, against
//      a raw loop of clEnqueueNDRangeKernel on an in-order queue.
//
//   opencl_bench [--device I|all] [--sizes 1,16,64,256] [--max-mib M] [--reps R] [--tasks N]
//                [--work-items W] [--parts transfer,overhead] [--quick] [--list]
//
// The runtime is used through its public C ABI only. It opens the device the command line
// names (NANORT_OPENCL_DEVICES=<index>, set before its first call); raw OpenCL opens the same
// device, numbered the same way: platform by platform (clGetPlatformIDs), device by device
// (clGetDeviceIDs with CL_DEVICE_TYPE_ALL). '--device all' (the default) runs this program
// once per device, each in a process of its own (the runtime starts once per process).
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <nanort/nanort.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

// ---------------------------------------------------------------------------------------------
// Kernels: the same source for the runtime and for raw OpenCL

const char *const kSource = R"CL(
// Host -> device: reads the first and the last byte of x into out (proves the data moved).
__kernel void probe(__global const uchar *x, ulong last, __global uchar *out) {
  out[0] = x[0];
  out[1] = x[last];
}
// Device -> host: x is written on the device (an 'out' access: the whole range comes back).
__kernel void touch(__global uchar *x, ulong last, uchar v) {
  x[0] = v;
  x[last] = v;
}
// Kernel-task overhead: one increment per work-item.
__kernel void inc(__global int *x) {
  x[get_global_id(0)] += 1;
}
)CL";

struct ProbeArgs {
  const unsigned char *x;
  std::uint64_t last;
  unsigned char *out;
};
struct TouchArgs {
  unsigned char *x;
  std::uint64_t last;
  unsigned char v;
};
struct IncArgs {
  int *x;
};

const nanort_kernel_module kModule = {NANORT_ABI_VERSION, NANORT_MODULE_OPENCL_SOURCE, kSource,
                                      0, nullptr, "bench/opencl_bench.cpp"};

const nanort_kernel_arg kProbeKernelArgs[] = {
    {offsetof(ProbeArgs, x), sizeof(void *), NANORT_ARG_BUFFER},
    {offsetof(ProbeArgs, last), sizeof(std::uint64_t), NANORT_ARG_VALUE},
    {offsetof(ProbeArgs, out), sizeof(void *), NANORT_ARG_BUFFER}};
const nanort_task_impl kProbeImpl = {NANORT_DEVICE_OPENCL, nullptr, "probe", &kModule,
                                     kProbeKernelArgs, 3};
const nanort_task_site kProbeSite = {NANORT_ABI_VERSION, "probe", __FILE__, __LINE__,
                                     &kProbeImpl, 1, nullptr};

const nanort_kernel_arg kTouchKernelArgs[] = {
    {offsetof(TouchArgs, x), sizeof(void *), NANORT_ARG_BUFFER},
    {offsetof(TouchArgs, last), sizeof(std::uint64_t), NANORT_ARG_VALUE},
    {offsetof(TouchArgs, v), sizeof(unsigned char), NANORT_ARG_VALUE}};
const nanort_task_impl kTouchImpl = {NANORT_DEVICE_OPENCL, nullptr, "touch", &kModule,
                                     kTouchKernelArgs, 3};
const nanort_task_site kTouchSite = {NANORT_ABI_VERSION, "touch", __FILE__, __LINE__,
                                     &kTouchImpl, 1, nullptr};

const nanort_kernel_arg kIncKernelArgs[] = {
    {offsetof(IncArgs, x), sizeof(void *), NANORT_ARG_BUFFER}};
const nanort_task_impl kIncImpl = {NANORT_DEVICE_OPENCL, nullptr, "inc", &kModule,
                                   kIncKernelArgs, 1};
const nanort_task_site kIncSite = {NANORT_ABI_VERSION, "inc", __FILE__, __LINE__, &kIncImpl, 1,
                                   nullptr};

// ---------------------------------------------------------------------------------------------
// Errors, clock, statistics

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "opencl_bench: %s\n", message.c_str());
  std::exit(1);
}

void check_nanort(nanort_status status, const char *what) {
  if (status != NANORT_SUCCESS)
    die(std::string(what) + ": " + nanort_status_string(status) + ": " + nanort_last_error());
}

void check_cl(cl_int status, const char *what) {
  if (status != CL_SUCCESS) die(std::string(what) + " failed with OpenCL error " + std::to_string(status));
}

// A wrong result means the data did not move, or moved wrong: the timings would mean nothing.
void check_value(bool ok, const char *what, long got, long expected) {
  if (ok) return;
  std::fprintf(stderr, "opencl_bench: WRONG RESULT: %s is %ld, expected %ld\n", what, got,
               expected);
  std::abort();
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Times {
  std::vector<double> values;
  void add(double seconds) { values.push_back(seconds); }
  double best() const { return values.empty() ? 0 : *std::min_element(values.begin(), values.end()); }
  double median() const {
    if (values.empty()) return 0;
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  }
};

// ---------------------------------------------------------------------------------------------
// Devices, numbered as NANORT_OPENCL_DEVICES numbers them

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name, platform_name, version, type;
  cl_ulong global_memory = 0, max_allocation = 0;
  bool host_unified = false;
};

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS) return "?";
  std::string text(size, '\0');
  clGetPlatformInfo(platform, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string device_string(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS) return "?";
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// Platform by platform, device by device; a platform whose devices cannot be listed is left
// out, as the runtime does. 'why' says why the list is empty.
std::vector<Device> list_devices(std::string &why) {
  cl_uint platform_count = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
  if (status != CL_SUCCESS || platform_count == 0) {
    why = status == CL_SUCCESS || status == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */
              ? "no OpenCL platform (the ICD loader found no driver)"
              : "clGetPlatformIDs failed with OpenCL error " + std::to_string(status);
    return {};
  }
  std::vector<cl_platform_id> platforms(platform_count);
  check_cl(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");
  std::vector<Device> devices;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS)
      continue;
    for (cl_device_id id : ids) {
      Device d;
      d.platform = platform;
      d.id = id;
      d.name = device_string(id, CL_DEVICE_NAME);
      d.platform_name = platform_string(platform, CL_PLATFORM_NAME);
      d.version = device_string(id, CL_DEVICE_VERSION);
      cl_device_type type = 0;
      clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
      d.type = type & CL_DEVICE_TYPE_GPU ? "gpu"
               : type & CL_DEVICE_TYPE_CPU ? "cpu"
               : type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
                                                   : "other";
      clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d.global_memory, &d.global_memory,
                      nullptr);
      clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d.max_allocation,
                      &d.max_allocation, nullptr);
      cl_bool unified = CL_FALSE;
      clGetDeviceInfo(id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, nullptr);
      d.host_unified = unified == CL_TRUE;
      devices.push_back(std::move(d));
    }
  }
  if (devices.empty()) why = "OpenCL platforms found, but no device on any of them";
  return devices;
}

// ---------------------------------------------------------------------------------------------
// Options

struct Options {
  std::string device = "all";             // an index, or all
  std::vector<std::size_t> sizes_mib = {1, 16, 64, 256};
  std::size_t max_mib = 0;                // 0: no limit
  int reps = 10;
  int tasks = 2000;
  std::size_t work_items = 64;
  bool transfer = true, overhead = true;
  bool list = false;
  std::vector<std::string> passthrough;   // every option but --device, for the child runs
};

[[noreturn]] void usage(const char *message) {
  if (message) std::fprintf(stderr, "opencl_bench: %s\n", message);
  std::fprintf(stderr,
               "usage: opencl_bench [--device I|all] [--sizes MiB,MiB,...] [--max-mib M]\n"
               "                    [--reps R] [--tasks N] [--work-items W]\n"
               "                    [--parts transfer,overhead] [--quick] [--list]\n"
               "  --device      OpenCL device index (platform by platform, device by device,\n"
               "                as nanort-info numbers them) or 'all' (default: one run each)\n"
               "  --sizes       transfer sizes in MiB (default 1,16,64,256)\n"
               "  --max-mib     leave out sizes above M MiB\n"
               "  --reps        timed repetitions of each measurement (default 10)\n"
               "  --tasks       kernel tasks per run in part B (default 2000)\n"
               "  --work-items  work-items of each kernel in part B (default 64, at most 1024)\n"
               "  --parts       transfer, overhead or both (default both)\n"
               "  --quick       sizes 1,4, 2 reps, 200 tasks: checks that it all runs\n"
               "  --list        list the OpenCL devices and stop\n");
  std::exit(2);
}

long parse_number(const char *text, const char *option, long low, long high) {
  char *end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (!text[0] || *end || value < low || value > high)
    usage((std::string(option) + " wants a number from " + std::to_string(low) + " to " +
           std::to_string(high) + ", not '" + text + "'").c_str());
  return value;
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) usage((arg + " wants a value").c_str());
      return argv[++i];
    };
    const int first = i;
    if (arg == "--device") {
      o.device = value();
      if (o.device != "all") parse_number(o.device.c_str(), "--device", 0, 1 << 20);
      continue;  // not passed through
    } else if (arg == "--sizes") {
      o.sizes_mib.clear();
      std::string list = value();
      std::size_t begin = 0;
      while (begin <= list.size()) {
        const std::size_t comma = std::min(list.find(',', begin), list.size());
        const std::string item = list.substr(begin, comma - begin);
        o.sizes_mib.push_back(
            static_cast<std::size_t>(parse_number(item.c_str(), "--sizes", 1, 1 << 20)));
        begin = comma + 1;
      }
    } else if (arg == "--max-mib") {
      o.max_mib = static_cast<std::size_t>(parse_number(value(), "--max-mib", 1, 1 << 20));
    } else if (arg == "--reps") {
      o.reps = static_cast<int>(parse_number(value(), "--reps", 1, 1000));
    } else if (arg == "--tasks") {
      o.tasks = static_cast<int>(parse_number(value(), "--tasks", 1, 10000000));
    } else if (arg == "--work-items") {
      o.work_items = static_cast<std::size_t>(parse_number(value(), "--work-items", 1, 1024));
    } else if (arg == "--parts") {
      const std::string parts = value();
      o.transfer = parts.find("transfer") != std::string::npos;
      o.overhead = parts.find("overhead") != std::string::npos;
      if (!o.transfer && !o.overhead) usage("--parts wants transfer, overhead or both");
    } else if (arg == "--quick") {
      o.sizes_mib = {1, 4};
      o.reps = 2;
      o.tasks = 200;
    } else if (arg == "--list") {
      o.list = true;
    } else if (arg == "--help" || arg == "-h") {
      usage(nullptr);
    } else {
      usage(("unknown option " + arg).c_str());
    }
    for (int k = first; k <= i; ++k) o.passthrough.push_back(argv[k]);
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Raw OpenCL on the same device

struct Raw {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program program = nullptr;
  cl_kernel inc = nullptr;

  explicit Raw(const Device &device) {
    cl_int status = CL_SUCCESS;
    const cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform), 0};
    context = clCreateContext(properties, 1, &device.id, nullptr, nullptr, &status);
    check_cl(status, "clCreateContext");
    queue = clCreateCommandQueue(context, device.id, 0, &status);  // in order
    check_cl(status, "clCreateCommandQueue");
    const char *text = kSource;
    program = clCreateProgramWithSource(context, 1, &text, nullptr, &status);
    check_cl(status, "clCreateProgramWithSource");
    if (clBuildProgram(program, 1, &device.id, nullptr, nullptr, nullptr) != CL_SUCCESS) {
      std::size_t size = 0;
      clGetProgramBuildInfo(program, device.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program, device.id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      die("building the kernels for raw OpenCL failed:\n" + log);
    }
    inc = clCreateKernel(program, "inc", &status);
    check_cl(status, "clCreateKernel");
  }
  ~Raw() {
    clReleaseKernel(inc);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
  }
  cl_mem buffer(std::size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE) const {
    cl_int status = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context, flags, bytes, nullptr, &status);
    check_cl(status, "clCreateBuffer");
    return mem;
  }
};

// ---------------------------------------------------------------------------------------------
// A. Transfers

struct TransferRow {
  std::size_t bytes = 0;
  int reps = 0;
  Times raw_write_pageable, raw_read_pageable, raw_write_pinned, raw_read_pinned;
  // One thread's memcpy between the pageable and the pinned host memory, both ways: what a
  // copy staged through pinned buffers cannot beat (for reference).
  Times memcpy_to_pinned, memcpy_from_pinned;
  // The same with as many threads as the runtime's staging uses: the bound of a staged copy.
  Times threads_to_pinned, threads_from_pinned;
  // nanort, host -> device: probe task reading x the first time after a flush (the data
  // moves) and the same task once more (x is on the device: no copy).
  Times h2d_miss, h2d_hit;
  // nanort, device -> host: touch task writing x + taskwait_noflush; a flushing taskwait
  // alone after it; touch task + flushing taskwait.
  Times d2h_noflush, d2h_flush_alone, d2h_with_flush;
};

// Threads the runtime copies staging buffers with (NANORT_STAGING_THREADS, else its default).
int staging_threads() {
  if (const char *v = std::getenv("NANORT_STAGING_THREADS"); v && std::strcmp(v, "auto") != 0)
    return std::max(1, std::atoi(v));
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, 16);
}

// memcpy split into 'threads' parts copied at once (threads started for the call).
void threaded_memcpy(void *target, const void *source, std::size_t bytes, int threads) {
  const std::size_t part = (bytes / static_cast<std::size_t>(threads) + 63) & ~std::size_t(63);
  std::vector<std::thread> helpers;
  for (int i = 1; i < threads; ++i) {
    const std::size_t start = std::min(bytes, part * static_cast<std::size_t>(i));
    const std::size_t end = std::min(bytes, start + part);
    helpers.emplace_back([=] {
      std::memcpy(static_cast<char *>(target) + start, static_cast<const char *>(source) + start,
                  end - start);
    });
  }
  std::memcpy(target, source, std::min(bytes, part));
  for (std::thread &helper : helpers) helper.join();
}

double gbps(std::size_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds * 1e-9 : 0;
}

void submit_probe(unsigned char *x, std::size_t bytes, unsigned char *out) {
  nanort_task *t = nanort_task_create(&kProbeSite, sizeof(ProbeArgs));
  if (!t) die(std::string("nanort_task_create: ") + nanort_last_error());
  *static_cast<ProbeArgs *>(nanort_task_args(t)) = ProbeArgs{x, bytes - 1, out};
  check_nanort(nanort_task_access(t, x, bytes, NANORT_IN), "nanort_task_access");
  check_nanort(nanort_task_access(t, out, 64, NANORT_OUT), "nanort_task_access");
  const std::size_t one = 1;
  check_nanort(nanort_task_set_ndrange(t, 1, &one, &one), "nanort_task_set_ndrange");
  check_nanort(nanort_task_submit(t), "nanort_task_submit (probe)");
}

void submit_touch(unsigned char *x, std::size_t bytes, unsigned char v) {
  nanort_task *t = nanort_task_create(&kTouchSite, sizeof(TouchArgs));
  if (!t) die(std::string("nanort_task_create: ") + nanort_last_error());
  *static_cast<TouchArgs *>(nanort_task_args(t)) = TouchArgs{x, bytes - 1, v};
  check_nanort(nanort_task_access(t, x, bytes, NANORT_OUT), "nanort_task_access");
  const std::size_t one = 1;
  check_nanort(nanort_task_set_ndrange(t, 1, &one, &one), "nanort_task_set_ndrange");
  check_nanort(nanort_task_submit(t), "nanort_task_submit (touch)");
}

// One repetition of every transfer measurement of one size; 'record' false: a warm-up.
void transfer_rep(const Raw &raw, TransferRow &row, cl_mem raw_device, unsigned char *raw_pageable,
                  unsigned char *raw_pinned, unsigned char *x, unsigned char *out, int rep,
                  bool record) {
  const std::size_t bytes = row.bytes;
  auto timed = [&](Times &times, auto &&body) {
    const Clock::time_point start = Clock::now();
    body();
    const double seconds = seconds_since(start);
    if (record) times.add(seconds);
  };
  // Raw OpenCL, blocking copies of the whole size.
  timed(row.raw_write_pageable, [&] {
    check_cl(clEnqueueWriteBuffer(raw.queue, raw_device, CL_TRUE, 0, bytes, raw_pageable, 0,
                                  nullptr, nullptr), "clEnqueueWriteBuffer (pageable)");
  });
  timed(row.raw_read_pageable, [&] {
    check_cl(clEnqueueReadBuffer(raw.queue, raw_device, CL_TRUE, 0, bytes, raw_pageable, 0,
                                 nullptr, nullptr), "clEnqueueReadBuffer (pageable)");
  });
  timed(row.raw_write_pinned, [&] {
    check_cl(clEnqueueWriteBuffer(raw.queue, raw_device, CL_TRUE, 0, bytes, raw_pinned, 0,
                                  nullptr, nullptr), "clEnqueueWriteBuffer (pinned)");
  });
  timed(row.raw_read_pinned, [&] {
    check_cl(clEnqueueReadBuffer(raw.queue, raw_device, CL_TRUE, 0, bytes, raw_pinned, 0,
                                 nullptr, nullptr), "clEnqueueReadBuffer (pinned)");
  });
  timed(row.memcpy_to_pinned, [&] { std::memcpy(raw_pinned, raw_pageable, bytes); });
  timed(row.memcpy_from_pinned, [&] { std::memcpy(raw_pageable, raw_pinned, bytes); });
  const int threads = staging_threads();
  timed(row.threads_to_pinned, [&] { threaded_memcpy(raw_pinned, raw_pageable, bytes, threads); });
  timed(row.threads_from_pinned, [&] { threaded_memcpy(raw_pageable, raw_pinned, bytes, threads); });

  // nanort, host -> device. x is valid on the host alone here (the last taskwait flushed);
  // new values at both ends, which the probe must see on the device.
  const auto first = static_cast<unsigned char>(3 + 2 * rep), last = static_cast<unsigned char>(4 + 2 * rep);
  x[0] = first;
  x[bytes - 1] = last;
  timed(row.h2d_miss, [&] {
    submit_probe(x, bytes, out);
    check_nanort(nanort_taskwait_noflush(), "nanort_taskwait_noflush");
  });
  timed(row.h2d_hit, [&] {
    submit_probe(x, bytes, out);
    check_nanort(nanort_taskwait_noflush(), "nanort_taskwait_noflush");
  });
  check_nanort(nanort_taskwait(), "nanort_taskwait");  // out comes back, x's copy is dropped
  check_value(out[0] == first, "the first byte the device read", out[0], first);
  check_value(out[1] == last, "the last byte the device read", out[1], last);

  // nanort, device -> host.
  const auto v1 = static_cast<unsigned char>(100 + 2 * rep), v2 = static_cast<unsigned char>(101 + 2 * rep);
  timed(row.d2h_noflush, [&] {
    submit_touch(x, bytes, v1);
    check_nanort(nanort_taskwait_noflush(), "nanort_taskwait_noflush");
  });
  timed(row.d2h_flush_alone, [&] { check_nanort(nanort_taskwait(), "nanort_taskwait"); });
  check_value(x[0] == v1 && x[bytes - 1] == v1, "a byte written on the device", x[bytes - 1], v1);
  timed(row.d2h_with_flush, [&] {
    submit_touch(x, bytes, v2);
    check_nanort(nanort_taskwait(), "nanort_taskwait");
  });
  check_value(x[0] == v2 && x[bytes - 1] == v2, "a byte written on the device", x[bytes - 1], v2);
}

void run_transfers(const Options &o, const Device &device, const Raw &raw) {
  std::vector<std::size_t> sizes;
  std::vector<std::string> left_out;
  for (std::size_t mib : o.sizes_mib) {
    const std::size_t bytes = mib << 20;
    if (o.max_mib && mib > o.max_mib) continue;
    // The runtime needs the size and a little more on the device, raw OpenCL the size once.
    if (bytes > device.max_allocation || 2 * bytes + (64 << 20) > device.global_memory) {
      left_out.push_back(std::to_string(mib));
      continue;
    }
    if (std::find(sizes.begin(), sizes.end(), bytes) == sizes.end()) sizes.push_back(bytes);
  }
  std::printf("\nA. Transfer bandwidth, GB/s (1 GB = 1e9 bytes)\n");
  if (!left_out.empty()) {
    std::printf("   left out (larger than the device allows): ");
    for (const std::string &mib : left_out) std::printf("%s MiB ", mib.c_str());
    std::printf("\n");
  }
  if (sizes.empty()) {
    std::printf("   no size to measure\n");
    return;
  }
  // Largest first: the runtime's device allocation made for the largest size then holds
  // every smaller one (each starts at x), so no size pays for an allocation.
  std::sort(sizes.rbegin(), sizes.rend());
  const std::size_t largest = sizes.front();

  // Host memory, touched once so that no timed copy pays for first-touch page faults.
  auto *x = static_cast<unsigned char *>(std::malloc(largest));            // nanort's data
  auto *raw_pageable = static_cast<unsigned char *>(std::malloc(largest));  // raw, pageable
  auto *out = static_cast<unsigned char *>(std::aligned_alloc(64, 64));
  if (!x || !raw_pageable || !out) die("out of host memory");
  std::memset(x, 1, largest);
  std::memset(raw_pageable, 1, largest);
  std::memset(out, 0, 64);
  // Raw, pinned: a CL_MEM_ALLOC_HOST_PTR buffer mapped for the whole run (the usual way to get
  // page-locked host memory from OpenCL); its pointer is the host side of the copies.
  cl_mem pinned_buffer = raw.buffer(largest, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
  cl_int status = CL_SUCCESS;
  auto *raw_pinned = static_cast<unsigned char *>(clEnqueueMapBuffer(
      raw.queue, pinned_buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, largest, 0, nullptr,
      nullptr, &status));
  check_cl(status, "clEnqueueMapBuffer");
  std::memset(raw_pinned, 1, largest);
  cl_mem raw_device = raw.buffer(largest);

  std::vector<TransferRow> rows;
  const Clock::time_point start = Clock::now();
  for (std::size_t bytes : sizes) {
    TransferRow row;
    row.bytes = bytes;
    transfer_rep(raw, row, raw_device, raw_pageable, raw_pinned, x, out, 0, false);  // warm-up
    // Small copies take as long as the task around them varies (tens of microseconds): they
    // get more repetitions, up to 8 times --reps, as many as moving 64 MiB takes.
    const std::size_t scale = std::clamp<std::size_t>((std::size_t(64) << 20) / bytes, 1, 8);
    row.reps = o.reps * static_cast<int>(scale);
    for (int rep = 1; rep <= row.reps; ++rep)
      transfer_rep(raw, row, raw_device, raw_pageable, raw_pinned, x, out, rep, true);
    rows.push_back(std::move(row));
  }
  const double elapsed = seconds_since(start);
  std::reverse(rows.begin(), rows.end());  // smallest first

  bool noise = false;
  auto table = [&](bool best) {
    auto t = [&](const Times &times) { return best ? times.best() : times.median(); };
    std::printf("\n   %s of the repetitions (reps)\n", best ? "best" : "median");
    std::printf("   %8s %5s | %19s | %19s | %19s | %19s | %19s\n", "", "", "raw pageable",
                "raw pinned", "nanort", "nanort/raw pinned", "nanort/raw pageable");
    std::printf("   %8s %5s | %9s %9s | %9s %9s | %9s %9s | %9s %9s | %9s %9s\n", "MiB", "reps",
                "write", "read", "write", "read", "write", "read", "write", "read", "write",
                "read");
    for (const TransferRow &r : rows) {
      const double pw = gbps(r.bytes, t(r.raw_write_pageable));
      const double pr = gbps(r.bytes, t(r.raw_read_pageable));
      const double qw = gbps(r.bytes, t(r.raw_write_pinned));
      const double qr = gbps(r.bytes, t(r.raw_read_pinned));
      // Differences of two times: the transfer alone, without the task and kernel around it.
      const double h2d = t(r.h2d_miss) - t(r.h2d_hit);
      const double d2h = t(r.d2h_with_flush) - t(r.d2h_noflush);
      const double nw = gbps(r.bytes, h2d), nr = gbps(r.bytes, d2h);
      // A difference that is not positive: the copy hid in the noise of the task's own time.
      auto cell = [&](double value, bool valid) {
        char text[16];
        if (valid) std::snprintf(text, sizeof text, "%9.2f", value);
        else std::snprintf(text, sizeof text, "%9s", "-");
        noise = noise || !valid;
        return std::string(text);
      };
      const bool w_ok = h2d > 0, r_ok = d2h > 0;
      std::printf("   %8zu %5d | %9.2f %9.2f | %9.2f %9.2f | %s %s | %s %s | %s %s\n",
                  r.bytes >> 20, r.reps, pw, pr, qw, qr, cell(nw, w_ok).c_str(), cell(nr, r_ok).c_str(),
                  cell(nw / qw, w_ok).c_str(), cell(nr / qr, r_ok).c_str(),
                  cell(nw / pw, w_ok).c_str(), cell(nr / pr, r_ok).c_str());
    }
  };
  // The median first: nanort's figures are differences of two times, and at small sizes the
  // fastest of each (the best table) need not come from comparable repetitions.
  table(false);
  table(true);
  if (noise)
    std::printf("   -: the difference of the two times was not positive (the copy is within the\n"
                "      noise of the task's own time at this size): more --reps, or larger sizes\n");

  std::printf("\n   nanort's timed parts, median ms (write = miss - hit; read = with flush - noflush)\n");
  std::printf("   and, for reference, GB/s of memcpy between pageable and pinned memory by one\n"
              "   thread and by %d (the runtime's staging threads, NANORT_STAGING_THREADS)\n",
              staging_threads());
  std::printf("   %8s | %9s %9s | %9s %10s %11s | %11s | %9s %9s | %9s %9s\n", "MiB", "miss",
              "hit", "noflush", "with flush", "flush alone", "flush GB/s", "memcpy to", "from",
              "threads to", "from");
  for (const TransferRow &r : rows)
    std::printf("   %8zu | %9.3f %9.3f | %9.3f %10.3f %11.3f | %11.2f | %9.2f %9.2f | %9.2f %9.2f\n",
                r.bytes >> 20, r.h2d_miss.median() * 1e3, r.h2d_hit.median() * 1e3,
                r.d2h_noflush.median() * 1e3, r.d2h_with_flush.median() * 1e3,
                r.d2h_flush_alone.median() * 1e3, gbps(r.bytes, r.d2h_flush_alone.median()),
                gbps(r.bytes, r.memcpy_to_pinned.median()),
                gbps(r.bytes, r.memcpy_from_pinned.median()),
                gbps(r.bytes, r.threads_to_pinned.median()),
                gbps(r.bytes, r.threads_from_pinned.median()));
  std::printf("   (part A took %.1f s)\n", elapsed);

  clReleaseMemObject(raw_device);
  check_cl(clEnqueueUnmapMemObject(raw.queue, pinned_buffer, raw_pinned, 0, nullptr, nullptr),
           "clEnqueueUnmapMemObject");
  clFinish(raw.queue);
  clReleaseMemObject(pinned_buffer);
  std::free(out);
  std::free(raw_pageable);
  // x stays allocated: the runtime's directory still has a device allocation mirroring it
  // (cached for reuse); a later malloc reusing the address must not meet it half-way.
}

// ---------------------------------------------------------------------------------------------
// B. Kernel-task overhead

void submit_inc(int *x, std::size_t work_items) {
  nanort_task *t = nanort_task_create(&kIncSite, sizeof(IncArgs));
  if (!t) die(std::string("nanort_task_create: ") + nanort_last_error());
  *static_cast<IncArgs *>(nanort_task_args(t)) = IncArgs{x};
  check_nanort(nanort_task_access(t, x, work_items * sizeof(int), NANORT_INOUT),
               "nanort_task_access");
  check_nanort(nanort_task_set_ndrange(t, 1, &work_items, &work_items), "nanort_task_set_ndrange");
  check_nanort(nanort_task_submit(t), "nanort_task_submit (inc)");
}

// The runtime's OpenCL backend asks for an event (and flushes) with one launch in this many
// at most (kKernelsPerMark in nanort/src/opencl/opencl_launcher.hpp).
constexpr std::size_t kLaunchesPerEvent = 8;

void run_overhead(const Options &o, const Raw &raw) {
  const int n = o.tasks;
  const std::size_t w = o.work_items;
  // Each independent task has a slot of its own, 256 bytes apart at least (allocations of
  // their own on the device, each starting at its slot).
  const std::size_t slot_ints = std::max<std::size_t>(64, (w + 63) / 64 * 64);
  const std::size_t slot_bytes = slot_ints * sizeof(int);
  auto *chain = static_cast<int *>(std::aligned_alloc(256, slot_bytes));
  auto *slots = static_cast<int *>(std::aligned_alloc(256, slot_bytes * static_cast<std::size_t>(n)));
  if (!chain || !slots) die("out of host memory");
  std::memset(chain, 0, slot_bytes);
  std::memset(slots, 0, slot_bytes * static_cast<std::size_t>(n));

  // Raw OpenCL: the same kernel, an in-order queue, buffers of the same sizes.
  cl_mem chain_buffer = raw.buffer(slot_bytes);
  std::vector<cl_mem> slot_buffers(static_cast<std::size_t>(n));
  for (cl_mem &b : slot_buffers) b = raw.buffer(slot_bytes);
  const int zero = 0;
  check_cl(clEnqueueFillBuffer(raw.queue, chain_buffer, &zero, sizeof zero, 0, slot_bytes, 0,
                               nullptr, nullptr), "clEnqueueFillBuffer");
  for (cl_mem b : slot_buffers)
    check_cl(clEnqueueFillBuffer(raw.queue, b, &zero, sizeof zero, 0, slot_bytes, 0, nullptr,
                                 nullptr), "clEnqueueFillBuffer");
  check_cl(clFinish(raw.queue), "clFinish");
  auto launch = [&](cl_mem buffer, bool set) {
    if (set) check_cl(clSetKernelArg(raw.inc, 0, sizeof buffer, &buffer), "clSetKernelArg");
    check_cl(clEnqueueNDRangeKernel(raw.queue, raw.inc, 1, nullptr, &w, &w, 0, nullptr, nullptr),
             "clEnqueueNDRangeKernel");
  };

  // Raw OpenCL driven the way the runtime drives a device (nanort/src/opencl): per launch the
  // kernel's argument set; an event and a clFlush with every 'group'-th launch only (the
  // runtime's launch marks: on an in-order queue that event covers the launches before it);
  // at most NANORT_DEVICE_IN_FLIGHT launches outstanding (default 32), the oldest group's
  // event polled with clGetEventInfo (yielding between polls) and released once complete.
  // With group 1: an event and a flush per launch. The part of nanort's time that the OpenCL
  // calls alone explain.
  const char *in_flight_text = std::getenv("NANORT_DEVICE_IN_FLIGHT");
  const std::size_t in_flight =
      std::clamp<long>(in_flight_text ? std::atol(in_flight_text) : 32, 1, 64);
  struct Group {
    cl_event event;
    std::size_t launches;
  };
  auto launch_polled = [&](cl_mem buffer, std::deque<Group> &groups, std::size_t &outstanding,
                           std::size_t &open, std::size_t group) {
    while (outstanding >= in_flight) {
      if (open > 0) {  // the manager seals what it holds back when it cannot launch more
        cl_event marker = nullptr;
        check_cl(clEnqueueMarkerWithWaitList(raw.queue, 0, nullptr, &marker),
                 "clEnqueueMarkerWithWaitList");
        check_cl(clFlush(raw.queue), "clFlush");
        groups.push_back(Group{marker, open});
        open = 0;
      }
      cl_int state = CL_COMPLETE;
      check_cl(clGetEventInfo(groups.front().event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                              sizeof state, &state, nullptr), "clGetEventInfo");
      if (state <= CL_COMPLETE) {
        clReleaseEvent(groups.front().event);
        outstanding -= groups.front().launches;
        groups.pop_front();
      } else {
        std::this_thread::yield();
      }
    }
    check_cl(clSetKernelArg(raw.inc, 0, sizeof buffer, &buffer), "clSetKernelArg");
    const bool closes = open + 1 == group;
    cl_event event = nullptr;
    check_cl(clEnqueueNDRangeKernel(raw.queue, raw.inc, 1, nullptr, &w, &w, 0, nullptr,
                                    closes ? &event : nullptr), "clEnqueueNDRangeKernel");
    ++outstanding;
    ++open;
    if (closes) {
      check_cl(clFlush(raw.queue), "clFlush");
      groups.push_back(Group{event, open});
      open = 0;
    }
  };
  auto run_polled = [&](std::size_t group) {
    std::deque<Group> groups;
    std::size_t outstanding = 0, open = 0;
    for (int i = 0; i < n; ++i)
      launch_polled(slot_buffers[static_cast<std::size_t>(i)], groups, outstanding, open, group);
    check_cl(clFinish(raw.queue), "clFinish");
    for (const Group &g : groups) clReleaseEvent(g.event);
  };

  Times nanort_chain, nanort_independent, raw_chain, raw_independent, raw_sync, raw_polled,
      raw_event_each, replayed_chain, replayed_independent;
  long runs = 0;
  long chain_runs = 0, own_runs = 0;  // of nanort's patterns, replays included (the checks)
  // Replayed (taskiter): one taskiter records the n tasks and replays them kWarm times (T1:
  // the recording, a first replay task by task, then the recording of the kernels where the
  // runtime replays them as one launch, NANORT_TASKITER_GRAPH=all or enqueue), another does
  // the same and kReplays replays more (T2); a replay in the steady state costs
  // (T2 - T1) / kReplays.
  constexpr int kWarm = 2, kReplays = 6;
  const auto replayed = [&](Times &into, long &runs_of, bool timed, auto &&one_iteration) {
    double once = 0;
    for (int replays : {kWarm, kWarm + kReplays}) {
      const Clock::time_point start = Clock::now();
      nanort_taskiter *iter = nullptr;
      check_nanort(nanort_taskiter_begin(&iter), "nanort_taskiter_begin");
      one_iteration();
      check_nanort(nanort_taskiter_end(iter, static_cast<std::uint64_t>(replays)),
                   "nanort_taskiter_end");
      runs_of += 1 + replays;
      const double seconds = seconds_since(start);
      if (replays == kWarm) once = seconds;
      else if (timed) into.add((seconds - once) / kReplays / n);
    }
  };
  auto per_task = [&](Clock::time_point start) { return seconds_since(start) / n; };
  // Each repetition runs the five variants one after another, so that all of them see the
  // same state of the machine. Repetition 0 is a warm-up: nanort's kernel, allocations and
  // first copies. Between runs nanort's data stays on the device (taskwait_noflush): every
  // later run finds its buffers there and moves nothing.
  for (int rep = 0; rep <= o.reps; ++rep, ++runs) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < n; ++i) submit_inc(chain, w);
    check_nanort(nanort_taskwait_noflush(), "nanort_taskwait_noflush");
    if (rep) nanort_chain.add(per_task(start));
    ++chain_runs;

    start = Clock::now();
    for (int i = 0; i < n; ++i) submit_inc(slots + static_cast<std::size_t>(i) * slot_ints, w);
    check_nanort(nanort_taskwait_noflush(), "nanort_taskwait_noflush");
    if (rep) nanort_independent.add(per_task(start));
    ++own_runs;

    replayed(replayed_chain, chain_runs, rep > 0, [&] {
      for (int i = 0; i < n; ++i) submit_inc(chain, w);
    });
    replayed(replayed_independent, own_runs, rep > 0, [&] {
      for (int i = 0; i < n; ++i) submit_inc(slots + static_cast<std::size_t>(i) * slot_ints, w);
    });

    start = Clock::now();  // queued: launches pipelined on the in-order queue
    launch(chain_buffer, true);
    for (int i = 1; i < n; ++i) launch(chain_buffer, false);
    check_cl(clFinish(raw.queue), "clFinish");
    if (rep) raw_chain.add(per_task(start));

    start = Clock::now();
    for (int i = 0; i < n; ++i) launch(slot_buffers[static_cast<std::size_t>(i)], true);
    check_cl(clFinish(raw.queue), "clFinish");
    if (rep) raw_independent.add(per_task(start));

    start = Clock::now();  // latency: each launch waited for before the next
    launch(chain_buffer, true);
    check_cl(clFinish(raw.queue), "clFinish");
    for (int i = 1; i < n; ++i) {
      launch(chain_buffer, false);
      check_cl(clFinish(raw.queue), "clFinish");
    }
    if (rep) raw_sync.add(per_task(start));

    start = Clock::now();
    run_polled(kLaunchesPerEvent);
    if (rep) raw_polled.add(per_task(start));

    start = Clock::now();
    run_polled(1);
    if (rep) raw_event_each.add(per_task(start));
  }

  // What single calls of the runtime's launch path cost on this platform (after the runs:
  // the queue is idle, the event complete).
  auto per_call = [&](auto &&call) {
    constexpr int kCalls = 1000;
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < kCalls; ++i) call();
    return seconds_since(start) / kCalls * 1e6;
  };
  cl_event probe = nullptr;
  check_cl(clEnqueueMarkerWithWaitList(raw.queue, 0, nullptr, &probe), "clEnqueueMarker");
  check_cl(clFinish(raw.queue), "clFinish");
  const double set_arg_us = per_call([&] {
    check_cl(clSetKernelArg(raw.inc, 0, sizeof chain_buffer, &chain_buffer), "clSetKernelArg");
  });
  const double event_info_us = per_call([&] {
    cl_int state = CL_COMPLETE;
    check_cl(clGetEventInfo(probe, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state,
                            nullptr), "clGetEventInfo");
  });
  const double flush_us = per_call([&] { check_cl(clFlush(raw.queue), "clFlush"); });
  const double marker_us = per_call([&] {
    cl_event marker = nullptr;
    check_cl(clEnqueueMarkerWithWaitList(raw.queue, 0, nullptr, &marker), "clEnqueueMarker");
    clReleaseEvent(marker);
  });
  check_cl(clFinish(raw.queue), "clFinish");
  clReleaseEvent(probe);

  // Results: every counter as many times incremented as launches were made.
  check_nanort(nanort_taskwait(), "nanort_taskwait");  // everything back to the host
  for (std::size_t j = 0; j < w; ++j)
    check_value(chain[j] == chain_runs * n, "a nanort chain counter", chain[j], chain_runs * n);
  for (int i = 0; i < n; ++i)
    for (std::size_t j = 0; j < w; ++j) {
      const int got = slots[static_cast<std::size_t>(i) * slot_ints + j];
      check_value(got == own_runs, "a nanort independent task's counter", got, own_runs);
    }
  std::vector<int> back(w);
  check_cl(clEnqueueReadBuffer(raw.queue, chain_buffer, CL_TRUE, 0, w * sizeof(int), back.data(),
                               0, nullptr, nullptr), "clEnqueueReadBuffer");
  for (std::size_t j = 0; j < w; ++j)
    check_value(back[j] == 2 * runs * n, "a raw chain counter", back[j], 2 * runs * n);
  check_cl(clEnqueueReadBuffer(raw.queue, slot_buffers.back(), CL_TRUE, 0, w * sizeof(int),
                               back.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
  for (std::size_t j = 0; j < w; ++j)
    check_value(back[j] == 3 * runs, "a raw independent counter", back[j], 3 * runs);
  clReleaseMemObject(chain_buffer);
  for (cl_mem b : slot_buffers) clReleaseMemObject(b);

  std::printf("\nB. Kernel-task overhead: %d launches of a kernel of %zu work-item(s) per run, "
              "us per task\n", n, w);
  std::printf("   %-44s %10s %10s | %10s %10s\n", "", "best", "ratio", "median", "ratio");
  auto line = [](const char *what, const Times &t, const Times *base) {
    const double b = t.best() * 1e6, m = t.median() * 1e6;
    if (base) {
      std::printf("   %-44s %10.2f %10.2f | %10.2f %10.2f\n", what, b, b / (base->best() * 1e6),
                  m, m / (base->median() * 1e6));
    } else {
      std::printf("   %-44s %10.2f %10s | %10.2f %10s\n", what, b, "", m, "");
    }
  };
  line("raw: in-order queue, one buffer, clFinish", raw_chain, nullptr);
  line("raw: in-order queue, own buffer each", raw_independent, nullptr);
  line("raw: clFinish after every launch", raw_sync, nullptr);
  char polled_name[64];
  std::snprintf(polled_name, sizeof polled_name, "raw: runtime's calls, own buffer, <= %zu out",
                in_flight);
  line(polled_name, raw_polled, nullptr);
  line("raw: the same, an event and clFlush each", raw_event_each, nullptr);
  line("nanort chain (inout one buffer) / raw queue", nanort_chain, &raw_chain);
  line("nanort chain / raw clFinish after each", nanort_chain, &raw_sync);
  line("nanort independent (own buffer) / raw queue", nanort_independent, &raw_independent);
  line("nanort independent / raw runtime's calls", nanort_independent, &raw_polled);
  line("nanort chain replayed (taskiter) / raw queue", replayed_chain, &raw_chain);
  line("nanort independent replayed / raw queue", replayed_independent, &raw_independent);
  std::printf("   (ratio: nanort / raw; above 1, nanort is slower)\n");
  // The raw queue's own time drifts from one repetition to the next (and between processes):
  // each repetition's nanort run against the raw run of the same repetition, moments apart.
  auto paired = [](const char *what, const Times &ours, const Times &raw) {
    Times difference;
    for (std::size_t i = 0; i < ours.values.size() && i < raw.values.size(); ++i)
      difference.add(ours.values[i] - raw.values[i]);
    if (difference.values.empty()) return;
    const auto [low, high] =
        std::minmax_element(difference.values.begin(), difference.values.end());
    std::printf("   %-44s %+10.2f us (from %+.2f to %+.2f)\n", what, difference.median() * 1e6,
                *low * 1e6, *high * 1e6);
  };
  std::printf("   over the raw queue of the same repetition, median:\n");
  paired("nanort chain - raw queue, one buffer", nanort_chain, raw_chain);
  paired("nanort independent - raw queue, own buffers", nanort_independent, raw_independent);
  std::printf("   single calls, us each: clSetKernelArg %.2f, clGetEventInfo (complete) %.2f, "
              "clFlush (idle queue) %.2f, clEnqueueMarkerWithWaitList %.2f\n",
              set_arg_us, event_info_us, flush_us, marker_us);
  std::free(chain);
  std::free(slots);
}

// ---------------------------------------------------------------------------------------------
// One run per device

// The environment as the program started, before any OpenCL call: OpenCL drivers change it
// while they load (OCL_ICD_FILENAMES was seen cut down to PoCL alone), and a run started with
// the changed one would not find every device.
std::vector<std::string> &initial_environment() {
  static std::vector<std::string> saved = [] {
    std::vector<std::string> copy;
    for (char **entry = environ; *entry; ++entry) copy.emplace_back(*entry);
    return copy;
  }();
  return saved;
}

int run_all(const Options &o, const std::vector<Device> &devices, const char *self) {
  std::vector<char *> env;
  for (std::string &entry : initial_environment()) env.push_back(entry.data());
  env.push_back(nullptr);
  int worst = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    std::vector<std::string> args = {self, "--device", std::to_string(i)};
    args.insert(args.end(), o.passthrough.begin(), o.passthrough.end());
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), env.data()) != 0)
      die("cannot start a run for device " + std::to_string(i));
    int status = 0;
    waitpid(pid, &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    worst = std::max(worst, code);
    if (i + 1 < devices.size()) std::printf("\n");
  }
  return worst;
}

}  // namespace

int main(int argc, char **argv) {
  initial_environment();  // before OpenCL is loaded
  const Options o = parse(argc, argv);
  std::string why;
  const std::vector<Device> devices = list_devices(why);
  if (o.list) {
    if (devices.empty()) std::printf("no OpenCL device: %s\n", why.c_str());
    for (std::size_t i = 0; i < devices.size(); ++i)
      std::printf("%zu: %s (%s, %s, %s)\n", i, devices[i].name.c_str(), devices[i].type.c_str(),
                  devices[i].platform_name.c_str(), devices[i].version.c_str());
    return 0;
  }
  if (devices.empty()) {
    std::printf("opencl_bench: SKIP: %s\n", why.c_str());
    return 0;
  }
  if (o.device == "all" && devices.size() > 1) return run_all(o, devices, argv[0]);
  const std::size_t index = o.device == "all" ? 0 : std::strtoul(o.device.c_str(), nullptr, 10);
  if (index >= devices.size()) {
    std::fprintf(stderr, "opencl_bench: device %zu, but %zu OpenCL device(s) found (--list)\n",
                 index, devices.size());
    return 2;
  }
  const Device &device = devices[index];

  // The runtime reads its settings at its first call: choose its device now. No CPU task runs
  // here, so one CPU worker (the waiting thread) unless the caller says otherwise: on a small
  // machine the pool's threads would otherwise compete with a CPU OpenCL device.
  const std::string selector = std::to_string(index);
  const char *before = std::getenv("NANORT_OPENCL_DEVICES");
  if (before && selector != before)
    std::printf("opencl_bench: NANORT_OPENCL_DEVICES=%s replaced by %s\n", before,
                selector.c_str());
  setenv("NANORT_OPENCL_DEVICES", selector.c_str(), 1);
  setenv("NANORT_CPU_WORKERS", "1", 0);
  setenv("NANORT_CUDA_DEVICES", "none", 0);  // the runtime's OpenCL path alone

  std::printf("opencl_bench: device %zu: %s (%s, %s, %s)\n", index, device.name.c_str(),
              device.type.c_str(), device.platform_name.c_str(), device.version.c_str());
  std::printf("   memory %.1f GiB, largest buffer %.1f GiB, host-unified %s\n",
              static_cast<double>(device.global_memory) / (1 << 30),
              static_cast<double>(device.max_allocation) / (1 << 30),
              device.host_unified ? "yes" : "no");

  check_nanort(nanort_init(), "nanort_init");
  const int opened = nanort_device_count(NANORT_DEVICE_OPENCL);
  if (opened != 1) {
    std::printf("opencl_bench: SKIP: the runtime opened %d OpenCL device(s) for "
                "NANORT_OPENCL_DEVICES=%s, expected 1 (its warnings, if any, are above)\n",
                opened, selector.c_str());
    return 0;
  }
  const char *in_flight = std::getenv("NANORT_DEVICE_IN_FLIGHT");
  std::printf("   %s; NANORT_OPENCL_DEVICES=%s NANORT_CPU_WORKERS=%s NANORT_DEVICE_IN_FLIGHT=%s\n",
              nanort_version_string(), selector.c_str(), std::getenv("NANORT_CPU_WORKERS"),
              in_flight ? in_flight : "(default)");
  std::printf(
      "   method: raw = blocking clEnqueueWrite/ReadBuffer of the whole size on an in-order\n"
      "   queue of its own context, from malloc'd memory (pageable) and from a mapped\n"
      "   CL_MEM_ALLOC_HOST_PTR buffer (pinned). nanort write = [a 1-work-item task with in(x)\n"
      "   right after a flushing taskwait + taskwait_noflush] - [the same task again, x now on\n"
      "   the device]; nanort read = [a task with out(x) + taskwait] - [the same task +\n"
      "   taskwait_noflush]. nanort's x is malloc'd (pageable). Part B: tasks submitted one\n"
      "   after another, then taskwait_noflush; us per task = run time / tasks.\n");
  std::fflush(stdout);

  const Clock::time_point start = Clock::now();
  Raw raw(device);
  // Both sides build their programs before anything is timed: one task of each kind, and the
  // raw program above.
  {
    alignas(64) static unsigned char warm[64], warm_out[64];
    submit_probe(warm, sizeof warm, warm_out);
    submit_touch(warm, sizeof warm, 1);
    check_nanort(nanort_taskwait(), "nanort_taskwait");
  }
  std::printf("   set-up (programs built or loaded from caches): %.2f s\n", seconds_since(start));
  if (o.transfer) run_transfers(o, device, raw);
  if (o.overhead) run_overhead(o, raw);
  std::printf("\n   total %.1f s\n", seconds_since(start));
  check_nanort(nanort_shutdown(), "nanort_shutdown");
  return 0;
}
