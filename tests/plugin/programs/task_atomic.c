/* A task whose statement is an atomic or a critical construct (issue 19), in the style of
 * OmpSs programs: '#pragma omp task shared(v) concurrent(res)' then '#pragma omp atomic' on
 * 'res += v[i];'. Compared with the sequential sums. */
#include <stdlib.h>

#include "check.h"

/* In a function that returns without waiting: the pointers are the tasks' own copies. */
static void sums(int n, const int *v, int *res, long *total, double *scaled) {
  for (int i = 0; i < n; ++i) {
    #pragma omp task concurrent(*res)
    #pragma omp atomic
    *res += v[i];

    #pragma oss task
    #pragma oss critical
    *total += 3L * v[i];

    #pragma omp task firstprivate(i, scaled)
    #pragma omp critical(scale)
    {
      *scaled += v[i] * 0.5;
    }
  }
}

int main(void) {
  int n = 300, res = 0;
  long total = 0;
  double scaled = 0;
  int *v = malloc(n * sizeof *v);
  for (int i = 0; i < n; ++i)
    v[i] = (i * 7) % 13 - 4;
  /* As Mercurium's tests write it: an array and a result of main, shared. */
  int w[50], sum_local = 0, count = 0;
  for (int i = 0; i < 50; ++i)
    w[i] = i - 20;
  for (int i = 0; i < 50; ++i) {
    #pragma omp task shared(w) concurrent(sum_local)
    #pragma omp atomic
    sum_local += w[i];
    #pragma oss task shared(count)
    #pragma oss atomic
    count++;
  }
  sums(n, v, &res, &total, &scaled);
  #pragma omp taskwait
  int expect = 0;
  long expect_total = 0;
  double expect_scaled = 0;
  for (int i = 0; i < n; ++i) {
    expect += v[i];
    expect_total += 3L * v[i];
    expect_scaled += v[i] * 0.5;
  }
  CHECK(res == expect);
  CHECK(total == expect_total);
  CHECK(scaled == expect_scaled);
  CHECK(sum_local == 50 * 49 / 2 - 50 * 20);
  CHECK(count == 50);
  free(v);
  CHECK_DONE();
}
