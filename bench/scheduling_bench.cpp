// scheduling_bench: the placement policies side by side (issue 6, item 7; README.md,
// "scheduling_bench").
//
// A. CPU + GPU load balance:
// Many independent tasks, each with an smp and a CUDA implementation, on a block of its own
// ('rounds' multiply-adds per element: few rounds make copying to the GPU the larger cost, many
// make the GPU much faster). For each granularity:
//   - every static split: a fraction of the tasks placed on the CPU workers, the rest on the
//     GPUs in turn (nanort_task_set_device), from 0% to 100% of the tasks on the CPU;
//   - each policy (breadth-first, locality, dmda) placing the same tasks itself, in a child
//     process of this program started with NANORT_SCHEDULER set (a policy is chosen at start);
//     dmda learns in warm-up runs first (its model: NANORT_PERF_MODEL=off, afresh).
// Time = submitting every task + a flushing taskwait (the results home), median of the runs.
//
// B. Blocked matrix multiplication, C += A B in square tiles (a CUDA kernel per tile product,
// inout on the C tile): time and bytes moved by the directory under each policy, on GPU 0
// alone and on every GPU (child processes with NANORT_CUDA_DEVICES and NANORT_SCHEDULER set).
//
// C. Pipelines: frames, each a chain of four smoothing stages (each with an smp and a CUDA
// version, reading one buffer and writing the other), the frames independent: time and the
// CPU's share under each policy.
//
// Results are checked. Without a GPU it prints SKIP and why, and exits 0.
#include <nanort/nanort.h>
#include <nanort/dc/directory.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "device/accelerator.hpp"
#include "observe/energy.hpp"
#include "runtime.hpp"

extern "C" const unsigned char cuda_bench_kernels[];
extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "scheduling_bench: %s\n", what.c_str());
  std::exit(1);
}
void check_nanort(nanort_status status, const char *what) {
  if (status != NANORT_SUCCESS) die(std::string(what) + ": " + nanort_last_error());
}

struct CrunchArgs {
  float *x;
  int n, rounds;
};

std::atomic<long> ran_on_cpu{0};  // tasks the smp version ran

// The smp version: the same arithmetic as the kernel, one element after another.
void crunch_on_cpu(void *raw) {
  ran_on_cpu.fetch_add(1, std::memory_order_relaxed);
  auto *a = static_cast<CrunchArgs *>(raw);
  for (int i = 0; i < a->n; ++i) {
    float v = a->x[i];
    for (int r = 0; r < a->rounds; ++r) v = v * 0.999f + 0.5f;
    a->x[i] = v;
  }
}

const nanort_kernel_module kModule = {NANORT_ABI_VERSION, NANORT_MODULE_CUDA_FATBIN,
                                      cuda_bench_kernels, 0, nullptr, "cuda_bench_kernels.cu"};
const nanort_kernel_arg kArgs[] = {{offsetof(CrunchArgs, x), sizeof(void *), NANORT_ARG_BUFFER},
                                   {offsetof(CrunchArgs, n), sizeof(int), NANORT_ARG_VALUE},
                                   {offsetof(CrunchArgs, rounds), sizeof(int), NANORT_ARG_VALUE}};
// The CUDA version first: breadth-first takes the first one the machine can run.
const nanort_task_impl kImpls[] = {
    {NANORT_DEVICE_CUDA, nullptr, "crunch", &kModule, kArgs, 3},
    {NANORT_DEVICE_SMP, crunch_on_cpu, nullptr, nullptr, nullptr, 0}};
const nanort_task_site kSite = {NANORT_ABI_VERSION, "crunch", __FILE__, __LINE__, kImpls, 2, nullptr};

struct Workload {
  int tasks, n, rounds;
};

// Submits every task (placed as 'cpu_share' says, or not at all when negative) and waits.
double run_once(const Workload &w, std::vector<std::vector<float>> &blocks, double cpu_share,
                int gpus) {
  const Clock::time_point start = Clock::now();
  const int on_cpu = cpu_share < 0 ? 0 : static_cast<int>(std::lround(cpu_share * w.tasks));
  for (int k = 0; k < w.tasks; ++k) {
    nanort_task *t = nanort_task_create(&kSite, sizeof(CrunchArgs));
    if (!t) die(std::string("nanort_task_create: ") + nanort_last_error());
    *static_cast<CrunchArgs *>(nanort_task_args(t)) = {blocks[k].data(), w.n, w.rounds};
    check_nanort(nanort_task_access(t, blocks[k].data(), w.n * sizeof(float), NANORT_INOUT),
                 "access");
    const std::size_t global = static_cast<std::size_t>(w.n), local = 256;
    check_nanort(nanort_task_set_ndrange(t, 1, &global, &local), "ndrange");
    if (cpu_share >= 0) {
      // Spread the CPU's share evenly among the tasks.
      const bool cpu = (k * on_cpu) / w.tasks != ((k + 1) * on_cpu) / w.tasks;
      if (cpu)
        nanort_task_set_device(t, NANORT_DEVICE_SMP, 0);
      else
        nanort_task_set_device(t, NANORT_DEVICE_CUDA, k % gpus);
    }
    check_nanort(nanort_task_submit(t), "submit");
  }
  check_nanort(nanort_taskwait(), "taskwait");
  return std::chrono::duration<double>(Clock::now() - start).count() * 1e3;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Measured {
  double ms;         // median of the timed runs
  double cpu_share;  // of the tasks of the timed runs, those the CPU workers ran
};

// Runs the workload 'warmups' + 'reps' times. Checks the results against the same arithmetic
// on the host.
Measured measure(const Workload &w, double cpu_share, int gpus, int warmups, int reps) {
  std::vector<std::vector<float>> blocks(static_cast<std::size_t>(w.tasks),
                                         std::vector<float>(static_cast<std::size_t>(w.n), 1.0f));
  std::vector<double> times;
  long cpu_before = 0;
  for (int rep = 0; rep < warmups + reps; ++rep) {
    if (rep == warmups) cpu_before = ran_on_cpu.load();
    const double ms = run_once(w, blocks, cpu_share, gpus);
    if (rep >= warmups) times.push_back(ms);
  }
  const double share = static_cast<double>(ran_on_cpu.load() - cpu_before) / (reps * w.tasks);
  float expected = 1.0f;
  for (int r = 0; r < (warmups + reps) * w.rounds; ++r) expected = expected * 0.999f + 0.5f;
  for (const auto &block : blocks)
    if (std::fabs(block[static_cast<std::size_t>(w.n) / 3] - expected) > 1e-3f * expected)
      die("wrong result");
  return {median(times), share};
}

// ---------------------------------------------------------------------------------------------
// B. Blocked matrix multiplication

struct GemmArgs {
  const float *a, *b;
  float *c;
  int n;
};
const nanort_kernel_arg kGemmArgs[] = {{offsetof(GemmArgs, a), sizeof(void *), NANORT_ARG_BUFFER},
                                       {offsetof(GemmArgs, b), sizeof(void *), NANORT_ARG_BUFFER},
                                       {offsetof(GemmArgs, c), sizeof(void *), NANORT_ARG_BUFFER},
                                       {offsetof(GemmArgs, n), sizeof(int), NANORT_ARG_VALUE}};
const nanort_task_impl kGemmImpl = {NANORT_DEVICE_CUDA, nullptr, "gemm_tile", &kModule, kGemmArgs, 4};
const nanort_task_site kGemmSite = {NANORT_ABI_VERSION, "gemm_tile", __FILE__, __LINE__, &kGemmImpl, 1, nullptr};

// Bytes the directory moved so far, all spaces and directions.
std::uint64_t bytes_moved() {
  const nanort::dc::Directory *directory = nanort::rt::Runtime::get().directory();
  std::uint64_t bytes = 0;
  for (nanort::dc::SpaceId s = 1; s < directory->space_count(); ++s) {
    const nanort::dc::TransferCounters c = directory->counters(s);
    bytes += c.bytes_to_device + c.bytes_to_host + c.bytes_from_peer;
  }
  return bytes;
}

// tiles x tiles tiles of n x n floats; A and B of small integers, so that sums are exact.
struct MatmulResult {
  double ms;
  double gib_moved;  // per run
};
MatmulResult matmul(int tiles, int n, int reps) {
  const std::size_t tile = static_cast<std::size_t>(n) * n;
  auto index = [&](int i, int j) { return (static_cast<std::size_t>(i) * tiles + j) * tile; };
  std::vector<float> a(tile * tiles * tiles), b(a.size()), c(a.size());
  for (std::size_t e = 0; e < a.size(); ++e) {
    a[e] = static_cast<float>(e % 3);
    b[e] = static_cast<float>((e / 7) % 2);
  }
  std::vector<double> times;
  std::uint64_t moved = 0;
  for (int rep = -1; rep < reps; ++rep) {
    std::fill(c.begin(), c.end(), 0.0f);
    const std::uint64_t before = bytes_moved();
    const Clock::time_point start = Clock::now();
    for (int k = 0; k < tiles; ++k)
      for (int i = 0; i < tiles; ++i)
        for (int j = 0; j < tiles; ++j) {
          nanort_task *t = nanort_task_create(&kGemmSite, sizeof(GemmArgs));
          if (!t) die(std::string("nanort_task_create: ") + nanort_last_error());
          *static_cast<GemmArgs *>(nanort_task_args(t)) = {&a[index(i, k)], &b[index(k, j)],
                                                           &c[index(i, j)], n};
          check_nanort(nanort_task_access(t, &a[index(i, k)], tile * sizeof(float), NANORT_IN), "a");
          check_nanort(nanort_task_access(t, &b[index(k, j)], tile * sizeof(float), NANORT_IN), "b");
          check_nanort(nanort_task_access(t, &c[index(i, j)], tile * sizeof(float), NANORT_INOUT), "c");
          const std::size_t global[2] = {static_cast<std::size_t>(n), static_cast<std::size_t>(n)};
          const std::size_t local[2] = {16, 16};
          check_nanort(nanort_task_set_ndrange(t, 2, global, local), "ndrange");
          check_nanort(nanort_task_submit(t), "submit");
        }
    check_nanort(nanort_taskwait(), "taskwait");
    if (rep >= 0) {
      times.push_back(std::chrono::duration<double>(Clock::now() - start).count() * 1e3);
      moved += bytes_moved() - before;
    }
  }
  // One element of each C tile against the host.
  for (int i = 0; i < tiles; ++i)
    for (int j = 0; j < tiles; ++j) {
      const int r = n / 3, col = n / 5;
      double expected = 0;
      for (int k = 0; k < tiles; ++k)
        for (int e = 0; e < n; ++e)
          expected += static_cast<double>(a[index(i, k) + static_cast<std::size_t>(r) * n + e]) *
                      b[index(k, j) + static_cast<std::size_t>(e) * n + col];
      if (c[index(i, j) + static_cast<std::size_t>(r) * n + col] != static_cast<float>(expected))
        die("wrong matrix product");
    }
  return {median(times), static_cast<double>(moved) / reps / (1u << 30)};
}

// ---------------------------------------------------------------------------------------------
// C. Pipelines

struct SmoothArgs {
  const float *in;
  float *out;
  int n;
};
void smooth_on_cpu(void *raw) {
  ran_on_cpu.fetch_add(1, std::memory_order_relaxed);
  auto *a = static_cast<SmoothArgs *>(raw);
  for (int i = 0; i < a->n; ++i) {
    const float left = a->in[i > 0 ? i - 1 : 0], right = a->in[i + 1 < a->n ? i + 1 : a->n - 1];
    a->out[i] = (left + a->in[i] + right) * (1.0f / 3.0f);
  }
}
const nanort_kernel_arg kSmoothArgs[] = {{offsetof(SmoothArgs, in), sizeof(void *), NANORT_ARG_BUFFER},
                                         {offsetof(SmoothArgs, out), sizeof(void *), NANORT_ARG_BUFFER},
                                         {offsetof(SmoothArgs, n), sizeof(int), NANORT_ARG_VALUE}};
const nanort_task_impl kSmoothImpls[] = {
    {NANORT_DEVICE_CUDA, nullptr, "smooth", &kModule, kSmoothArgs, 3},
    {NANORT_DEVICE_SMP, smooth_on_cpu, nullptr, nullptr, nullptr, 0}};
const nanort_task_site kSmoothSite = {NANORT_ABI_VERSION, "smooth", __FILE__, __LINE__, kSmoothImpls, 2, nullptr};

// 'frames' frames of n floats through four stages; ms (median) and the CPU's share of stages.
Measured pipelines(int frames, int n, int reps) {
  constexpr int kStages = 4;
  std::vector<std::vector<float>> a(static_cast<std::size_t>(frames)), b(a.size());
  std::vector<double> times;
  long cpu_before = 0;
  for (int rep = -3; rep < reps; ++rep) {  // three runs to learn first (dmda)
    for (int f = 0; f < frames; ++f) {
      a[f].assign(static_cast<std::size_t>(n), 0.0f);
      a[f][static_cast<std::size_t>(n) / 2] = 81.0f;  // an impulse, smoothed four times
      b[f].assign(static_cast<std::size_t>(n), 0.0f);
    }
    if (rep == 0) cpu_before = ran_on_cpu.load();
    const Clock::time_point start = Clock::now();
    for (int f = 0; f < frames; ++f)
      for (int s = 0; s < kStages; ++s) {
        float *in = s % 2 == 0 ? a[f].data() : b[f].data();
        float *out = s % 2 == 0 ? b[f].data() : a[f].data();
        nanort_task *t = nanort_task_create(&kSmoothSite, sizeof(SmoothArgs));
        if (!t) die(std::string("nanort_task_create: ") + nanort_last_error());
        *static_cast<SmoothArgs *>(nanort_task_args(t)) = {in, out, n};
        check_nanort(nanort_task_access(t, in, n * sizeof(float), NANORT_IN), "in");
        check_nanort(nanort_task_access(t, out, n * sizeof(float), NANORT_OUT), "out");
        const std::size_t global = static_cast<std::size_t>(n), local = 256;
        check_nanort(nanort_task_set_ndrange(t, 1, &global, &local), "ndrange");
        check_nanort(nanort_task_submit(t), "submit");
      }
    check_nanort(nanort_taskwait(), "taskwait");
    if (rep >= 0) times.push_back(std::chrono::duration<double>(Clock::now() - start).count() * 1e3);
  }
  // Four smoothings of an impulse of 81: 1, 4, 10, 16, 19, 16, 10, 4, 1 around the middle.
  const float expected[] = {1, 4, 10, 16, 19, 16, 10, 4, 1};
  for (const auto &frame : a)
    for (int d = -4; d <= 4; ++d)
      if (std::fabs(frame[static_cast<std::size_t>(n / 2 + d)] - expected[d + 4]) > 1e-4f)
        die("wrong pipeline result");
  const double share =
      static_cast<double>(ran_on_cpu.load() - cpu_before) / (static_cast<double>(reps) * frames * kStages);
  return {median(times), share};
}

// Runs this program again with 'args', its environment changed by 'settings' (NAME=value,
// replacing what was set), and returns the two numbers the child prints.
// Runs this program with 'args' and the environment changed by 'settings'; it prints two
// numbers (three when 'third' is given).
std::pair<double, double> run_child(const std::vector<std::string> &args,
                                    const std::vector<std::string> &settings,
                                    double *third = nullptr) {
  std::vector<std::string> env_text;
  for (char **e = environ; *e; ++e) {
    bool replaced = false;
    for (const std::string &setting : settings)
      replaced = replaced || std::strncmp(*e, setting.c_str(), setting.find('=') + 1) == 0;
    if (!replaced) env_text.push_back(*e);
  }
  env_text.insert(env_text.end(), settings.begin(), settings.end());
  std::vector<char *> env;
  for (std::string &text : env_text) env.push_back(text.data());
  env.push_back(nullptr);
  const char *self = "/proc/self/exe";
  std::vector<std::string> arg_text(args);
  std::vector<char *> argv{const_cast<char *>(self)};
  for (std::string &arg : arg_text) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) die("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
  pid_t child = 0;
  if (posix_spawn(&child, self, &actions, nullptr, argv.data(), env.data()) != 0)
    die("cannot start " + std::string(self));
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_ends[1]);
  std::string output;
  char buffer[256];
  for (ssize_t got; (got = read(pipe_ends[0], buffer, sizeof buffer)) > 0;)
    output.append(buffer, static_cast<std::size_t>(got));
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  std::pair<double, double> numbers;
  double extra = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      std::sscanf(output.c_str(), "%lf %lf %lf", &numbers.first, &numbers.second, &extra) <
          (third ? 3 : 2))
    die("the run of " + args[0] + " with " + settings[0] + " failed: " + output);
  if (third) *third = extra;
  return numbers;
}

}  // namespace

int main(int argc, char **argv) {
  setenv("NANORT_OPENCL_DEVICES", "none", 0);
  if (argc == 5 && std::strcmp(argv[1], "--pipeline-run") == 0) {
    check_nanort(nanort_init(), "nanort_init");
    const Measured m = pipelines(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]));
    std::printf("%.3f %.3f\n", m.ms, m.cpu_share);
    return 0;
  }
  if (argc == 5 && std::strcmp(argv[1], "--matmul-run") == 0) {
    check_nanort(nanort_init(), "nanort_init");
    const MatmulResult m = matmul(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]));
    std::printf("%.3f %.3f\n", m.ms, m.gib_moved);
    return 0;
  }
  if (argc == 6 && std::strcmp(argv[1], "--energy-run") == 0) {
    // As --policy-run, then the GPUs' energy (NVML) over the timed runs, joules per run.
    const Workload w{std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4])};
    check_nanort(nanort_init(), "nanort_init");
    const int gpus = nanort_device_count(NANORT_DEVICE_CUDA), reps = std::atoi(argv[5]);
    measure(w, -1, gpus, 3, 1);  // calibration, as --policy-run's warm-ups
    std::vector<nanort::rt::EnergyMeter::Gpu> list;
    for (const auto &accelerator : nanort::rt::Runtime::get().accelerators())
      if (accelerator->kind() == NANORT_DEVICE_CUDA)
        list.push_back({accelerator->name(), accelerator->pci_bus_id()});
    const nanort::rt::EnergyMeter meter(list);
    const Measured m = measure(w, -1, gpus, 0, reps);
    std::printf("%.3f %.3f %.3f\n", m.ms, m.cpu_share, meter.joules() / reps);
    return 0;
  }
  if (argc == 6 && std::strcmp(argv[1], "--policy-run") == 0) {
    const Workload w{std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4])};
    check_nanort(nanort_init(), "nanort_init");
    // dmda learns first: every place is tried, then measured enough to be trusted.
    const int warmups = 3, reps = std::atoi(argv[5]);
    const Measured m = measure(w, -1, nanort_device_count(NANORT_DEVICE_CUDA), warmups, reps);
    std::printf("%.3f %.3f\n", m.ms, m.cpu_share);
    return 0;
  }
  int reps = 5;
  bool quick = false;
  std::string sections = "ABCD";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
      reps = 1;
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--sections") == 0 && i + 1 < argc) {
      sections = argv[++i];
    } else {
      std::fprintf(stderr, "usage: scheduling_bench [--quick] [--reps R] [--sections ABCD]\n");
      return 2;
    }
  }
  const auto section = [&](char name) { return sections.find(name) != std::string::npos; };
  check_nanort(nanort_init(), "nanort_init");
  const int gpus = nanort_device_count(NANORT_DEVICE_CUDA);
  if (gpus == 0) {
    std::printf("scheduling_bench: SKIP: no CUDA GPU (the CPU + GPU balance needs one)\n");
    return 0;
  }
  const int workers = nanort_device_count(NANORT_DEVICE_SMP);
  std::printf("scheduling_bench: %d GPU(s), %d CPU workers; nanort %s\n", gpus, workers,
              nanort_version_string());
  std::printf("   independent tasks, smp and CUDA versions, each on a block of its own; ms per run"
              " (submit + flushing taskwait), median of %d\n", reps);
  const std::vector<Workload> workloads =
      quick ? std::vector<Workload>{{32, 1 << 16, 4}}
            : std::vector<Workload>{{256, 1 << 16, 2}, {256, 1 << 16, 32}, {256, 1 << 16, 512}};
  for (const Workload &w : section('A') ? workloads : std::vector<Workload>{}) {
    std::printf("\n   %d tasks of %d KiB, %d multiply-adds per element\n", w.tasks,
                static_cast<int>(w.n * sizeof(float) >> 10), w.rounds);
    std::printf("   %-28s", "static split: % on the CPU");
    std::vector<double> shares;
    for (int p = 0; p <= 100; p += quick ? 50 : 10) shares.push_back(p / 100.0);
    double best = 0, best_share = 0;
    std::vector<double> times;
    for (double share : shares) {
      const double ms = measure(w, share, gpus, 1, reps).ms;
      times.push_back(ms);
      if (times.size() == 1 || ms < best) {
        best = ms;
        best_share = share;
      }
    }
    for (double share : shares) std::printf(" %7.0f", share * 100);
    std::printf("\n   %-28s", "ms");
    for (double ms : times) std::printf(" %7.2f", ms);
    std::printf("\n   %-28s %7.2f  (%.0f%% on the CPU)\n", "best static split", best,
                best_share * 100);
    for (const char *policy : {"breadth-first", "locality", "dmda"}) {
      const auto [ms, share] = run_child(
          {"--policy-run", std::to_string(w.tasks), std::to_string(w.n), std::to_string(w.rounds),
           std::to_string(reps)},
          {std::string("NANORT_SCHEDULER=") + policy, "NANORT_PERF_MODEL=off"});
      const Measured m{ms, share};
      std::printf("   %-28s %7.2f  (x%.2f the best static split; %.0f%% on the CPU)\n", policy,
                  m.ms, m.ms / best, m.cpu_share * 100);
    }
  }

  const int tiles = quick ? 2 : 4, n = quick ? 256 : 2048;
  if (section('B')) {
  std::printf("\nB. Blocked matrix multiplication: %d x %d tiles of %d x %d floats (%d MiB each), "
              "%d tile products; ms per run (taskwait included) and GiB moved by the directory, "
              "median of %d\n", tiles, tiles, n, n, static_cast<int>(std::size_t(n) * n * 4 >> 20),
              tiles * tiles * tiles, reps);
  std::printf("   %-16s %22s %22s\n", "", "GPU 0 alone", gpus > 1 ? "every GPU" : "");
  for (const char *policy : {"breadth-first", "locality", "dmda"}) {
    std::printf("   %-16s", policy);
    for (const char *devices : {"0", "all"}) {
      if (gpus < 2 && std::strcmp(devices, "all") == 0) break;
      const auto [ms, gib] = run_child(
          {"--matmul-run", std::to_string(tiles), std::to_string(n), std::to_string(reps)},
          {std::string("NANORT_SCHEDULER=") + policy, "NANORT_PERF_MODEL=off",
           std::string("NANORT_CUDA_DEVICES=") + devices});
      std::printf("   %9.2f ms %6.2f GiB", ms, gib);
    }
    std::printf("\n");
  }
  }

  const int frames = quick ? 4 : 64, frame_n = quick ? 1 << 12 : 1 << 18;
  if (section('C')) {
  std::printf("\nC. Pipelines: %d frames of %d KiB, each through four smoothing stages (smp and "
              "CUDA versions); ms per run (taskwait included), median of %d\n", frames,
              static_cast<int>(frame_n * sizeof(float) >> 10), reps);
  for (const char *policy : {"breadth-first", "locality", "dmda"}) {
    const auto [ms, share] = run_child(
        {"--pipeline-run", std::to_string(frames), std::to_string(frame_n), std::to_string(reps)},
        {std::string("NANORT_SCHEDULER=") + policy, "NANORT_PERF_MODEL=off"});
    std::printf("   %-16s %9.2f ms  (%.0f%% of the stages on the CPU)\n", policy, ms, share * 100);
  }
  }

  if (section('D')) {
    // Time for energy: the balance of A at its middle granularity under the energy policy at
    // several rates, with the GPUs' energy from NVML (the CPU's is not measured here).
    const Workload w = quick ? Workload{32, 1 << 16, 4} : Workload{256, 1 << 16, 32};
    std::printf("\nD. Time for energy: A's %d tasks of %d KiB, %d multiply-adds per element; "
                "ms per run and the GPUs' joules per run (NVML; CPU energy not measured), "
                "median of %d\n", w.tasks, static_cast<int>(w.n * sizeof(float) >> 10),
                w.rounds, reps);
    const std::vector<std::string> args = {"--energy-run", std::to_string(w.tasks),
                                           std::to_string(w.n), std::to_string(w.rounds),
                                           std::to_string(reps)};
    std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
        {"dmda", {"NANORT_SCHEDULER=dmda", "NANORT_PERF_MODEL=off"}}};
    for (const char *rate : {"1000", "1", "0.1", "0.01", "0"})
      runs.push_back({std::string("energy, rate ") + rate,
                      {"NANORT_SCHEDULER=energy", "NANORT_PERF_MODEL=off",
                       std::string("NANORT_ENERGY_RATE=") + rate}});
    for (const auto &[name, settings] : runs) {
      double joules = 0;
      const auto [ms, share] = run_child(args, settings, &joules);
      if (joules < 0)
        std::printf("   %-22s %8.2f ms  (%3.0f%% on the CPU)  GPU energy not readable\n",
                    name.c_str(), ms, share * 100);
      else
        std::printf("   %-22s %8.2f ms  (%3.0f%% on the CPU)  %7.3f J on the GPUs\n",
                    name.c_str(), ms, share * 100, joules);
    }
  }
  return 0;
}
