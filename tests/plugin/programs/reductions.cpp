// Task reductions in C++ (issue 19): a function template whose element type is a template
// parameter, a function task reducing through a reference, a shaped pointer into a
// std::vector, a user-defined reduction with a member-function combiner, an OpenMP taskgroup
// in a function that returns; each result compared with the sequential computation.
#include <climits>
#include <cstdio>
#include <vector>

static int failures;
static void check(bool ok, const char *what, long long got, long long expected) {
  if (!ok) {
    std::printf("FAILED: %s: %lld, expected %lld\n", what, got, expected);
    ++failures;
  }
}

template <class T> T total(const std::vector<T> &v, std::size_t chunk) {
  T sum = T();
  const T *data = v.data();
  for (std::size_t c = 0; c < v.size(); c += chunk) {
    std::size_t len = c + chunk <= v.size() ? chunk : v.size() - c;
    #pragma oss task reduction(+: sum) in(data[c;len])
    for (std::size_t i = c; i < c + len; ++i)
      sum += data[i];
  }
  #pragma oss taskwait
  return sum;
}

#pragma oss task reduction(+: total) in([n]data)
void add_up(const int *data, int n, long &total) {
  for (int i = 0; i < n; ++i)
    total += data[i];
}

// A member function task: its argument block is a local class.
struct Adder {
  int scale = 1;
  #pragma oss task reduction(+: [1]total) in([n]data)
  void add(const int *data, int n, long *total) const {
    for (int i = 0; i < n; ++i)
      *total += scale * data[i];
  }
};

struct Range {
  int lo = INT_MAX, hi = INT_MIN;
  void merge(const Range &o) {
    if (o.lo < lo) lo = o.lo;
    if (o.hi > hi) hi = o.hi;
  }
};
#pragma omp declare reduction(merge : Range : omp_out.merge(omp_in)) initializer(omp_priv = Range())

static long grouped(const std::vector<int> &v) {
  long sum = 0;
  const int *data = v.data();
  int n = (int)v.size();
  #pragma omp taskgroup task_reduction(+: sum)
  {
    for (int c = 0; c < n; c += 500) {
      #pragma omp task in_reduction(+: sum) firstprivate(c) shared(sum)
      for (int i = c; i < c + 500 && i < n; ++i)
        sum += data[i];
    }
  }
  return sum;
}

int main() {
  const int n = 20000;
  std::vector<int> v(n);
  unsigned seed = 99;
  for (int &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = (int)(seed >> 20) % 500 - 100;
  }
  long s_sum = 0;
  int s_lo = INT_MAX, s_hi = INT_MIN;
  for (int x : v) {
    s_sum += x;
    if (x < s_lo) s_lo = x;
    if (x > s_hi) s_hi = x;
  }

  long t = total(v, 700);
  check(t == s_sum, "template sum (int)", t, s_sum);
  std::vector<double> dv(v.begin(), v.end());
  double dt = total(dv, 333);
  check(dt == (double)s_sum, "template sum (double)", (long long)dt, s_sum);

  long by_ref = 7;
  for (int c = 0; c < n; c += 1000)
    add_up(v.data() + c, 1000, by_ref);
  #pragma oss taskwait
  check(by_ref == s_sum + 7, "function task through a reference", by_ref, s_sum + 7);

  Adder adder;
  adder.scale = 2;
  long twice = 0;
  for (int c = 0; c < n; c += 1000)
    adder.add(v.data() + c, 1000, &twice);
  #pragma oss taskwait
  check(twice == 2 * s_sum, "member function task", twice, 2 * s_sum);

  std::vector<long> hist(10, 0);
  long *h = hist.data();
  for (int c = 0; c < n; c += 1000) {
    #pragma oss task reduction(+: [10]h) firstprivate(c)
    for (int i = c; i < c + 1000; ++i)
      h[(v[i] + 100) % 10]++;
  }
  Range r;
  for (int c = 0; c < n; c += 1000) {
    #pragma oss task reduction(merge: r) firstprivate(c)
    for (int i = c; i < c + 1000; ++i)
      r.merge(Range{v[i], v[i]});
  }
  #pragma oss taskwait
  std::vector<long> s_hist(10, 0);
  for (int x : v) s_hist[(x + 100) % 10]++;
  for (int b = 0; b < 10; ++b)
    check(hist[b] == s_hist[b], "histogram bin", hist[b], s_hist[b]);
  check(r.lo == s_lo && r.hi == s_hi, "merged range low", r.lo, s_lo);

  long g = grouped(v);
  check(g == s_sum, "taskgroup", g, s_sum);

  if (failures)
    return 1;
  std::printf("all results correct\n");
  return 0;
}
