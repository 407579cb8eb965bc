// What every system of the task-overhead benchmark shares: the patterns, their parameters,
// the result checks and the clock. Kept free of OpenMP, TBB and StarPU headers so that each
// system's translation unit includes only its own runtime (the libgomp one is the only file
// compiled with -fopenmp).
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace bench {

enum class Pattern {
  independent,  // N tasks without dependences, then a wait
  chain,        // N tasks, each inout on one variable
  fan,          // rounds of: 1 writer, K readers of its output, 1 task joining the K outputs
  distinct,     // N tasks, each inout on an element of its own
};

inline constexpr Pattern all_patterns[] = {Pattern::independent, Pattern::chain, Pattern::fan,
                                           Pattern::distinct};

inline const char *pattern_name(Pattern pattern) {
  switch (pattern) {
    case Pattern::independent: return "independent";
    case Pattern::chain: return "chain";
    case Pattern::fan: return "fan-out/fan-in";
    case Pattern::distinct: return "distinct-inout";
  }
  return "?";
}

// Short names for the command line.
inline const char *pattern_key(Pattern pattern) {
  switch (pattern) {
    case Pattern::independent: return "independent";
    case Pattern::chain: return "chain";
    case Pattern::fan: return "fan";
    case Pattern::distinct: return "distinct";
  }
  return "?";
}

struct Params {
  long tasks = 0;      // N: tasks per run (fan rounds: tasks / (fan_width + 2))
  int threads = 0;     // threads running tasks, the submitting one included where it helps
  int fan_width = 8;   // K: readers per fan-out round
};

// Each value sits on a cache line of its own, so that tasks writing neighbouring values on
// different threads measure the runtimes, not false sharing.
struct alignas(64) Slot {
  long value = 0;
};

// Fan pattern, shared by every system so that all compute the same thing:
//   writer:  src += 1                       (out/inout src)
//   reader k: dst[k] = src                   (in src, out dst[k])
//   join:     acc += dst[0] + ... + dst[K-1] (in dst[*], inout acc)
inline long fan_rounds(const Params &params) { return params.tasks / (params.fan_width + 2); }
inline long fan_tasks(const Params &params) { return fan_rounds(params) * (params.fan_width + 2); }
inline long fan_expected_sum(const Params &params) {
  const long rounds = fan_rounds(params);
  return params.fan_width * rounds * (rounds + 1) / 2;
}

// A wrong result means the runtime broke a dependence (or the benchmark is wrong): the
// timings would be meaningless, so stop at once. abort() rather than exit(): a runtime in a
// bad state should not get to run its exit handlers.
inline void check(bool ok, const char *system, Pattern pattern, const char *what, long got,
                  long expected) {
  if (ok) return;
  std::fprintf(stderr,
               "task_overhead: WRONG RESULT from %s in pattern %s: %s is %ld, expected %ld\n",
               system, pattern_name(pattern), what, got, expected);
  std::abort();
}

// Checks that each of the n counters is exactly one (every independent task ran once).
template <class T>
void check_all_ones(const T *counters, long n, const char *system, Pattern pattern) {
  for (long i = 0; i < n; ++i)
    if (counters[i] != 1) check(false, system, pattern, "a task's counter", long(counters[i]), 1);
}

inline void fail(const char *system, const char *what) {
  std::fprintf(stderr, "task_overhead: %s: %s\n", system, what);
  std::abort();
}

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One system under test. run() executes one pattern once, checks its result and returns the
// seconds of the timed part: task creation up to the end of the wait (data registration that
// a system needs beforehand, like StarPU's handles, is left out and said so in the README).
struct System {
  const char *name;
  bool built;                                  // false: compiled out (library not found)
  int (*start)(const Params &);                // thread pools, runtime initialisation; returns
                                               // the workers really started (fewer than asked
                                               // where the system caps them, as StarPU does)
  double (*run)(Pattern, const Params &);      // returns seconds
  void (*stop)();
  const char *(*describe)();                   // one line of setup details for the header
};

System nanort_system();
System gomp_system();
System tbb_system();
System starpu_system();

}  // namespace bench
