// scheduling_bench: CPU + GPU load balance (issue 6, item 7; README.md, "scheduling_bench").
//
// Many independent tasks, each with an smp and a CUDA implementation, on a block of its own
// ('rounds' multiply-adds per element: few rounds make copying to the GPU the larger cost, many
// make the GPU much faster). For each granularity:
//   - every static split: a fraction of the tasks placed on the CPU workers, the rest on the
//     GPUs in turn (nanort_task_set_device), from 0% to 100% of the tasks on the CPU;
//   - each policy (breadth-first, locality, dmda) placing the same tasks itself, in a child
//     process of this program started with NANORT_SCHEDULER set (a policy is chosen at start);
//     dmda learns in warm-up runs first (its model: NANORT_PERF_MODEL=off, afresh).
// Time = submitting every task + a flushing taskwait (the results home), median of the runs.
// Results are checked. Without a GPU it prints SKIP and why, and exits 0.
#include <nanort/nanort.h>

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
#include <vector>

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

// A child process measuring one policy: this program with --policy-run, NANORT_SCHEDULER set.
Measured measure_policy(const char *self, const char *policy, const Workload &w, int reps) {
  std::string scheduler = std::string("NANORT_SCHEDULER=") + policy;
  std::vector<std::string> env_text;
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "NANORT_SCHEDULER=", 17) != 0 && std::strncmp(*e, "NANORT_PERF_MODEL=", 18) != 0)
      env_text.push_back(*e);
  env_text.push_back(scheduler);
  env_text.push_back("NANORT_PERF_MODEL=off");
  std::vector<char *> env;
  for (std::string &text : env_text) env.push_back(text.data());
  env.push_back(nullptr);
  const std::string tasks = std::to_string(w.tasks), n = std::to_string(w.n),
                    rounds = std::to_string(w.rounds), repetitions = std::to_string(reps);
  const char *argv[] = {self, "--policy-run", tasks.c_str(), n.c_str(), rounds.c_str(),
                        repetitions.c_str(), nullptr};
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) die("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
  pid_t child = 0;
  if (posix_spawn(&child, self, &actions, nullptr, const_cast<char **>(argv), env.data()) != 0)
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
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || output.empty())
    die(std::string("the ") + policy + " run failed: " + output);
  Measured measured{};
  if (std::sscanf(output.c_str(), "%lf %lf", &measured.ms, &measured.cpu_share) != 2)
    die(std::string("the ") + policy + " run printed: " + output);
  return measured;
}

}  // namespace

int main(int argc, char **argv) {
  setenv("NANORT_OPENCL_DEVICES", "none", 0);
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
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
      reps = 1;
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: scheduling_bench [--quick] [--reps R]\n");
      return 2;
    }
  }
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
  for (const Workload &w : workloads) {
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
      const Measured m = measure_policy("/proc/self/exe", policy, w, reps);
      std::printf("   %-28s %7.2f  (x%.2f the best static split; %.0f%% on the CPU)\n", policy,
                  m.ms, m.ms / best, m.cpu_share * 100);
    }
  }
  return 0;
}
