// task_overhead: the cost of one task, in ns, for nanort and for libgomp, oneTBB and StarPU,
// measured side by side in one run on the same number of threads. README.md says what each
// pattern is, how each system expresses it and how to read the table.
//
//   task_overhead [--tasks N] [--threads T[,T...]] [--repeats R] [--fan K] [--quick] [--verbose]
//                 [--systems nanort,libgomp,tbb,starpu] [--patterns independent,chain,fan,distinct]
//                 [--csv FILE]
//
// With a list of thread counts each count runs in a process of its own (nanort starts once per
// process, with its worker count fixed at start): the program runs itself once per count with
// that count alone and a CSV file, one after another, then prints the scaling across counts.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
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

constexpr int kMaxThreads = 1024;

struct Options {
  Params params;
  std::vector<int> thread_counts;  // ascending; one: a run as ever, several: one per process
  int repeats = 5;
  bool quick = false;
  bool verbose = false;  // print every run
  std::string systems;   // comma-separated names to run; empty: all
  std::string patterns;  // comma-separated names to run; empty: all
  std::string csv;       // --csv FILE: every measurement, machine-readable; empty: none
  // Internal (--list-part, not in the usage text): this process runs one count of a list for
  // its parent, which printed the common header and prints the scaling.
  bool list_part = false;
  std::vector<std::string> passthrough;  // the options that every count of a list runs with
};

[[noreturn]] void bad_option(const std::string &message) {
  std::fprintf(stderr, "task_overhead: %s\n", message.c_str());
  std::exit(2);
}

std::string join_counts(const std::vector<int> &counts) {
  std::string text;
  for (int count : counts) text += (text.empty() ? "" : ",") + std::to_string(count);
  return text;
}

// Powers of two up to the logical CPUs, and their number itself when it is not one.
std::vector<int> default_thread_counts() {
  const int cpus =
      std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
  std::vector<int> counts;
  for (int count = 1; count <= cpus; count *= 2) counts.push_back(count);
  if (counts.back() != cpus) counts.push_back(cpus);
  return counts;
}

// "8" or "1,2,4,8": every entry an integer in [1, kMaxThreads], none twice; returned ascending.
std::vector<int> parse_thread_counts(const char *text) {
  if (!text || !*text)
    bad_option("--threads needs a thread count or a comma-separated list of them, e.g. 1,2,4");
  const std::string list = text;
  std::vector<int> counts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = list.find(',', begin);
    const std::string entry =
        list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (entry.empty())
      bad_option("--threads: '" + list + "' has an empty entry (give a thread count or a " +
                 "comma-separated list of them, e.g. 1,2,4)");
    char *end = nullptr;
    const long value = std::strtol(entry.c_str(), &end, 10);
    if (!std::isdigit(static_cast<unsigned char>(entry[0])) || *end != '\0' || value < 1 ||
        value > kMaxThreads)
      bad_option("--threads: '" + entry + "' is not a thread count (an integer from 1 to " +
                 std::to_string(kMaxThreads) + ")");
    if (std::find(counts.begin(), counts.end(), value) != counts.end())
      bad_option("--threads: '" + list + "' names " + entry + " twice");
    counts.push_back(static_cast<int>(value));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

void usage(const char *program) {
  std::printf(
      "usage: %s [--tasks N] [--threads LIST] [--repeats R] [--fan K] [--quick] [--verbose]\n"
      "          [--systems LIST] [--patterns LIST] [--csv FILE]\n"
      "  --tasks N       tasks per run (default 300000)\n"
      "  --threads LIST  threads running tasks in every system: one count (8) or a list\n"
      "                  (1,2,4,8); with a list each count runs in a process of its own, with\n"
      "                  a table of its own, and a scaling section across counts follows\n"
      "                  (default: powers of two up to the logical CPUs, and their number:\n"
      "                  %s here)\n"
      "  --repeats R     timed runs per pattern and system; the best is reported (default 5)\n"
      "  --fan K         readers per fan-out round (default 8)\n"
      "  --quick         tiny runs (N=2000, R=1): checks that everything runs and is correct\n"
      "  --verbose       print the time of every run\n"
      "  --systems L     run only these, e.g. nanort,libgomp (names: nanort libgomp tbb starpu)\n"
      "  --patterns L    run only these, e.g. chain,fan (names: independent chain fan distinct)\n"
      "  --csv FILE      also write every measurement to FILE, a CSV line per thread count,\n"
      "                  system and pattern (README.md gives the columns)\n",
      program, join_counts(default_thread_counts()).c_str());
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
  bool tasks_given = false, repeats_given = false;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    // Every option but --threads, --csv and --list-part goes to each count of a list as is.
    const int first = i;
    bool pass = true;
    if (!std::strcmp(arg, "--tasks")) {
      options.params.tasks = parse_long(arg, value, 1, 1L << 30);
      tasks_given = true;
      ++i;
    } else if (!std::strcmp(arg, "--threads")) {
      options.thread_counts = parse_thread_counts(value);
      pass = false;
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
    } else if (!std::strcmp(arg, "--csv")) {
      if (!value || !*value) bad_option("--csv needs the name of the file to write");
      options.csv = value;
      pass = false;
      ++i;
    } else if (!std::strcmp(arg, "--list-part")) {
      options.list_part = true;
      pass = false;
    } else if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
      usage(argv[0]);
      std::exit(0);
    } else {
      std::fprintf(stderr, "task_overhead: unknown argument '%s'\n", arg);
      usage(argv[0]);
      std::exit(2);
    }
    if (pass) options.passthrough.insert(options.passthrough.end(), argv + first, argv + i + 1);
  }
  if (options.thread_counts.empty()) options.thread_counts = default_thread_counts();
  options.params.threads = options.thread_counts.front();
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
  long tasks = 0;          // tasks per timed run
  int runs = 0;            // timed runs (fewer than asked when a cell ran out of time)
  double value(bool median) const { return median ? median_ns : best_ns; }
};

constexpr int kSystems = 4;
constexpr int kPatterns = 4;
constexpr int kNanort = 0, kGomp = 1, kStarpu = 3;  // columns

struct Results {
  int threads = 0;  // asked of every system
  System systems[kSystems];
  int workers[kSystems] = {};  // what each system started; 0: not started
  Measurement cell[kSystems][kPatterns];

  // Fewer workers than threads asked: StarPU's build caps its CPU workers.
  bool capped(int s) const { return workers[s] > 0 && workers[s] < threads; }
};

Results make_results(int threads) {
  Results results;
  results.threads = threads;
  const System systems[kSystems] = {nanort_system(), gomp_system(), tbb_system(), starpu_system()};
  std::copy(systems, systems + kSystems, results.systems);
  return results;
}

int system_index(const std::string &name) {
  static const System systems[kSystems] = {nanort_system(), gomp_system(), tbb_system(),
                                           starpu_system()};
  for (int s = 0; s < kSystems; ++s)
    if (name == systems[s].name) return s;
  return -1;
}

int pattern_index(const std::string &key) {
  for (int p = 0; p < kPatterns; ++p)
    if (key == pattern_key(all_patterns[p])) return p;
  return -1;
}

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
  Measurement m;
  m.measured = true;
  m.best_ns = ns.front();
  m.median_ns = ns[ns.size() / 2];
  m.reduced_tasks = run_params.tasks < n_full ? tasks : 0;
  m.tasks = tasks;
  m.runs = static_cast<int>(ns.size());
  return m;
}

// A system's column: its name, and the workers it ran when fewer than the threads asked.
std::string column_name(const Results &results, int s) {
  std::string name = results.systems[s].name;
  if (results.capped(s)) name += "(" + std::to_string(results.workers[s]) + ")";
  return name;
}

void print_table(const Results &results, bool median) {
  std::printf("%-16s", median ? "median ns/task" : "best ns/task");
  for (int s = 0; s < kSystems; ++s) std::printf(" %9s ", column_name(results, s).c_str());
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

void print_header_common(const Options &options, const std::string &threads_line) {
  const Params &params = options.params;
  std::printf("task_overhead: cost of one task (creation to completion, amortised), in ns\n");
  std::printf("machine:  %u logical CPUs, %s\n", std::thread::hardware_concurrency(),
              cpu_model().c_str());
  std::printf("threads:  %s\n", threads_line.c_str());
  std::printf("tasks:    N = %ld per run (fan-out/fan-in: %ld rounds of 1 writer + %d readers + 1 "
              "join = %ld tasks)\n",
              params.tasks, fan_rounds(params), params.fan_width, fan_tasks(params));
  std::printf("repeats:  best of %d timed runs per cell, after untimed warm-up runs that grow to N\n"
              "          tasks or to a run of %.0f s (set-up included); cells with fewer tasks than "
              "N are marked *%s\n",
              options.repeats, kMaxRunSeconds,
              options.quick ? "\n          (--quick: the numbers mean nothing)" : "");
  std::fflush(stdout);
}

// One thread count in this process: every system in turn, then its tables and verdict.
Results run_one_count(const Options &options) {
  const Params &params = options.params;
  Results results = make_results(params.threads);
  if (options.list_part)
    std::printf("\n==== threads: %d in every system (a process of its own) ====\n", params.threads);
  else
    print_header_common(options, std::to_string(params.threads) + " in every system");
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
    results.workers[s] = system.start(params);
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
    if (results.capped(s))
      std::printf("%s: ran %d workers, not the %d asked (its line above says why)\n",
                  column_name(results, s).c_str(), results.workers[s], params.threads);
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
  std::fflush(stdout);
  return results;
}

// --- CSV: what a count of a list hands to its parent, and what --csv writes -------------------
//
// threads,system,workers,pattern,status,best_ns,median_ns,tasks_per_run,runs
// status: measured, "not run" (not selected) or "not built"; the numbers are empty unless
// measured; workers: what the system started (0 when it did not run).

constexpr const char *kCsvHeader =
    "threads,system,workers,pattern,status,best_ns,median_ns,tasks_per_run,runs\n";

void write_csv_rows(std::FILE *file, const Results &results) {
  for (int s = 0; s < kSystems; ++s)
    for (int p = 0; p < kPatterns; ++p) {
      const Measurement &m = results.cell[s][p];
      const char *status = m.measured                 ? "measured"
                           : results.systems[s].built ? "not run"
                                                      : "not built";
      std::fprintf(file, "%d,%s,%d,%s,%s,", results.threads, results.systems[s].name,
                   results.workers[s], pattern_key(all_patterns[p]), status);
      if (m.measured)
        std::fprintf(file, "%.6f,%.6f,%ld,%d\n", m.best_ns, m.median_ns, m.tasks, m.runs);
      else
        std::fprintf(file, ",,,\n");
    }
}

std::FILE *open_csv(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file) bad_option("--csv: cannot write '" + path + "': " + std::strerror(errno));
  std::fputs(kCsvHeader, file);
  return file;
}

void close_csv(std::FILE *file, const std::string &path) {
  if (std::ferror(file) | std::fclose(file)) {
    std::fprintf(stderr, "task_overhead: --csv: writing '%s' failed\n", path.c_str());
    std::exit(1);
  }
}

std::vector<std::string> split(const std::string &line, char separator) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, separator)) fields.push_back(field);
  if (!line.empty() && line.back() == separator) fields.emplace_back();
  return fields;
}

// Reads what a count of a list wrote; false (and why) when the file is not what it writes.
bool read_csv(const std::string &path, const Params &params, Results &results, std::string &why) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || line + "\n" != kCsvHeader) {
    why = "its results file has no CSV header";
    return false;
  }
  int rows = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line, ',');
    const int s = f.size() == 9 ? system_index(f[1]) : -1;
    const int p = f.size() == 9 ? pattern_index(f[3]) : -1;
    if (s < 0 || p < 0 || std::atoi(f[0].c_str()) != results.threads) {
      why = "its results file has a line that is not a result: " + line;
      return false;
    }
    results.workers[s] = std::atoi(f[2].c_str());
    Measurement &m = results.cell[s][p];
    m.measured = f[4] == "measured";
    if (m.measured) {
      m.best_ns = std::strtod(f[5].c_str(), nullptr);
      m.median_ns = std::strtod(f[6].c_str(), nullptr);
      m.tasks = std::atol(f[7].c_str());
      m.runs = std::atoi(f[8].c_str());
      // Fewer tasks than N per run: the cell is marked as in its own table.
      if (m.tasks < tasks_in_run(all_patterns[p], params)) m.reduced_tasks = m.tasks;
    }
    ++rows;
  }
  if (rows != kSystems * kPatterns) {
    why = "its results file has " + std::to_string(rows) + " results, not " +
          std::to_string(kSystems * kPatterns);
    return false;
  }
  return true;
}

// --- A list of thread counts: a process per count, then the scaling ---------------------------

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "it ended with exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("it was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "it ended abnormally";
}

// Runs this program for one count (--threads T --csv FILE --list-part and the caller's other
// options); its tables go straight to our stdout. False, with why, when it did not succeed.
bool run_count(const char *program, const Options &options, int threads, Results &results,
               std::string &why) {
  const char *tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/task_overhead-" +
                     std::to_string(threads) + "-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    why = "no results file could be made as " + path + ": " + std::strerror(errno);
    return false;
  }
  close(fd);

  std::vector<std::string> args = {program};
  args.insert(args.end(), options.passthrough.begin(), options.passthrough.end());
  args.insert(args.end(), {"--threads", std::to_string(threads), "--csv", path, "--list-part"});
  std::vector<char *> argv;
  for (std::string &arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
  bool ok = false;
  if (error != 0) {
    why = std::string("it could not start: ") + std::strerror(error);
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      ok = read_csv(path, options.params, results, why);
    else
      why = describe_status(status);
  }
  std::remove(path.c_str());
  return ok;
}

// Base of the scaling: 4 threads when measured, else the smallest count.
int base_count(const std::vector<int> &counts) {
  return std::find(counts.begin(), counts.end(), 4) != counts.end() ? 4 : counts.front();
}

// Top of the scaling target: 32 threads when measured, else the largest count.
int top_count(const std::vector<int> &counts) {
  return std::find(counts.begin(), counts.end(), 32) != counts.end() ? 32 : counts.back();
}

const Results *at_count(const std::vector<Results> &runs, int threads) {
  for (const Results &results : runs)
    if (results.threads == threads) return &results;
  return nullptr;
}

// A line of the scaling section: a label, then cells of 11 characters (the number and up to
// two marks); printed without trailing blanks.
struct Line {
  std::string text;
  explicit Line(const std::string &label) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%-26s", label.c_str());
    text = buffer;
  }
  void cell(const std::string &value, const std::string &marks = "") {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, " %9s%-2s", value.c_str(), marks.c_str());
    text += buffer;
  }
  void number(double value, const char *format, const std::string &marks = "") {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, format, value);
    cell(buffer, marks);
  }
  void print() {
    text.erase(text.find_last_not_of(' ') + 1);
    std::printf("%s\n", text.c_str());
  }
};

void print_scaling(const std::vector<Results> &runs, const std::vector<int> &counts) {
  const int base = base_count(counts);
  const Results *base_run = at_count(runs, base);
  std::printf(
      "\nScaling with the thread count: best ns per task at each count (the tables above)"
      "\nand, under it, the cost at N threads / the cost at %d (above 1: dearer with more"
      "\nthreads); marks: * fewer tasks per run than N, < fewer workers than threads\n",
      base);
  Line heading("threads");
  for (int count : counts) heading.number(count, "%.0f");
  heading.print();
  bool any_capped = false;
  for (int s = 0; s < kSystems; ++s) {
    const System &system = runs.front().systems[s];
    bool ran = false;
    for (const Results &results : runs)
      for (const Measurement &m : results.cell[s]) ran = ran || m.measured;
    if (!system.built) {
      std::printf("%-8s  not built\n", system.name);
      continue;
    }
    if (!ran) continue;
    Line workers(std::string(system.name) + " workers");
    for (const Results &results : runs) {
      if (results.workers[s] > 0)
        workers.number(results.workers[s], "%.0f", results.capped(s) ? "<" : "");
      else
        workers.cell("-");
      any_capped = any_capped || results.capped(s);
    }
    workers.print();
    for (int p = 0; p < kPatterns; ++p) {
      bool measured = false;
      for (const Results &results : runs) measured = measured || results.cell[s][p].measured;
      if (!measured) continue;
      const Measurement *base_cell = base_run ? &base_run->cell[s][p] : nullptr;
      char label[64];
      std::snprintf(label, sizeof label, "  %-16sns/task", pattern_name(all_patterns[p]));
      Line cost(label);
      Line scaling(std::string(18, ' ') + "scaling");
      for (const Results &results : runs) {
        const Measurement &m = results.cell[s][p];
        if (!m.measured) {
          cost.cell("-");
          scaling.cell("-");
          continue;
        }
        cost.number(m.best_ns, "%.1f",
                    std::string(m.reduced_tasks ? "*" : "") + (results.capped(s) ? "<" : ""));
        if (base_cell && base_cell->measured)
          // Three decimals where two would round a ratio to nothing.
          scaling.number(m.best_ns / base_cell->best_ns,
                         m.best_ns / base_cell->best_ns < 0.1 ? "%.3fx" : "%.2fx");
        else
          scaling.cell("-");
      }
      cost.print();
      scaling.print();
    }
  }
  if (any_capped)
    std::printf(
        "<: the system ran fewer workers than the threads asked (its workers line says "
        "how many; StarPU: the cap of its build)\n");
}

// Issue 20's targets for nanort, on the best-of-repeats numbers of every count up to 32.
void print_scaling_targets(const std::vector<Results> &runs, const std::vector<int> &counts) {
  constexpr int kUpTo = 32;
  constexpr int kTbb = 2;
  std::printf("\nIssue 20's targets (nanort, best-of-repeats numbers, every count up to %d):\n",
              kUpTo);
  if (counts.back() < kUpTo)
    std::printf("  (this run's counts go up to %d; the targets are set for up to %d threads)\n",
                counts.back(), kUpTo);
  auto verdict = [](const char *target, bool any, bool met, const std::string &numbers,
                    const std::string &unchecked) {
    if (!any)
      std::printf("  %-58s NOT CHECKED (%s)\n", target, unchecked.c_str());
    else
      std::printf("  %-58s %s (%s)\n", target, met ? "MET" : "NOT MET", numbers.c_str());
  };
  char buffer[128];

  // At most a given cost at every count.
  auto at_most = [&](Pattern pattern, double limit, const char *target) {
    const int p = static_cast<int>(pattern);
    std::string numbers;
    bool any = false, met = true;
    for (const Results &results : runs) {
      const Measurement &m = results.cell[kNanort][p];
      if (results.threads > kUpTo || !m.measured) continue;
      any = true;
      met = met && m.best_ns <= limit;
      std::snprintf(buffer, sizeof buffer, "%s%.1f at %d", numbers.empty() ? "ns: " : ", ",
                    m.best_ns, results.threads);
      numbers += buffer;
    }
    verdict(target, any, met, numbers, std::string(pattern_name(pattern)) + " not run");
  };
  at_most(Pattern::independent, 300, "independent at most 300 ns at every count:");
  at_most(Pattern::distinct, 300, "distinct-inout at most 300 ns at every count:");
  at_most(Pattern::chain, 400, "chain at most 400 ns at every count:");

  // Fan-out/fan-in at most oneTBB's flow graph at the same count.
  {
    const int p = static_cast<int>(Pattern::fan);
    std::string numbers;
    bool any = false, met = true, nanort_ran = false;
    for (const Results &results : runs) {
      const Measurement &m = results.cell[kNanort][p], &tbb = results.cell[kTbb][p];
      nanort_ran = nanort_ran || m.measured;
      if (results.threads > kUpTo || !m.measured || !tbb.measured) continue;
      any = true;
      met = met && m.best_ns <= tbb.best_ns;
      std::snprintf(buffer, sizeof buffer, "%s%.2fx at %d", numbers.empty() ? "" : ", ",
                    m.best_ns / tbb.best_ns, results.threads);
      numbers += buffer;
    }
    const System &tbb = runs.front().systems[kTbb];
    verdict("fan-out/fan-in at most oneTBB's flow graph at each count:", any, met,
            "nanort/tbb: " + numbers,
            !nanort_ran ? "fan-out/fan-in not run"
            : tbb.built ? "tbb's fan-out/fan-in not run"
                        : "tbb not built");
  }

  // No pattern dearer at the top count than 1.5 times its cost at the base.
  {
    const int base = base_count(counts), top = top_count(counts);
    std::snprintf(buffer, sizeof buffer,
                  "no pattern at %d threads above 1.5 x its cost at %d:", top, base);
    const std::string target = buffer;
    std::string numbers;
    bool any = false, met = true;
    const Results *low = at_count(runs, base), *high = at_count(runs, top);
    for (int p = 0; top > base && low && high && p < kPatterns; ++p) {
      const Measurement &a = low->cell[kNanort][p], &b = high->cell[kNanort][p];
      if (!a.measured || !b.measured) continue;
      any = true;
      met = met && b.best_ns <= 1.5 * a.best_ns;
      std::snprintf(buffer, sizeof buffer, "%s%s %.2fx", numbers.empty() ? "" : ", ",
                    pattern_name(all_patterns[p]), b.best_ns / a.best_ns);
      numbers += buffer;
    }
    verdict(target.c_str(), any, met, numbers,
            top > base ? "nanort not run" : "no count above " + std::to_string(base));
  }
}

int run_list(const char *program, const Options &options) {
  std::FILE *csv = options.csv.empty() ? nullptr : open_csv(options.csv);
  print_header_common(options, join_counts(options.thread_counts) +
                                   ": each count in a process of its own, one after another, "
                                   "every system at each");
  std::vector<Results> runs;
  for (int threads : options.thread_counts) {
    Results results = make_results(threads);
    std::string why;
    if (!run_count(program, options, threads, results, why)) {
      std::fprintf(stderr, "task_overhead: the run at %d thread%s: %s; no scaling is printed\n",
                   threads, threads == 1 ? "" : "s", why.c_str());
      if (csv) close_csv(csv, options.csv);
      return 1;
    }
    if (csv) write_csv_rows(csv, results);
    runs.push_back(results);
  }
  print_scaling(runs, options.thread_counts);
  print_scaling_targets(runs, options.thread_counts);
  if (csv) close_csv(csv, options.csv);
  return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char **argv) {
  using namespace bench;
  const Options options = parse_options(argc, argv);
  if (options.thread_counts.size() > 1) return run_list(argv[0], options);

  std::FILE *csv = options.csv.empty() ? nullptr : open_csv(options.csv);
  const Results results = run_one_count(options);
  if (csv) {
    write_csv_rows(csv, results);
    close_csv(csv, options.csv);
  }
  return 0;
}
