/* Reductions on OpenMP / OmpSs-1 taskloops (#pragma omp): the taskloop's implicit group is the
 * reduction's scope, so the result is in the variable when the taskloop ends. Sums, a maximum,
 * a product, two clauses on one taskloop, a whole array, a declared reduction on a struct,
 * 'taskloop simd', an empty loop (the variable keeps its value), a collapsed nest,
 * in_reduction taskloops (with nogroup) and a task joining an enclosing taskgroup's
 * task_reduction, and a taskloop with a reduction inside a task. Each result is compared with
 * the same loop run in order. */
#include <limits.h>
#include <stdlib.h>

#include "check.h"

enum { N = 1000, BINS = 16, R = 37, C = 23 };

struct span {
  int lo, hi;
};
static struct span widen(struct span a, struct span b) {
  struct span r = {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  return r;
}
#pragma omp declare reduction(merge : struct span : omp_out = widen(omp_out, omp_in)) \
    initializer(omp_priv = {INT_MAX, INT_MIN})

/* A function that returns the result of its taskloop. */
static long sum_of(const int *v, int n) {
  long sum = 100; /* the original value takes part */
  #pragma omp taskloop grainsize(16) reduction(+: sum)
  for (int i = 0; i < n; ++i) {
    if (i % 250 == 0) SLOW(); /* a missing wait reads the sum too early */
    sum += v[i];
  }
  return sum;
}

static int max_of(const int *v, int n) {
  int best = INT_MIN;
  #pragma omp taskloop num_tasks(7) reduction(max: best)
  for (int i = n - 1; i >= 0; --i)
    best = v[i] > best ? v[i] : best;
  return best;
}

int main(void) {
  int *v = malloc(N * sizeof(int));
  double *f = malloc(N * sizeof(double));
  for (int i = 0; i < N; ++i) {
    v[i] = (i * 7919) % 1009 - 300;
    f[i] = 1.0 + ((i % 5) - 2) * 0.0001;
  }
  long rsum = 100;
  int rmax = INT_MIN;
  double rprod = 1.0;
  for (int i = 0; i < N; ++i) {
    rsum += v[i];
    rmax = v[i] > rmax ? v[i] : rmax;
    rprod *= f[i];
  }

  CHECK(sum_of(v, N) == rsum);
  CHECK(max_of(v, N) == rmax);

  /* A product of doubles, in order within each chunk: compared with a tolerance. */
  double prod = 1.0;
  #pragma omp taskloop reduction(*: prod)
  for (int i = 0; i < N; ++i) prod *= f[i];
  CHECK(prod > rprod * (1 - 1e-12) && prod < rprod * (1 + 1e-12));

  /* Two clauses, and a whole array. */
  long s = 0;
  int m = INT_MIN;
  int hist[BINS] = {0}, rhist[BINS] = {0};
  #pragma omp taskloop grainsize(50) reduction(+: s, hist) reduction(max: m)
  for (int i = 0; i < N; i += 3) {
    s += v[i];
    m = v[i] > m ? v[i] : m;
    hist[(v[i] + 300) % BINS]++;
  }
  long rs = 0;
  int rm = INT_MIN;
  for (int i = 0; i < N; i += 3) {
    rs += v[i];
    rm = v[i] > rm ? v[i] : rm;
    rhist[(v[i] + 300) % BINS]++;
  }
  CHECK(s == rs);
  CHECK(m == rm);
  int hist_ok = 1;
  for (int b = 0; b < BINS; ++b) hist_ok &= hist[b] == rhist[b];
  CHECK(hist_ok);

  /* A declared reduction. */
  struct span range = {INT_MAX, INT_MIN};
  #pragma omp taskloop num_tasks(9) reduction(merge: range)
  for (int i = 0; i < N; ++i) {
    struct span one = {v[i], v[i]};
    range = widen(range, one);
  }
  int lo = INT_MAX, hi = INT_MIN;
  for (int i = 0; i < N; ++i) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  CHECK(range.lo == lo && range.hi == hi);

  /* taskloop simd; an empty loop leaves the variable as it was. */
  long t = 0;
  #pragma omp taskloop simd grainsize(100) reduction(+: t)
  for (int i = 0; i < N; ++i) t += 2 * v[i];
  CHECK(t == 2 * (rsum - 100));
  long untouched = 42;
  int none = 0;
  #pragma omp taskloop reduction(+: untouched)
  for (int i = 0; i < none; ++i) untouched += 1000;
  CHECK(untouched == 42);

  /* A collapsed nest: the sum of a matrix. */
  long *mat = malloc(R * C * sizeof(long));
  for (int i = 0; i < R * C; ++i) mat[i] = (i * 31) % 97;
  long total = 0, rtotal = 0;
  #pragma omp taskloop collapse(2) grainsize(10) reduction(+: total)
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) total += mat[i * C + j] * (i + 1);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) rtotal += mat[i * C + j] * (i + 1);
  CHECK(total == rtotal);

  /* in_reduction: the taskloops' tasks and a task join the taskgroup's reduction. */
  long g = 5;
  #pragma omp taskgroup task_reduction(+: g)
  {
    #pragma omp taskloop grainsize(64) in_reduction(+: g) nogroup
    for (int i = 0; i < N; ++i) g += v[i];
    #pragma omp taskloop num_tasks(3) in_reduction(+: g)
    for (int i = 0; i < 10; ++i) g += i;
    #pragma omp task in_reduction(+: g)
    g += 1000;
  }
  CHECK(g == 5 + (rsum - 100) + 45 + 1000);

  /* A taskloop with a reduction inside a task: the variable is the task's shared one. */
  long inner = 1;
  int offset = 5;
  #pragma omp task shared(inner) firstprivate(offset)
  {
    #pragma omp taskloop grainsize(7) reduction(+: inner)
    for (int i = 0; i < 100; ++i) inner += v[i] + offset;
    inner *= 2; /* after the taskloop's group: the sum is there */
  }
  #pragma omp taskwait
  long rinner = 1;
  for (int i = 0; i < 100; ++i) rinner += v[i] + 5;
  CHECK(inner == 2 * rinner);

  free(v), free(f), free(mat);
  CHECK_DONE();
}
