// libgomp: the same patterns as OpenMP tasks with depend clauses. The only file of the
// benchmark compiled with -fopenmp (see CMakeLists.txt).
//
// One thread of the team creates every task inside `single`, the others run them; the creator
// runs tasks too at the taskwait (and whenever libgomp throttles creation).
#include <omp.h>

#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench {
namespace {

constexpr const char *kName = "libgomp";

double run_independent(const Params &params) {
  const long n = params.tasks;
  std::vector<unsigned char> marks_storage(static_cast<std::size_t>(n), 0);
  unsigned char *marks = marks_storage.data();
  const auto start = Clock::now();
#pragma omp parallel num_threads(params.threads) default(none) shared(marks, n)
#pragma omp single
  {
    for (long i = 0; i < n; ++i) {
#pragma omp task default(none) firstprivate(i) shared(marks)
      ++marks[i];
    }
#pragma omp taskwait
  }
  const double seconds = seconds_since(start);
  check_all_ones(marks, n, kName, Pattern::independent);
  return seconds;
}

double run_chain(const Params &params) {
  const long n = params.tasks;
  Slot counter;
  long &value = counter.value;
  const auto start = Clock::now();
#pragma omp parallel num_threads(params.threads) default(none) shared(value, n)
#pragma omp single
  {
    for (long i = 0; i < n; ++i) {
#pragma omp task default(none) shared(value) depend(inout : value)
      ++value;
    }
#pragma omp taskwait
  }
  const double seconds = seconds_since(start);
  check(value == n, kName, Pattern::chain, "the counter", value, n);
  return seconds;
}

double run_fan(const Params &params) {
  const int width = params.fan_width;
  const long rounds = fan_rounds(params);
  Slot src_slot, acc_slot;
  long &src = src_slot.value;
  long &acc = acc_slot.value;
  std::vector<Slot> dst_storage(static_cast<std::size_t>(width));
  Slot *dst = dst_storage.data();
  const auto start = Clock::now();
#pragma omp parallel num_threads(params.threads) default(none) \
    shared(src, acc, dst, width, rounds)
#pragma omp single
  {
    for (long r = 0; r < rounds; ++r) {
#pragma omp task default(none) shared(src) depend(inout : src)
      ++src;
      for (int k = 0; k < width; ++k) {
#pragma omp task default(none) shared(src, dst) firstprivate(k) \
    depend(in : src) depend(out : dst[k].value)
        dst[k].value = src;
      }
      // One dependence per reader output: an array section in depend() would only name its
      // first address in libgomp, so the OpenMP 5.0 iterator spells out all K of them.
#pragma omp task default(none) shared(dst, acc) firstprivate(width) \
    depend(iterator(j = 0 : width), in : dst[j].value) depend(inout : acc)
      {
        long sum = 0;
        for (int k = 0; k < width; ++k) sum += dst[k].value;
        acc += sum;
      }
    }
#pragma omp taskwait
  }
  const double seconds = seconds_since(start);
  check(acc == fan_expected_sum(params), kName, Pattern::fan, "the joined sum", acc,
        fan_expected_sum(params));
  return seconds;
}

double run_distinct(const Params &params) {
  const long n = params.tasks;
  std::vector<long> values_storage(static_cast<std::size_t>(n), 0);
  long *values = values_storage.data();
  const auto start = Clock::now();
#pragma omp parallel num_threads(params.threads) default(none) shared(values, n)
#pragma omp single
  {
    for (long i = 0; i < n; ++i) {
#pragma omp task default(none) firstprivate(i) shared(values) depend(inout : values[i])
      ++values[i];
    }
#pragma omp taskwait
  }
  const double seconds = seconds_since(start);
  check_all_ones(values, n, kName, Pattern::distinct);
  return seconds;
}

std::string description;

int start(const Params &params) {
  // A fixed team size: dynamic adjustment would change the thread count under us.
  omp_set_dynamic(0);
  int team = 0;
#pragma omp parallel num_threads(params.threads) default(none) shared(team)
#pragma omp single
  team = omp_get_num_threads();
  if (team != params.threads) fail(kName, "the OpenMP team does not have the threads asked for");
  description = "libgomp (OpenMP " + std::to_string(_OPENMP) + "): team of " +
                std::to_string(team) + " threads, tasks created in `single`, wait policy " +
                (std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "default");
  return team;
}

double run(Pattern pattern, const Params &params) {
  switch (pattern) {
    case Pattern::independent: return run_independent(params);
    case Pattern::chain: return run_chain(params);
    case Pattern::fan: return run_fan(params);
    case Pattern::distinct: return run_distinct(params);
  }
  return 0;
}

void stop() {}

const char *describe() { return description.c_str(); }

}  // namespace

System gomp_system() { return {kName, true, &start, &run, &stop, &describe}; }

}  // namespace bench
