// task_overhead: the cost of one task, in ns, for nanort and for libgomp, oneTBB and StarPU,
// measured side by side in one run on the same number of threads. README.md says what each
// pattern is, how each system expresses it and how to read the table.
//
//   task_overhead [--tasks N] [--threads T] [--repeats R] [--fan K] [--quick] [--verbose]
//                 [--systems nanort,libgomp,tbb,starpu] [--patterns independent,chain,fan,distinct]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.hpp"

namespace bench {

// Systems whose library was not found at configure time: a column that says so.
#if !NANORT_BENCH_HAVE_OPENMP
System gomp_system() { return {"libgomp", false, nullptr, nullptr, nullptr, nullptr}; }
#endif
#if !NANORT_BENCH_HAVE_STARPU
System starpu_system() { return {"starpu", false, nullptr, nullptr, nullptr, nullptr}; }
#endif

namespace {

struct Options {
  Params params;
  int repeats = 5;
  bool quick = false;
  bool verbose = false;  // print every run
  std::string systems;   // comma-separated names to run; empty: all
  std::string patterns;  // comma-separated names to run; empty: all
};

void usage(const char *program) {
  std::printf(
      "usage: %s [--tasks N] [--threads T] [--repeats R] [--fan K] [--quick] [--verbose]\n"
      "          [--systems LIST] [--patterns LIST]\n"
      "  --tasks N    tasks per run (default 300000)\n"
      "  --threads T  threads running tasks in every system (default: logical CPUs)\n"
      "  --repeats R  timed runs per pattern and system; the best is reported (default 5)\n"
      "  --fan K      readers per fan-out round (default 8)\n"
      "  --quick      tiny runs (N=2000, R=1): checks that everything runs and is correct\n"
      "  --verbose    print the time of every run\n"
      "  --systems L  run only these, e.g. nanort,libgomp (names: nanort libgomp tbb starpu)\n"
      "  --patterns L run only these, e.g. chain,fan (names: independent chain fan distinct)\n",
      program);
}

long parse_long(const char *option, const char *text, long low, long high) {
  char *end = nullptr;
  const long value = text ? std::strtol(text, &end, 10) : 0;
  if (!text || end == text || *end != '\0' || value < low || value > high) {
    std::fprintf(stderr, "task_overhead: %s needs an integer in [%ld, %ld]\n", option, low, high);
    std::exit(2);
  }
  return value;
}

Options parse_options(int argc, char **argv) {
  Options options;
  options.params.tasks = 300000;
  options.params.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool tasks_given = false, repeats_given = false;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!std::strcmp(arg, "--tasks")) {
      options.params.tasks = parse_long(arg, value, 1, 1L << 30);
      tasks_given = true;
      ++i;
    } else if (!std::strcmp(arg, "--threads")) {
      options.params.threads = static_cast<int>(parse_long(arg, value, 1, 1024));
      ++i;
    } else if (!std::strcmp(arg, "--repeats")) {
      options.repeats = static_cast<int>(parse_long(arg, value, 1, 1000));
      repeats_given = true;
      ++i;
    } else if (!std::strcmp(arg, "--fan")) {
      options.params.fan_width = static_cast<int>(parse_long(arg, value, 1, 1024));
      ++i;
    } else if (!std::strcmp(arg, "--quick")) {
      options.quick = true;
    } else if (!std::strcmp(arg, "--verbose")) {
      options.verbose = true;
    } else if (!std::strcmp(arg, "--systems") && value) {
      options.systems = value;
      ++i;
    } else if (!std::strcmp(arg, "--patterns") && value) {
      options.patterns = value;
      ++i;
    } else if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
      usage(argv[0]);
      std::exit(0);
    } else {
      std::fprintf(stderr, "task_overhead: unknown argument '%s'\n", arg);
      usage(argv[0]);
      std::exit(2);
    }
  }
  if (options.quick) {
    if (!tasks_given) options.params.tasks = 2000;
    if (!repeats_given) options.repeats = 1;
  }
  // The fan pattern needs at least one whole round.
  options.params.tasks = std::max<long>(options.params.tasks, options.params.fan_width + 2);
  return options;
}

// Whether 'name' is in the comma-separated 'list' (an empty list holds everything).
bool selected(const std::string &list, const std::string &name) {
  if (list.empty()) return true;
  return ("," + list + ",").find("," + name + ",") != std::string::npos;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown CPU";
}

long tasks_in_run(Pattern pattern, const Params &params) {
  return pattern == Pattern::fan ? fan_tasks(params) : params.tasks;
}

struct Measurement {
  bool measured = false;
  double best_ns = 0;      // per task, best of the repeats
  double median_ns = 0;    // per task, median of the repeats
  long reduced_tasks = 0;  // tasks per run when fewer than N (see kMaxRunSeconds); else 0
  int runs = 0;            // timed runs (fewer than asked when a cell ran out of time)
  double value(bool median) const { return median ? median_ns : best_ns; }
};

constexpr int kSystems = 4;
constexpr int kPatterns = 4;
constexpr int kNanort = 0, kGomp = 1, kStarpu = 3;  // columns

struct Results {
  System systems[kSystems];
  Measurement cell[kSystems][kPatterns];
};

// Seconds one run may take, its untimed set-up included: past it a cell runs fewer tasks than
// N (and says so), so that a system that is slow, or slows down with N, cannot stretch the
// whole benchmark. Repeats stop early once a cell has used kCellSeconds.
constexpr double kMaxRunSeconds = 1.0;
constexpr double kCellSeconds = 8.0;

Measurement measure(const System &system, Pattern pattern, const Options &options) {
  // Untimed warm-up runs of growing size, up to N tasks or a run of kMaxRunSeconds: thread
  // pools awake, allocator caches warm, and the size of the timed runs found by measuring
  // rather than by extrapolating far (some systems slow down more than linearly with N).
  const long n_full = options.params.tasks;
  const long n_min = options.params.fan_width + 2;
  Params run_params = options.params;
  run_params.tasks = std::max(n_min, std::min(n_full, 1000L));
  for (;;) {
    const auto start = Clock::now();
    system.run(pattern, run_params);
    const double wall = seconds_since(start);
    const long n = run_params.tasks;
    if (n >= n_full) break;
    const double fits = wall > 0 ? static_cast<double>(n) * kMaxRunSeconds / wall : 1e18;
    if (fits < 1.25 * static_cast<double>(n)) break;  // close enough to the time limit
    run_params.tasks = static_cast<long>(
        std::min({static_cast<double>(n_full), 4.0 * static_cast<double>(n), fits}));
  }

  const long tasks = tasks_in_run(pattern, run_params);
  std::vector<double> ns;
  const auto cell_start = Clock::now();
  for (int r = 0; r < options.repeats; ++r) {
    ns.push_back(system.run(pattern, run_params) * 1e9 / static_cast<double>(tasks));
    if (seconds_since(cell_start) > kCellSeconds) break;
  }
  if (options.verbose) {
    std::printf("  %-8s %-16s %7ld tasks, ns/task:", system.name, pattern_name(pattern), tasks);
    for (double run : ns) std::printf(" %.1f", run);
    std::printf("\n");
    std::fflush(stdout);
  }
  std::sort(ns.begin(), ns.end());
  return {true, ns.front(), ns[ns.size() / 2], run_params.tasks < n_full ? tasks : 0,
          static_cast<int>(ns.size())};
}

void print_table(const Results &results, bool median) {
  std::printf("%-16s", median ? "median ns/task" : "best ns/task");
  for (const System &system : results.systems) std::printf(" %9s ", system.name);
  std::printf("   |");
  for (int s = 1; s < kSystems; ++s)
    std::printf(" %14s", (std::string(results.systems[s].name) + "/nanort").c_str());
  std::printf("\n");

  for (int p = 0; p < kPatterns; ++p) {
    std::printf("%-16s", pattern_name(all_patterns[p]));
    for (int s = 0; s < kSystems; ++s) {
      const Measurement &m = results.cell[s][p];
      if (m.measured)
        std::printf(" %9.1f%c", m.value(median), m.reduced_tasks ? '*' : ' ');
      else
        std::printf(" %9s ", results.systems[s].built ? "-" : "not built");
    }
    std::printf("   |");
    const Measurement &base = results.cell[kNanort][p];
    for (int s = 1; s < kSystems; ++s) {
      const Measurement &m = results.cell[s][p];
      if (m.measured && base.measured)
        std::printf(" %13.2fx", m.value(median) / base.value(median));
      else
        std::printf(" %14s", "-");
    }
    std::printf("\n");
  }
}

// "MET" / "NOT MET" for: other/nanort >= need in every pattern measured for both.
void print_ratio_target(const Results &results, int other, double need, const char *target) {
  std::string ratios;
  bool met = true, any = false;
  for (int p = 0; p < kPatterns; ++p) {
    const Measurement &base = results.cell[kNanort][p], &m = results.cell[other][p];
    if (!base.measured || !m.measured) continue;
    const double ratio = m.best_ns / base.best_ns;
    met = met && ratio >= need;
    any = true;
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%s%s %.2fx", ratios.empty() ? "" : ", ",
                  pattern_name(all_patterns[p]), ratio);
    ratios += buffer;
  }
  const char *name = results.systems[other].name;
  if (!any)
    std::printf("  %-50s NOT CHECKED (%s %s)\n", target, name,
                results.systems[other].built ? "not run" : "not built");
  else
    std::printf("  %-50s %s (%s/nanort: %s)\n", target, met ? "MET" : "NOT MET", name,
                ratios.c_str());
}

// The project's targets, checked on the best-of-repeats numbers.
void print_verdict(const Results &results) {
  std::printf("\nProject targets (best-of-repeats numbers):\n");
  print_ratio_target(results, kGomp, 1.0, "nanort no slower than libgomp in every pattern:");
  print_ratio_target(results, kStarpu, 5.0, "nanort at least 5x faster than StarPU everywhere:");
  const Measurement &chain = results.cell[kNanort][static_cast<int>(Pattern::chain)];
  if (chain.measured)
    std::printf("  %-50s %s (%.1f ns)\n", "nanort under 1000 ns per dependent (chain) task:",
                chain.best_ns < 1000.0 ? "MET" : "NOT MET", chain.best_ns);
  else
    std::printf("  %-50s NOT CHECKED (chain not run)\n",
                "nanort under 1000 ns per dependent (chain) task:");
}

}  // namespace
}  // namespace bench

int main(int argc, char **argv) {
  using namespace bench;
  const Options options = parse_options(argc, argv);
  const Params &params = options.params;

  Results results{{nanort_system(), gomp_system(), tbb_system(), starpu_system()}, {}};

  std::printf("task_overhead: cost of one task (creation to completion, amortised), in ns\n");
  std::printf("machine:  %u logical CPUs, %s\n", std::thread::hardware_concurrency(),
              cpu_model().c_str());
  std::printf("threads:  %d in every system\n", params.threads);
  std::printf("tasks:    N = %ld per run (fan-out/fan-in: %ld rounds of 1 writer + %d readers + 1 "
              "join = %ld tasks)\n",
              params.tasks, fan_rounds(params), params.fan_width, fan_tasks(params));
  std::printf("repeats:  best of %d timed runs per cell, after untimed warm-up runs that grow to N\n"
              "          tasks or to a run of %.0f s (set-up included); cells with fewer tasks than "
              "N are marked *%s\n",
              options.repeats, kMaxRunSeconds,
              options.quick ? "\n          (--quick: the numbers mean nothing)" : "");
  std::fflush(stdout);

  // One system at a time, all its patterns together: its threads are up for its own runs
  // only, and go idle (or away) before the next system starts.
  for (int s = 0; s < kSystems; ++s) {
    const System &system = results.systems[s];
    if (!selected(options.systems, system.name)) continue;
    if (!system.built) {
      std::printf("%-8s  not built (library not found at configure time)\n", system.name);
      continue;
    }
    system.start(params);
    std::printf("%-8s  %s\n", system.name, system.describe());
    std::fflush(stdout);
    for (int p = 0; p < kPatterns; ++p)
      if (selected(options.patterns, pattern_key(all_patterns[p])))
        results.cell[s][p] = measure(system, all_patterns[p], options);
    system.stop();
    // Let spinning threads of this system give their cores back before the next one.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  std::printf("\n");
  print_table(results, /*median=*/false);
  std::printf("\n");
  print_table(results, /*median=*/true);
  std::printf("(ratios are other/nanort: above 1 means nanort is faster)\n");
  for (int s = 0; s < kSystems; ++s)
    for (int p = 0; p < kPatterns; ++p) {
      const Measurement &m = results.cell[s][p];
      if (m.reduced_tasks)
        std::printf("* %s, %s: %ld tasks per run instead of N, to keep a run near %.0f s\n",
                    results.systems[s].name, pattern_name(all_patterns[p]), m.reduced_tasks,
                    kMaxRunSeconds);
      if (m.measured && m.runs < options.repeats)
        std::printf("  %s, %s: %d timed run(s) instead of %d, the cell used its %.0f s\n",
                    results.systems[s].name, pattern_name(all_patterns[p]), m.runs,
                    options.repeats, kCellSeconds);
    }
  print_verdict(results);
  return 0;
}
