// cuda_bench: the runtime's CUDA path against raw Driver API code on the same GPU, side by
// side in one run (issue 5, item 7; README.md, "cuda_bench").
//
//   A. transfers: host -> device and device -> host through the directory, from plain malloc'd
//      memory (first repetition and steady state) and from memory the program registered,
//      against raw cuMemcpyHtoD / cuMemcpyDtoH from pageable and from pinned memory; one copy
//      at a time, then many blocks' copies in flight (plain memory against pinned);
//   B. per-task overhead: N tiny kernels through the runtime (a dependent chain; independent
//      tasks), submitted and replayed (taskiter), against a raw loop of cuLaunchKernel on one
//      stream and the same loop captured once as a CUDA Graph;
//   C. multi-GPU: the same independent compute-bound tasks (with their data moving to the GPUs
//      and back) on GPU 0 alone and on every GPU, as the runtime spreads them.
//
// A and B place their tasks on GPU 0 (nanort_task_set_device), where the raw side runs.
//
// The raw side uses the same Driver API entry points as the runtime (loaded at run time), in
// the GPU's primary context (which the runtime uses too) with a stream of its own. Without a
// GPU it prints SKIP and why, and exits 0.
#include <nanort/nanort.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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
// Runs 'body' and returns its time; kept in 'into' unless 'rep' is the warm-up (negative).
template <class Body>
double time_rep(int rep, std::vector<double> &into, Body &&body) {
  const Clock::time_point start = Clock::now();
  body();
  const double s = seconds_since(start);
  if (rep >= 0) into.push_back(s);
  return s;
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

struct CrunchArgs {
  float *x;
  int n, rounds;
};
const nanort_kernel_arg kCrunchArgs[] = {
    {offsetof(CrunchArgs, x), sizeof(void *), NANORT_ARG_BUFFER},
    {offsetof(CrunchArgs, n), sizeof(int), NANORT_ARG_VALUE},
    {offsetof(CrunchArgs, rounds), sizeof(int), NANORT_ARG_VALUE}};
const nanort_task_impl kCrunchImpl = {NANORT_DEVICE_CUDA, nullptr, "crunch", &kModule, kCrunchArgs, 3};
const nanort_task_site kCrunchSite = {NANORT_ABI_VERSION, "crunch", __FILE__, __LINE__, &kCrunchImpl, 1, nullptr};

// 'device' >= 0: placed on that GPU; else wherever the runtime runs it. 'local' 0: one block of
// 'threads'.
template <class Args>
void submit(const nanort_task_site &site, const Args &args,
            std::initializer_list<std::pair<const void *, std::size_t>> ins,
            std::initializer_list<std::pair<const void *, std::size_t>> outs,
            nanort_access_mode out_mode, std::size_t threads, int device = 0,
            std::size_t local = 0) {
  nanort_task *t = nanort_task_create(&site, sizeof(Args));
  if (!t) die(std::string("nanort_task_create: ") + nanort_last_error());
  *static_cast<Args *>(nanort_task_args(t)) = args;
  for (auto [p, n] : ins) check_nanort(nanort_task_access(t, p, n, NANORT_IN), "access");
  for (auto [p, n] : outs) check_nanort(nanort_task_access(t, p, n, out_mode), "access");
  if (local == 0) local = threads;
  check_nanort(nanort_task_set_ndrange(t, 1, &threads, &local), "ndrange");
  if (device >= 0) nanort_task_set_device(t, NANORT_DEVICE_CUDA, device);
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
  std::printf("   %5s | %7s %7s | %7s %7s | %7s %7s | %7s %7s | %7s %7s | %7s %7s | %7s %7s\n",
              "MiB", "raw", "page", "raw", "pin", "plain", "first", "plain", "", "regist", "ered",
              "plain", "/pin", "regist", "/pin");
  std::printf("   %5s | %7s %7s | %7s %7s | %7s %7s | %7s %7s | %7s %7s | %7s %7s | %7s %7s\n", "",
              "write", "read", "write", "read", "write", "read", "write", "read", "write", "read",
              "write", "read", "write", "read");
  const std::size_t largest = *std::max_element(sizes_mib.begin(), sizes_mib.end()) << 20;
  // Raw buffers; nanort's 'registered' is malloc'd and page-locked once through
  // nanort_host_register, its 'plain' data a fresh malloc'd array per size, as a program has.
  std::vector<unsigned char> pageable(largest, 1);
  void *pinned = nullptr;
  RAW(cuCtxSetCurrent(raw.context));
  RAW(cuMemHostAlloc(&pinned, largest, 0));
  std::memset(pinned, 1, largest);
  CUdeviceptr device = 0;
  RAW(cuMemAlloc(&device, largest));
  auto *registered = static_cast<unsigned char *>(std::malloc(largest));
  std::memset(registered, 0, largest);
  const Clock::time_point lock_start = Clock::now();
  check_nanort(nanort_host_register(registered, largest), "nanort_host_register");
  const double lock_seconds = seconds_since(lock_start);
  unsigned char out[64] = {};
  auto gbps = [](std::size_t bytes, double s) { return s > 0 ? bytes / s * 1e-9 : 0.0; };

  for (std::size_t mib : sizes_mib) {
    const std::size_t bytes = mib << 20;
    auto *plain = static_cast<unsigned char *>(std::malloc(bytes));
    if (!plain) die("out of host memory");
    std::memset(plain, 0, bytes);
    std::vector<double> rw_page, rr_page, rw_pin, rr_pin;
    struct Through {
      unsigned char *x;
      std::vector<double> miss, hit, flush, noflush;
      double first_write = 0, first_read = 0;  // the warm-up's
    } by_plain{plain, {}, {}, {}, {}}, by_registered{registered, {}, {}, {}, {}};
    for (int rep = -1; rep < reps; ++rep) {
      auto timed = [rep](std::vector<double> &into, auto &&body) {
        return time_rep(rep, into, body);
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
      for (Through *through : {&by_plain, &by_registered}) {
        unsigned char *const data = through->x;
        // nanort write: data valid on the host alone (the last taskwait flushed), new ends.
        const auto first = static_cast<unsigned char>(3 + rep + 1),
                   last = static_cast<unsigned char>(100 + rep + 1);
        data[0] = first;
        data[bytes - 1] = last;
        const ProbeArgs probe{data, bytes - 1, out};
        const double miss = timed(through->miss, [&] {
          submit(kProbeSite, probe, {{data, bytes}}, {{out, 64}}, NANORT_OUT, 1);
          check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
        });
        const double hit = timed(through->hit, [&] {
          submit(kProbeSite, probe, {{data, bytes}}, {{out, 64}}, NANORT_OUT, 1);
          check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
        });
        check_nanort(nanort_taskwait(), "taskwait");
        check(out[0] == first && out[1] == last, "the probe did not see the host's new bytes");
        // nanort read: a task writes data on the device, then the flushing taskwait; less the
        // same without the flush. The flushed run comes first: a result no task waits for goes
        // home at once when the memory is page-locked (eager write-back), and the timed run
        // after a noflush run would wait for that copy too (the next kernel overwrites its
        // source), counting two copies. The untimed taskwait after noflush waits for it.
        const TouchArgs touch{data, bytes - 1, static_cast<unsigned char>(7 + rep + 1)};
        const double flush = timed(through->flush, [&] {
          submit(kTouchSite, touch, {}, {{data, bytes}}, NANORT_OUT, 1);
          check_nanort(nanort_taskwait(), "taskwait");
        });
        check(data[0] == touch.v && data[bytes - 1] == touch.v, "the flush did not bring data back");
        const double noflush = timed(through->noflush, [&] {
          submit(kTouchSite, touch, {}, {{data, bytes}}, NANORT_OUT, 1);
          check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
        });
        check_nanort(nanort_taskwait(), "taskwait");
        if (rep < 0) {
          through->first_write = gbps(bytes, miss - hit);
          through->first_read = gbps(bytes, flush - noflush);
        }
      }
    }
    auto write_rate = [&](const Through &t) { return gbps(bytes, median(t.miss) - median(t.hit)); };
    auto read_rate = [&](const Through &t) { return gbps(bytes, median(t.flush) - median(t.noflush)); };
    const double pw = gbps(bytes, median(rw_pin)), pr = gbps(bytes, median(rr_pin));
    const double aw = write_rate(by_plain), ar = read_rate(by_plain);
    const double lw = write_rate(by_registered), lr = read_rate(by_registered);
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    std::printf("   %5zu | %7.2f %7.2f | %7.2f %7.2f | %7.2f %7.2f | %7.2f %7.2f | %7.2f %7.2f | %7.2f "
                "%7.2f | %7.2f %7.2f\n",
                mib, gbps(bytes, median(rw_page)), gbps(bytes, median(rr_page)), pw, pr,
                by_plain.first_write, by_plain.first_read, aw, ar, lw, lr, ratio(aw, pw),
                ratio(ar, pr), ratio(lw, pw), ratio(lr, pr));
    std::free(plain);  // (the runtime unlocks what it locked of it first)
  }
  const char *mode = std::getenv("NANORT_HOST_REGISTER");
  std::printf("   nanort write = [probe task reading x after a flushing taskwait] - [the same task\n"
              "   again, x on the GPU]; read = [task writing x + taskwait] - [the same + noflush].\n"
              "   plain: x is a fresh malloc'd array per size; 'first' is its first repetition (the\n"
              "   warm-up: staged copies and the device allocation), the next columns the median\n"
              "   after it, with NANORT_HOST_REGISTER=%s%s.\n"
              "   registered: x is malloc'd and page-locked once by nanort_host_register (%.1f ms\n"
              "   for %zu MiB, %.2f GB/s), then copied directly.\n",
              mode ? mode : "auto",
              mode && std::strcmp(mode, "off") == 0 ? " (staged throughout)"
                                                     : " (locked by the runtime once it moved twice)",
              lock_seconds * 1e3, largest >> 20, gbps(largest, lock_seconds));
  check_nanort(nanort_host_unregister(registered), "nanort_host_unregister");
  std::free(registered);
  RAW(cuCtxSetCurrent(raw.context));
  RAW(cuMemFree(device));
  RAW(cuMemFreeHost(pinned));
}

// What a program that moves many blocks gets: copies of 'mib' MiB, the largest size's bytes in
// all, in flight at once. nanort: a task per block of a fresh malloc'd array (probe: reads its
// block; touch: writes it, and the flushing taskwait brings every block home); raw: as many
// cuMemcpy*Async of pinned blocks on one stream. Both times from the first call to the last
// copy seen done, so the task around each copy is in nanort's, but a single copy's completion
// seen late (which the difference of two task times in the table above counts whole) is spread
// over every block.
void streamed_transfers(Raw &raw, const std::vector<std::size_t> &sizes_mib, int reps) {
  const std::size_t total = *std::max_element(sizes_mib.begin(), sizes_mib.end()) << 20;
  std::printf("\n   Copies in flight: up to %zu MiB in blocks of each size, GB/s, median of %d\n"
              "   %5s %6s | %7s %7s | %7s %7s | %7s %7s | %7s %7s\n"
              "   %5s %6s | %7s %7s | %7s %7s | %7s %7s | %7s %7s\n",
              total >> 20, reps, "MiB", "blocks", "raw", "pin", "plain", "first", "plain", "",
              "plain", "/pin", "", "", "write", "read", "write", "read", "write", "read", "write",
              "read");
  void *pinned = nullptr;
  CUdeviceptr device = 0;
  RAW(cuCtxSetCurrent(raw.context));
  RAW(cuMemHostAlloc(&pinned, total, 0));
  std::memset(pinned, 1, total);
  RAW(cuMemAlloc(&device, total));
  for (std::size_t mib : sizes_mib) {
    const std::size_t bytes = mib << 20, blocks = bytes ? total / bytes : 0;
    if (blocks < 2) continue;  // one copy: the table above
    const std::size_t moved = blocks * bytes;  // (the largest size need not be a multiple)
    auto gbps = [moved](double s) { return s > 0 ? moved / s * 1e-9 : 0.0; };
    auto *plain = static_cast<unsigned char *>(std::malloc(total));
    if (!plain) die("out of host memory");
    std::memset(plain, 0, total);
    std::vector<unsigned char> outs(blocks * 64, 0);
    std::vector<double> raw_write, raw_read, plain_write, plain_read;
    double first_write = 0, first_read = 0;
    for (int rep = -1; rep < reps; ++rep) {
      auto timed = [rep](std::vector<double> &into, auto &&body) {
        return time_rep(rep, into, body);
      };
      RAW(cuCtxSetCurrent(raw.context));
      timed(raw_write, [&] {
        for (std::size_t b = 0; b < blocks; ++b)
          RAW(cuMemcpyHtoDAsync(device + b * bytes, static_cast<char *>(pinned) + b * bytes, bytes,
                                raw.stream));
        RAW(cuStreamSynchronize(raw.stream));
      });
      timed(raw_read, [&] {
        for (std::size_t b = 0; b < blocks; ++b)
          RAW(cuMemcpyDtoHAsync(static_cast<char *>(pinned) + b * bytes, device + b * bytes, bytes,
                                raw.stream));
        RAW(cuStreamSynchronize(raw.stream));
      });
      // Every block valid on the host alone (the last taskwait flushed), with new ends.
      const auto mark = static_cast<unsigned char>(11 + rep + 1);
      for (std::size_t b = 0; b < blocks; ++b) {
        plain[b * bytes] = mark;
        plain[b * bytes + bytes - 1] = static_cast<unsigned char>(mark + 1);
      }
      const double write = timed(plain_write, [&] {
        for (std::size_t b = 0; b < blocks; ++b) {
          unsigned char *x = plain + b * bytes, *out = outs.data() + b * 64;
          submit(kProbeSite, ProbeArgs{x, bytes - 1, out}, {{x, bytes}}, {{out, 64}}, NANORT_OUT,
                 1);
        }
        check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
      });
      check_nanort(nanort_taskwait(), "taskwait");
      for (std::size_t b = 0; b < blocks; ++b)
        check(outs[b * 64] == mark && outs[b * 64 + 1] == static_cast<unsigned char>(mark + 1),
              "a probe of the blocks in flight did not see the host's new bytes");
      const auto v = static_cast<unsigned char>(mark + 50);
      const double read = timed(plain_read, [&] {
        for (std::size_t b = 0; b < blocks; ++b) {
          unsigned char *x = plain + b * bytes;
          submit(kTouchSite, TouchArgs{x, bytes - 1, v}, {}, {{x, bytes}}, NANORT_OUT, 1);
        }
        check_nanort(nanort_taskwait(), "taskwait");
      });
      for (std::size_t b = 0; b < blocks; ++b)
        check(plain[b * bytes] == v && plain[b * bytes + bytes - 1] == v,
              "the flush of the blocks in flight did not bring them home");
      if (rep < 0) first_write = gbps(write), first_read = gbps(read);
    }
    const double pw = gbps(median(raw_write)), pr = gbps(median(raw_read));
    const double aw = gbps(median(plain_write)), ar = gbps(median(plain_read));
    std::printf("   %5zu %6zu | %7.2f %7.2f | %7.2f %7.2f | %7.2f %7.2f | %7.2f %7.2f\n", mib,
                blocks, pw, pr, first_write, first_read, aw, ar, pw > 0 ? aw / pw : 0.0,
                pr > 0 ? ar / pr : 0.0);
    std::free(plain);
  }
  std::printf("   nanort: a task per block (write: reads it, then taskwait_noflush; read:\n"
              "   writes it, then the flushing taskwait), from the first submit to the\n"
              "   taskwait's return; raw: the same copies of pinned blocks on one stream, then\n"
              "   cuStreamSynchronize.\n");
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
  std::vector<double> raw_chain, raw_own, raw_pattern, nanort_chain, nanort_own, submit_chain,
      submit_own, submit_raw, raw_graph, replay_chain, replay_own, update_chain;
  std::vector<unsigned char> touched(kWidth, 0);  // the updated chain's buffer
  CUevent events[4] = {};
  for (CUevent &event : events) RAW(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  // The raw chain as a CUDA Graph, made by hand: captured once (this thread's launches only:
  // the runtime's threads use the driver meanwhile), instantiated once, launched per run.
  CUgraph graph = nullptr;
  CUgraphExec graph_exec = nullptr;
  RAW(cuStreamBeginCapture(raw.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  for (int i = 0; i < tasks; ++i) {
    void *params[] = {&chain};
    RAW(cuLaunchKernel(raw.inc, 1, 1, 1, kWidth, 1, 1, 0, raw.stream, params, nullptr));
  }
  RAW(cuStreamEndCapture(raw.stream, &graph));
  RAW(cuGraphInstantiateWithFlags(&graph_exec, graph, 0));
  // Replayed: one taskiter records the N tasks and replays them kWarm times (T1: the
  // recording, a first replay task by task, then the graph's capture where the runtime makes
  // one), another does the same and kReplays replays more (T2); a replay in the steady state
  // costs (T2 - T1) / kReplays.
  constexpr int kWarm = 2, kReplays = 6;
  long chain_runs = 0, own_runs = 0;  // runs of each nanort pattern, for the checks
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
    // The Driver API calls the runtime makes per kernel: the context set, the launch, an event
    // after every 8th kernel, a query of the oldest event in flight after each launch.
    timed(raw_pattern, [&] {
      int recorded = 0, oldest = 0;
      for (int i = 0; i < tasks; ++i) {
        RAW(cuCtxSetCurrent(raw.context));
        CUdeviceptr slot = slots + static_cast<CUdeviceptr>(i) * 256;
        void *params[] = {&slot};
        RAW(cuLaunchKernel(raw.inc, 1, 1, 1, kWidth, 1, 1, 0, raw.stream, params, nullptr));
        if (i % 8 == 7) {
          if (recorded - oldest == 4) RAW(cuEventSynchronize(events[oldest++ % 4]));
          RAW(cuEventRecord(events[recorded++ % 4], raw.stream));
        }
        if (recorded > oldest && raw.cu.cuEventQuery(events[oldest % 4]) == CUDA_SUCCESS) ++oldest;
      }
      RAW(cuStreamSynchronize(raw.stream));
    });
    timed(raw_graph, [&] {
      RAW(cuGraphLaunch(graph_exec, raw.stream));
      RAW(cuStreamSynchronize(raw.stream));
    });
    timed(raw_own, [&] {
      const Clock::time_point start = Clock::now();
      for (int i = 0; i < tasks; ++i) {
        CUdeviceptr slot = slots + static_cast<CUdeviceptr>(i) * 256;
        void *params[] = {&slot};
        RAW(cuLaunchKernel(raw.inc, 1, 1, 1, kWidth, 1, 1, 0, raw.stream, params, nullptr));
      }
      if (rep >= 0) submit_raw.push_back(seconds_since(start) / tasks * 1e6);
      RAW(cuStreamSynchronize(raw.stream));
    });
    // (Also timed: the submitting loop alone, which runs while the GPU works.)
    timed(nanort_chain, [&] {
      const Clock::time_point start = Clock::now();
      for (int i = 0; i < tasks; ++i)
        submit(kIncSite, IncArgs{x.data()}, {}, {{x.data(), kWidth * sizeof(int)}}, NANORT_INOUT,
               kWidth);
      if (rep >= 0) submit_chain.push_back(seconds_since(start) / tasks * 1e6);
      check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
    });
    timed(nanort_own, [&] {
      const Clock::time_point start = Clock::now();
      for (int i = 0; i < tasks; ++i) {
        int *slot = own.data() + static_cast<std::size_t>(i) * 64;
        submit(kIncSite, IncArgs{slot}, {}, {{slot, kWidth * sizeof(int)}}, NANORT_INOUT, kWidth);
      }
      if (rep >= 0) submit_own.push_back(seconds_since(start) / tasks * 1e6);
      check_nanort(nanort_taskwait_noflush(), "taskwait_noflush");
    });
    ++chain_runs;
    ++own_runs;
    const auto replayed = [&](std::vector<double> &into, long &runs_of, auto &&one_iteration) {
      double once = 0;
      for (int replays : {kWarm, kWarm + kReplays}) {
        const Clock::time_point start = Clock::now();
        nanort_taskiter *iter = nullptr;
        check_nanort(nanort_taskiter_begin(&iter), "taskiter_begin");
        one_iteration();
        check_nanort(nanort_taskiter_end(iter, static_cast<std::uint64_t>(replays)), "taskiter_end");
        runs_of += 1 + replays;
        const double seconds = seconds_since(start);
        if (replays == kWarm) once = seconds;
        else if (rep >= 0) into.push_back((seconds - once) / kReplays / tasks * 1e6);
      }
    };
    replayed(replay_chain, chain_runs, [&] {
      for (int i = 0; i < tasks; ++i)
        submit(kIncSite, IncArgs{x.data()}, {}, {{x.data(), kWidth * sizeof(int)}}, NANORT_INOUT,
               kWidth);
    });
    replayed(replay_own, own_runs, [&] {
      for (int i = 0; i < tasks; ++i) {
        int *slot = own.data() + static_cast<std::size_t>(i) * 64;
        submit(kIncSite, IncArgs{slot}, {}, {{slot, kWidth * sizeof(int)}}, NANORT_INOUT, kWidth);
      }
    });
    // Updated (taskiter update): the chain's iterations each write their own value, so every
    // iteration's body runs and updates the recorded tasks' arguments; iterations launched
    // while more follow (nanort_taskiter_launch), as the plugin's counted loops do.
    // Timed from the second updated iteration's start to the last one's end (the first ends
    // the recording and captures the graph: it is waited for, not launched).
    {
      constexpr int iterations = 2 + kReplays;
      nanort_taskiter *iter = nullptr;
      check_nanort(nanort_taskiter_begin(&iter), "taskiter_begin");
      Clock::time_point start{};
      for (int it = 0; it <= iterations; ++it) {
        if (it == 2) start = Clock::now();
        if (it > 0) check_nanort(nanort_taskiter_update(iter), "taskiter_update");
        const auto v = static_cast<unsigned char>(it + 1);
        for (int i = 0; i < tasks; ++i)
          submit(kTouchSite, TouchArgs{touched.data(), kWidth - 1, v}, {},
                 {{touched.data(), kWidth}}, NANORT_INOUT, 1);
        if (it > 0)
          check_nanort(it > 1 && it < iterations ? nanort_taskiter_launch(iter, 1)
                                                 : nanort_taskiter_replay(iter, 1),
                       "taskiter_launch");
      }
      if (rep >= 0) update_chain.push_back(seconds_since(start) / (iterations - 1) / tasks * 1e6);
      check_nanort(nanort_taskiter_end(iter, 0), "taskiter_end");
      // (Its buffer alone comes home: the other patterns' data stays on the GPU, as before.)
      const void *address = touched.data();
      const std::size_t bytes = touched.size();
      check_nanort(nanort_taskwait_on(&address, &bytes, 1), "taskwait_on");
      check(touched[0] == iterations + 1 && touched[kWidth - 1] == iterations + 1,
            "the updated chain's last value");
    }
  }
  check_nanort(nanort_taskwait(), "taskwait");
  const int runs = reps + 1;
  for (int v : x) check(v == chain_runs * tasks, "nanort chain lost an increment");
  for (int i = 0; i < tasks; ++i)
    check(own[static_cast<std::size_t>(i) * 64] == own_runs, "nanort independent");
  std::vector<int> back(kWidth);
  RAW(cuCtxSetCurrent(raw.context));
  RAW(cuMemcpyDtoHAsync(back.data(), chain, kWidth * sizeof(int), raw.stream));
  RAW(cuStreamSynchronize(raw.stream));
  for (int v : back) check(v == 2 * runs * tasks, "raw chain (and its graph) lost an increment");
  const double rc = median(raw_chain), ro = median(raw_own), nc = median(nanort_chain),
               no = median(nanort_own);
  std::printf("   %-44s %8.2f\n", "raw: cuLaunchKernel loop, one stream, one buffer", rc);
  std::printf("   %-44s %8.2f   (the launching loop: %.2f)\n", "raw: the same, a buffer slot each", ro,
              median(submit_raw));
  std::printf("   %-44s %8.2f\n", "raw: the same with the runtime's driver calls", median(raw_pattern));
  std::printf("   %-44s %8.2f   (+%.2f us, x%.2f)\n", "nanort chain (inout one buffer)", nc, nc - rc,
              rc > 0 ? nc / rc : 0);
  std::printf("   %-44s %8.2f   (+%.2f us, x%.2f)\n", "nanort independent (a buffer each)", no,
              no - ro, ro > 0 ? no / ro : 0);
  std::printf("   %-44s %8.2f / %.2f\n", "  of which the submitting loop: chain / indep.",
              median(submit_chain), median(submit_own));
  const double rg = median(raw_graph), pc = median(replay_chain), po = median(replay_own);
  std::printf("   %-44s %8.2f\n", "raw: the chain as a CUDA Graph, per kernel", rg);
  std::printf("   %-44s %8.2f   (+%.2f us against the raw loop)\n",
              "nanort chain replayed (taskiter)", pc, pc - rc);
  std::printf("   %-44s %8.2f   (+%.2f us against the raw loop)\n",
              "nanort independent replayed (taskiter)", po, po - ro);
  const double pu = median(update_chain);
  std::printf("   %-44s %8.2f   (+%.2f us against the raw loop)\n",
              "nanort chain updated (taskiter update)", pu, pu - rc);
  RAW(cuGraphExecDestroy(graph_exec));
  RAW(cuGraphDestroy(graph));
  for (CUevent event : events) RAW(cuEventDestroy(event));
  RAW(cuMemFree(chain));
  RAW(cuMemFree(slots));
}

// ---------------------------------------------------------------------------------------------
// C. Multi-GPU

void multi_gpu(int tasks, int reps) {
  const int gpus = nanort_device_count(NANORT_DEVICE_CUDA);
  constexpr int n = 1 << 20, rounds = 20000;  // 4 MiB per task; about a millisecond of work
  std::printf("\nC. Multi-GPU: %d independent tasks, each %d MiB in and out (inout) and %d "
              "multiply-adds per element,\n   taskwait (results home) included; ms, median of %d "
              "runs\n", tasks, static_cast<int>(n * sizeof(float) >> 20), rounds, reps);
  std::vector<std::vector<float>> blocks(static_cast<std::size_t>(tasks), std::vector<float>(n, 1.0f));
  auto run = [&](int device) {
    std::vector<double> times;
    for (int rep = -1; rep < reps; ++rep) {
      const Clock::time_point start = Clock::now();
      for (auto &block : blocks)
        submit(kCrunchSite, CrunchArgs{block.data(), n, rounds}, {},
               {{block.data(), n * sizeof(float)}}, NANORT_INOUT, n, device, 256);
      check_nanort(nanort_taskwait(), "taskwait");
      if (rep >= 0) times.push_back(seconds_since(start) * 1e3);
    }
    return median(times);
  };
  // The blocks as malloc'd (copies staged), then page-locked (copies direct, asynchronous).
  int runs = 0;
  for (const bool locked : {false, true}) {
    if (locked)
      for (auto &block : blocks)
        check_nanort(nanort_host_register(block.data(), n * sizeof(float)), "nanort_host_register");
    const char *how = locked ? "page-locked" : "malloc'd";
    const double one = run(0);
    ++runs;
    std::printf("   %-12s %-31s %8.2f\n", how, "GPU 0 alone (tasks placed there)", one);
    if (gpus < 2) {
      std::printf("   %-12s every GPU: SKIP: the runtime has %d GPU\n", how, gpus);
      continue;
    }
    const double all = run(-1);
    ++runs;
    std::printf("   %-12s %-31s %8.2f   (x%.2f)\n", how,
                ("all " + std::to_string(gpus) + " GPUs (runtime's choice)").c_str(), all,
                all > 0 ? one / all : 0);
  }
  for (auto &block : blocks)
    check_nanort(nanort_host_unregister(block.data()), "nanort_host_unregister");
  // Every run applied 'rounds' steps to every element: check one element against the host.
  float expected = 1.0f;
  runs *= reps + 1;
  for (int r = 0; r < runs * rounds; ++r) expected = expected * 0.999f + 0.5f;
  for (const auto &block : blocks)
    check(std::fabs(block[n / 2] - expected) <= 1e-3f * std::fabs(expected), "crunch result");
}

std::vector<std::size_t> parse_sizes(const char *text) {
  std::vector<std::size_t> sizes;
  for (const char *p = text; *p;) {
    char *end = nullptr;
    const unsigned long mib = std::strtoul(p, &end, 10);
    if (end == p || mib == 0 || (*end != ',' && *end != '\0')) {
      std::string what = "--sizes: expected sizes in MiB (positive integers, comma-separated): ";
      what += text;
      die(what);
    }
    sizes.push_back(mib);
    p = *end == ',' ? end + 1 : end;
  }
  if (sizes.empty()) die("--sizes: no size given");
  return sizes;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::size_t> sizes = {1, 16, 64, 256};
  int reps = 10, tasks = 10000, multi_tasks = 64;
  std::string sections = "ABC";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      sizes = {1, 4};
      reps = 2;
      tasks = 200;
      multi_tasks = 4;
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes = parse_sizes(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--sections" && i + 1 < argc) {
      sections = argv[++i];
    } else if (a == "--tasks" && i + 1 < argc) {
      tasks = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: cuda_bench [--quick] [--sections ABC] [--sizes 1,16,64,256] [--reps R] "
                           "[--tasks N]\n");
      return 2;
    }
  }
  std::string why;
  const Driver *driver = nanort::rt::cuda::driver(&why);
  if (!driver) {
    std::printf("cuda_bench: SKIP: %s\n", why.c_str());
    return 0;
  }
  // The runtime on every GPU (A and B place their tasks on GPU 0), one CPU worker (no CPU task
  // runs here).
  setenv("NANORT_CUDA_DEVICES", "all", 0);
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
  if (sections.find('A') != std::string::npos) {
    transfers(raw, sizes, reps);
    streamed_transfers(raw, sizes, reps);
  }
  if (sections.find('B') != std::string::npos) overhead(raw, tasks, reps);
  if (sections.find('C') != std::string::npos) multi_gpu(multi_tasks, std::min(reps, 5));
  std::printf("\n   total %.1f s\n", seconds_since(start));
  RAW(cuModuleUnload(raw.module));
  RAW(cuStreamDestroy(raw.stream));
  raw.cu.cuDevicePrimaryCtxRelease(device);
  return 0;
}
