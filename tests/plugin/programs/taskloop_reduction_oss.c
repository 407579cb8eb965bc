/* Reductions on OmpSs-2 taskloops (#pragma oss): each task of the taskloop takes part in one
 * task reduction, which is combined before the next access to the variable (a task that
 * reads it) or at the taskwait; the taskloop itself does not wait. Sums, a maximum, a product,
 * a collapsed nest with dependences per iteration and a reduction, 'taskloop for', a function
 * that returns its result, two taskloops reducing into the same variable one after the
 * other, and a collapsed taskloop with a reduction inside a task. Each result is compared
 * with the same loop run in order. */
#include <limits.h>
#include <stdlib.h>

#include "check.h"

enum { N = 1200, R = 24, C = 50 };

static long dot(const int *a, const int *b, int n) {
  long d = 0;
  #pragma oss taskloop grainsize(100) reduction(+: d) in(a[i], b[i])
  for (int i = 0; i < n; ++i) d += (long)a[i] * b[i];
  #pragma oss taskwait
  return d;
}

int main(void) {
  int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) a[i] = (i * 37) % 101 - 50, b[i] = (i * 13) % 29 - 14;
  long rdot = 0;
  for (int i = 0; i < N; ++i) rdot += (long)a[i] * b[i];
  CHECK(dot(a, b, N) == rdot);

  /* The sum is combined before the task that reads it runs (no taskwait between). */
  long sum = 7, seen = 0;
  #pragma oss taskloop num_tasks(6) reduction(+: sum)
  for (int i = 0; i < N; ++i) {
    if (i % 200 == 0) SLOW();
    sum += a[i];
  }
  #pragma oss task in(sum) out(seen)
  seen = sum;
  #pragma oss taskwait
  long rsum = 7;
  for (int i = 0; i < N; ++i) rsum += a[i];
  CHECK(seen == rsum);
  CHECK(sum == rsum);

  /* A maximum and a product, then a second taskloop reducing into the same maximum. */
  int best = INT_MIN;
  unsigned long prod = 1;
  #pragma oss taskloop grainsize(64) reduction(max: best) reduction(*: prod)
  for (int i = 0; i < N; ++i) {
    best = a[i] * b[i] > best ? a[i] * b[i] : best;
    prod *= (unsigned long)(i % 7 + 1);
  }
  #pragma oss taskloop for num_tasks(4) reduction(max: best)
  for (int i = N - 1; i >= 0; i -= 2) best = a[i] + 1000 > best ? a[i] + 1000 : best;
  #pragma oss taskwait
  int rbest = INT_MIN;
  unsigned long rprod = 1;
  for (int i = 0; i < N; ++i) {
    rbest = a[i] * b[i] > rbest ? a[i] * b[i] : rbest;
    rprod *= (unsigned long)(i % 7 + 1);
  }
  for (int i = N - 1; i >= 0; i -= 2) rbest = a[i] + 1000 > rbest ? a[i] + 1000 : rbest;
  CHECK(best == rbest);
  CHECK(prod == rprod);

  /* A collapsed nest: each iteration writes its element of m (a dependence per iteration)
   * and adds to the trace; the next taskloop reads the rows that the first wrote. */
  int *m = malloc(R * C * sizeof(int)), *row = calloc(R, sizeof(int));
  long trace = 0;
  #pragma oss taskloop collapse(2) grainsize(40) out(m[i * C + j]) reduction(+: trace)
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) {
      if ((i * C + j) % 300 == 0) SLOW();
      m[i * C + j] = i * j - j;
      trace += i == j ? m[i * C + j] : 0;
    }
  #pragma oss taskloop grainsize(3) in(m[i * C;C]) out(row[i])
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) row[i] += m[i * C + j];
  #pragma oss taskwait
  long rtrace = 0;
  int rows_ok = 1;
  for (int i = 0; i < R; ++i) {
    int r = 0;
    for (int j = 0; j < C; ++j) {
      r += i * j - j;
      rtrace += i == j ? i * j - j : 0;
    }
    rows_ok &= row[i] == r;
  }
  CHECK(rows_ok);
  CHECK(trace == rtrace);

  /* A collapsed taskloop with a reduction inside a task, waited for inside it. */
  long inside = 0;
  int weight = 3;
  #pragma oss task inout(inside) in(a[0;N])
  {
    #pragma oss taskloop collapse(2) reduction(+: inside) in(a[x * 30 + y])
    for (int x = 0; x < 40; ++x)
      for (int y = 0; y < 30; ++y) inside += a[x * 30 + y] * weight;
    #pragma oss taskwait
  }
  #pragma oss taskwait
  long rinside = 0;
  for (int k = 0; k < 1200; ++k) rinside += a[k] * 3;
  CHECK(inside == rinside);

  free(a), free(b), free(m), free(row);
  CHECK_DONE();
}
