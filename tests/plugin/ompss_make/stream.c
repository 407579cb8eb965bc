/* An OmpSs program as written for mcc: function tasks on blocks, omp.h's routines, _OMPSS.
 * Its helpers (check.c, timer.c) are compiled with --no-openmp. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef _OMPSS
#error "mcc's --ompss defines _OMPSS"
#endif

#define N (1 << 16)
#define BS (1 << 12)

double now(void);                                              /* timer.c */
int count_errors(int n, const double *a, double expected);     /* check.c */

#pragma omp task out([bs]a, [bs]b, [bs]c)
void init(int bs, double *a, double *b, double *c) {
  for (int i = 0; i < bs; ++i) a[i] = 0, b[i] = 2, c[i] = sqrt(9.0);
}

#pragma omp task in([bs]b, [bs]c) out([bs]a)
void triad(int bs, double *a, const double *b, const double *c, double scalar) {
  for (int i = 0; i < bs; ++i) a[i] = b[i] + scalar * c[i];
}

int main(void) {
  static double a[N], b[N], c[N];
  double start = now();
  for (int i = 0; i < N; i += BS) init(BS, &a[i], &b[i], &c[i]);
  for (int i = 0; i < N; i += BS) triad(BS, &a[i], &b[i], &c[i], 4.0);
  #pragma omp taskwait
  double seconds = now() - start;
  int errors = count_errors(N, a, 2 + 4.0 * 3);
  const char *workers = getenv("NANORT_CPU_WORKERS");
  if (workers && omp_get_max_threads() != atoi(workers)) {
    printf("FAILED: %d threads, not %s\n", omp_get_max_threads(), workers);
    return 1;
  }
  if (errors || !(seconds >= 0)) {
    printf("FAILED: %d errors\n", errors);
    return 1;
  }
  printf("all results correct\n");
  return 0;
}
