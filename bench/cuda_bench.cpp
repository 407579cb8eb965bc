// cuda_bench: the runtime's CUDA path against raw Driver API code on the same GPU, side by
// side in one run (issue 5, item 7; README.md, "cuda_bench").
//
//   A. transfers: host -> device and device -> host through the directory, from malloc'd
//      memory, against raw cuMemcpyHtoD / cuMemcpyDtoH from pageable and from pinned memory;
//   B. per-task overhead: N tiny kernels through the runtime (a dependent chain; independent
//      tasks) against a raw loop of cuLaunchKernel on one stream.
//
// The raw side uses the same Driver API entry points as the runtime (loaded at run time), in
// the GPU's primary context (which the runtime uses too) with a stream of its own. Without a
// GPU it prints SKIP and why, and exits 0.
#include <nanort/nanort.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/cuda_api.hpp"

extern "C" const unsigned char cuda_bench_kernels[];

namespace {

using Clock = std::chrono::steady_clock;
using nanort::rt::cuda::Driver;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "cuda_bench: %s\n", what.c_str());
  std::abort();
}
void check(bool ok, const std::string &what) {
  if (!ok) die("wrong result: " + what);
}
void check_nanort(nanort_status status, const char *what) {
  if (status != NANORT_SUCCESS) die(std::string(what) + ": " + nanort_last_error());
}

// ---------------------------------------------------------------------------------------------
// nanort task sites

const nanort_kernel_module kModule = {NANORT_ABI_VERSION, NANORT_MODULE_CUDA_FATBIN,
                                      cuda_bench_kernels, 0, nullptr, "cuda_bench_kernels.cu"};

struct IncArgs {
  int *x;
};
const nanort_kernel_arg kIncArgs[] = {{0, sizeof(void *), NANORT_ARG_BUFFER}};
const nanort_task_impl kIncImpl = {NANORT_DEVICE_CUDA, nullptr, "inc", &kModule, kIncArgs, 1};
const nanort_task_site kIncSite = {NANORT_ABI_VERSION, "inc", __FILE__, __LINE__, &kIncImpl, 1, nullptr};

struct ProbeArgs {
  const unsigned char *x;
  unsigned long long last;
  unsigned char *out;
};
const nanort_kernel_arg kProbeArgs[] = {
    {offsetof(ProbeArgs, x), sizeof(void *), NANORT_ARG_BUFFER},
    {offsetof(ProbeArgs, last), sizeof(unsigned long long), NANORT_ARG_VALUE},
    {offsetof(ProbeArgs, out), sizeof(void *), NANORT_ARG_BUFFER}};
const nanort_task_impl kProbeImpl = {NANORT_DEVICE_CUDA, nullptr, "probe", &kModule, kProbeArgs, 3};
const nanort_task_site kProbeSite = {NANORT_ABI_VERSION, "probe", __FILE__, __LINE__, &kProbeImpl, 1, nullptr};

struct TouchArgs {
  unsigned char *x;
  unsigned long long last;
  unsigned char v;
};
const nanort_kernel_arg kTouchArgs[] = {
    {offsetof(TouchArgs, x), sizeof(void *), NANORT_ARG_BUFFER},
    {offsetof(TouchArgs, last), sizeof(unsigned long long), NANORT_ARG_VALUE},
    {offsetof(TouchArgs, v), sizeof(unsigned char), NANORT_ARG_VALUE}};
const nanort_task_impl kTouchImpl = {NANORT_DEVICE_CUDA, nullptr, "touch", &kModule, kTouchArgs, 3};
const nanort_task_site kTouchSite = {NANORT_ABI_VERSION, "touch", __FILE__, __LINE__, &kTouchImpl, 1, nullptr};

template <class Args>
void submit(const nanort_task_site &site, const Args &args,
            std::initializer_list<std::pair<const void *, std::size_t>> ins,
            std::initializer_list<std::pair<const void *, std::size_t>> outs,
            nanort_access_mode out_mode, std::size_t threads) {
  nanort_task *t = nanort_task_create(&site, sizeof(Args));
  if (!t) die(std::string("nanort_task_create: ") + nanort_last_error());
  *static_cast<Args *>(nanort_task_args(t)) = args;
  for (auto [p, n] : ins) check_nanort(nanort_task_access(t, p, n, NANORT_IN), "access");
  for (auto [p, n] : outs) check_nanort(nanort_task_access(t, p, n, out_mode), "access");
  check_nanort(nanort_task_set_ndrange(t, 1, &threads, &threads), "ndrange");
  check_nanort(nanort_task_submit(t), "submit");
}

// ---------------------------------------------------------------------------------------------
// Raw Driver API side: the GPU's primary context, a stream of its own

struct Raw {
  const Driver &cu;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUmodule module = nullptr;
  CUfunction inc = nullptr;
};

#define RAW(call)                                                                 \
  do {                                                                            \
    const CUresult status_ = raw.cu.call;                                         \
    if (status_ != CUDA_SUCCESS)                                                  \
      die(std::string(#call) + ": " + nanort::rt::cuda::error_text(status_));     \
  } while (0)

// ---------------------------------------------------------------------------------------------
// A. Transfers

void transfers(Raw &raw, const std::vector<std::size_t> &sizes_mib, int reps) {
  std::printf("\nA. Transfer bandwidth, GB/s (1 GB = 1e9 bytes), median of %d repetitions\n", reps);
  std::printf("   %6s | %9s %9s | %9s %9s | %9s %9s | %9s %9s\n", "MiB", "raw page", "", "raw pin",
              "", "nanort", "", "nanort/pin", "");
  std::printf("   %6s | %9s %9s | %9s %9s | %9s %9s | %9s %9s\n", "", "write", "read", "write",
              "read", "write", "read", "write", "read");
  const std::size_t largest = *std::max_element(sizes_mib.begin(), sizes_mib.end()) << 20;
  // Raw buffers, and nanort's x: malloc'd, touched first.
  std::vector<unsigned char> pageable(largest, 1);
  void *pinned = nullptr;
  RAW(cuCtxSetCurrent(raw.context));
  RAW(cuMemHostAlloc(&pinned, largest, 0));
  std::memset(pinned, 1, largest);
  CUdeviceptr device = 0;
  RAW(cuMemAlloc(&device, largest));
  auto *x = static_cast<unsigned char *>(std::malloc(largest));
  std::memset(x, 0, largest);
  unsigned char out[64] = {};
  auto gbps = [](std::size_t bytes, double s) { return s > 0 ? bytes / s * 1e-9 : 0.0; };

  for (std::size_t mib : sizes_mib) {
    const std::size_t bytes = mib << 20;
    std::vector<double> rw_page, rr_page, rw_pin, rr_pin, miss, hit, flush, noflush;
    for (int rep = -1; rep < reps; ++rep) {
      auto timed = [&](std::vector<double> &into, auto &&body) {
        const Clock::time_point start = Clock::now();
        body();
        if (rep >= 0) into.push_back(seconds_since(start));
      };
      RAW(cuCtxSetCurrent(raw.context));
      timed(rw_page, [&] { RAW(cuMemcpyHtoDAsync(device, pageable.data(), bytes, raw.stream));
        RAW(cuStreamSynchronize(raw.stream)); });
      timed(rr_page, [&] { RAW(cuMemcpyDtoHAsync(pageable.data(), device, bytes, raw.stream));
        RAW(cuStreamSynchronize(raw.stream)); });
      timed(rw_pin, [&] { RAW(cuMemcpyHtoDAsync(device, pinned, bytes, raw.stream));
        RAW(cuStreamSynchronize(raw.stream)); });
      timed(rr_pin, [&] { RAW(cuMemcpyDtoHAsync(pinned, device, bytes, raw.stream));
        RAW(cuStreamSynchronize(raw.stream)); });
      // nanort write: x valid on the host alone (the last taskwait flushed), new end values.
      const auto first = static_cast<unsigned char>(3 + rep + 1), last = static_cast<unsigned char>(100 + rep + 1);
      x[0] = first;
      x[bytes - 1] = last;
      const ProbeArgs probe{x, bytes - 1, out};
      timed(miss, [&] {
        submit(kProbeSite, probe, {{x, bytes}}, {{out, 64}}, NANORT_OUT, 1);
        check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
      });
      timed(hit, [&] {
        submit(kProbeSite, probe, {{x, bytes}}, {{out, 64}}, NANORT_OUT, 1);
        check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
      });
      check_nanort(nanort_taskwait(), "taskwait");
      check(out[0] == first && out[1] == last, "the probe did not see the host's new bytes");
      // nanort read: a task writes x on the device; with and without the flush.
      const TouchArgs touch{x, bytes - 1, static_cast<unsigned char>(7 + rep + 1)};
      timed(noflush, [&] {
        submit(kTouchSite, touch, {}, {{x, bytes}}, NANORT_OUT, 1);
        check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
      });
      timed(flush, [&] {
        submit(kTouchSite, touch, {}, {{x, bytes}}, NANORT_OUT, 1);
        check_nanort(nanort_taskwait(), "taskwait");
      });
      check(x[0] == touch.v && x[bytes - 1] == touch.v, "the flush did not bring x back");
    }
    const double w = gbps(bytes, median(miss) - median(hit));
    const double r = gbps(bytes, median(flush) - median(noflush));
    const double pw = gbps(bytes, median(rw_pin)), pr = gbps(bytes, median(rr_pin));
    std::printf("   %6zu | %9.2f %9.2f | %9.2f %9.2f | %9.2f %9.2f | %9.2f %9.2f\n", mib,
                gbps(bytes, median(rw_page)), gbps(bytes, median(rr_page)), pw, pr, w, r,
                pw > 0 ? w / pw : 0, pr > 0 ? r / pr : 0);
  }
  std::printf("   nanort write = [probe task reading x after a flushing taskwait] - [the same task\n"
              "   again, x on the GPU]; read = [task writing x + taskwait] - [the same + noflush];\n"
              "   nanort's x is malloc'd (pageable), staged through pinned buffers.\n");
  std::free(x);
  RAW(cuCtxSetCurrent(raw.context));
  RAW(cuMemFree(device));
  RAW(cuMemFreeHost(pinned));
}

// ---------------------------------------------------------------------------------------------
// B. Per-task overhead

void overhead(Raw &raw, int tasks, int reps) {
  constexpr int kWidth = 32;  // threads of each kernel; 'inc' adds 1 to x[0..31]
  std::printf("\nB. Per-task overhead: %d kernels of %d threads per run, us per kernel, median of "
              "%d runs\n", tasks, kWidth, reps);
  RAW(cuCtxSetCurrent(raw.context));
  CUdeviceptr chain = 0, slots = 0;
  RAW(cuMemAlloc(&chain, kWidth * sizeof(int)));
  RAW(cuMemAlloc(&slots, static_cast<std::size_t>(tasks) * 256));
  {
    const std::vector<unsigned char> zeros(static_cast<std::size_t>(tasks) * 256, 0);
    RAW(cuMemcpyHtoDAsync(chain, zeros.data(), kWidth * sizeof(int), raw.stream));
    RAW(cuMemcpyHtoDAsync(slots, zeros.data(), zeros.size(), raw.stream));
    RAW(cuStreamSynchronize(raw.stream));
  }
  std::vector<int> x(kWidth, 0);
  std::vector<int> own(static_cast<std::size_t>(tasks) * 64, 0);  // 256-byte slots
  std::vector<double> raw_chain, raw_own, nanort_chain, nanort_own;
  for (int rep = -1; rep < reps; ++rep) {
    auto timed = [&](std::vector<double> &into, auto &&body) {
      const Clock::time_point start = Clock::now();
      body();
      if (rep >= 0) into.push_back(seconds_since(start) / tasks * 1e6);
    };
    RAW(cuCtxSetCurrent(raw.context));
    timed(raw_chain, [&] {
      for (int i = 0; i < tasks; ++i) {
        void *params[] = {&chain};
        RAW(cuLaunchKernel(raw.inc, 1, 1, 1, kWidth, 1, 1, 0, raw.stream, params, nullptr));
      }
      RAW(cuStreamSynchronize(raw.stream));
    });
    timed(raw_own, [&] {
      for (int i = 0; i < tasks; ++i) {
        CUdeviceptr slot = slots + static_cast<CUdeviceptr>(i) * 256;
        void *params[] = {&slot};
        RAW(cuLaunchKernel(raw.inc, 1, 1, 1, kWidth, 1, 1, 0, raw.stream, params, nullptr));
      }
      RAW(cuStreamSynchronize(raw.stream));
    });
    timed(nanort_chain, [&] {
      for (int i = 0; i < tasks; ++i)
        submit(kIncSite, IncArgs{x.data()}, {}, {{x.data(), kWidth * sizeof(int)}}, NANORT_INOUT,
               kWidth);
      check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
    });
    timed(nanort_own, [&] {
      for (int i = 0; i < tasks; ++i) {
        int *slot = own.data() + static_cast<std::size_t>(i) * 64;
        submit(kIncSite, IncArgs{slot}, {}, {{slot, kWidth * sizeof(int)}}, NANORT_INOUT, kWidth);
      }
      check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
    });
  }
  check_nanort(nanort_taskwait(), "taskwait");
  const int runs = reps + 1;
  for (int v : x) check(v == runs * tasks, "nanort chain lost an increment");
  for (int i = 0; i < tasks; ++i) check(own[static_cast<std::size_t>(i) * 64] == runs, "nanort independent");
  std::vector<int> back(kWidth);
  RAW(cuCtxSetCurrent(raw.context));
  RAW(cuMemcpyDtoHAsync(back.data(), chain, kWidth * sizeof(int), raw.stream));
  RAW(cuStreamSynchronize(raw.stream));
  for (int v : back) check(v == runs * tasks, "raw chain lost an increment");
  const double rc = median(raw_chain), ro = median(raw_own), nc = median(nanort_chain),
               no = median(nanort_own);
  std::printf("   %-44s %8.2f\n", "raw: cuLaunchKernel loop, one stream, one buffer", rc);
  std::printf("   %-44s %8.2f\n", "raw: the same, a buffer slot each", ro);
  std::printf("   %-44s %8.2f   (+%.2f us, x%.2f)\n", "nanort chain (inout one buffer)", nc, nc - rc,
              rc > 0 ? nc / rc : 0);
  std::printf("   %-44s %8.2f   (+%.2f us, x%.2f)\n", "nanort independent (a buffer each)", no,
              no - ro, ro > 0 ? no / ro : 0);
  RAW(cuMemFree(chain));
  RAW(cuMemFree(slots));
}

std::vector<std::size_t> parse_sizes(const char *text) {
  std::vector<std::size_t> sizes;
  for (const char *p = text; *p;) {
    sizes.push_back(std::strtoul(p, const_cast<char **>(&p), 10));
    if (*p == ',') ++p;
  }
  return sizes;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::size_t> sizes = {1, 16, 64, 256};
  int reps = 10, tasks = 10000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      sizes = {1, 4};
      reps = 2;
      tasks = 200;
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes = parse_sizes(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--tasks" && i + 1 < argc) {
      tasks = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: cuda_bench [--quick] [--sizes 1,16,64,256] [--reps R] [--tasks N]\n");
      return 2;
    }
  }
  std::string why;
  const Driver *driver = nanort::rt::cuda::driver(&why);
  if (!driver) {
    std::printf("cuda_bench: SKIP: %s\n", why.c_str());
    return 0;
  }
  // The runtime on GPU 0 alone, one CPU worker (no CPU task runs here).
  setenv("NANORT_CUDA_DEVICES", "0", 0);
  setenv("NANORT_OPENCL_DEVICES", "none", 0);
  setenv("NANORT_CPU_WORKERS", "1", 0);
  check_nanort(nanort_init(), "nanort_init");
  if (nanort_device_count(NANORT_DEVICE_CUDA) == 0) {
    std::printf("cuda_bench: SKIP: the runtime has no CUDA device (%s)\n",
                why.empty() ? "NANORT_CUDA_DEVICES" : why.c_str());
    return 0;
  }
  Raw raw{*driver};
  CUdevice device = 0;
  RAW(cuDeviceGet(&device, 0));
  RAW(cuDevicePrimaryCtxRetain(&raw.context, device));
  RAW(cuCtxSetCurrent(raw.context));
  RAW(cuStreamCreate(&raw.stream, CU_STREAM_NON_BLOCKING));
  RAW(cuModuleLoadData(&raw.module, cuda_bench_kernels));
  RAW(cuModuleGetFunction(&raw.inc, raw.module, "inc"));
  char name[256] = {};
  RAW(cuDeviceGetName(name, sizeof name - 1, device));
  std::printf("cuda_bench: GPU 0: %s, driver %d; nanort %s, NANORT_CPU_WORKERS=%s\n", name,
              driver->version, nanort_version_string(), std::getenv("NANORT_CPU_WORKERS"));
  std::printf("   raw: the Driver API in the GPU's primary context, one non-blocking stream\n");
  const Clock::time_point start = Clock::now();
  transfers(raw, sizes, reps);
  overhead(raw, tasks, reps);
  std::printf("\n   total %.1f s\n", seconds_since(start));
  RAW(cuModuleUnload(raw.module));
  RAW(cuStreamDestroy(raw.stream));
  raw.cu.cuDevicePrimaryCtxRelease(device);
  return 0;
}
