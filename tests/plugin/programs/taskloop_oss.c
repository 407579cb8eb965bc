/* OmpSs-2 taskloops (#pragma oss): a 1-D stencil over two arrays, each step two taskloops whose
 * chunks depend on the elements i-1, i and i+1 of every iteration they cover (no taskwait
 * between them: the dependences order them, also against a plain task); the loop variable
 * declared before the loop; 'taskloop for'; a taskloop inside a task. An OmpSs-2 taskloop does
 * not wait for its tasks: the program waits with taskwait. Results are compared with the same
 * computation in order. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 512, STEPS = 4 };

static void stencil(double *a, double *b, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    #pragma oss taskloop grainsize(32) in(a[i - 1], a[i], a[i + 1]) out(b[i])
    for (int i = 1; i < n - 1; ++i) {
      if (i % 32 == 1) SLOW(); /* a missing dependence lets the next loop read old values */
      b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    }
    int i;
    #pragma oss taskloop num_tasks(5) in(b[i - 1], b[i], b[i + 1]) out(a[i])
    for (i = n - 2; i >= 1; i--)
      a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0 + 1.0;
  }
}

static void stencil_in_order(double *a, double *b, int n, int steps) {
  for (int s = 0; s < steps; ++s) {
    for (int i = 1; i < n - 1; ++i) b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    for (int i = n - 2; i >= 1; i--) a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0 + 1.0;
  }
}

int main(void) {
  double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
  double *ra = malloc(N * sizeof(double)), *rb = malloc(N * sizeof(double));
  for (int i = 0; i < N; ++i) a[i] = ra[i] = (i * 37) % 101, b[i] = rb[i] = 0.0;

  stencil(a, b, N, STEPS);
  /* A plain task after the taskloops, ordered by the same elements. */
  double total = 0.0;
  #pragma oss task in(a[0;N]) out(total)
  for (int i = 0; i < N; ++i) total += a[i];
  #pragma oss taskwait
  stencil_in_order(ra, rb, N, STEPS);
  double rtotal = 0.0;
  for (int i = 0; i < N; ++i) rtotal += ra[i];
  CHECK(memcmp(a, ra, N * sizeof(double)) == 0);
  CHECK(memcmp(b, rb, N * sizeof(double)) == 0);
  CHECK(total == rtotal);

  /* taskloop for: each chunk runs on one worker. */
  int *c = calloc(N, sizeof(int));
  #pragma oss taskloop for grainsize(64) inout(c[k])
  for (int k = 0; k < N; k += 2) c[k] += k;
  #pragma oss taskwait
  int c_ok = 1;
  for (int k = 0; k < N; ++k) c_ok &= c[k] == (k % 2 ? 0 : k);
  CHECK(c_ok);

  /* A taskloop inside a task, waited for inside it. */
  int sum = 0;
  #pragma oss task inout(sum) in(c[0;N])
  {
    int part[8] = {0};
    #pragma oss taskloop num_tasks(8) shared(part)
    for (int k = 0; k < 8; ++k)
      for (int m = k; m < N; m += 8) part[k] += c[m];
    #pragma oss taskwait
    for (int k = 0; k < 8; ++k) sum += part[k];
  }
  #pragma oss taskwait
  CHECK(sum == (N / 2) * (N - 2) / 2);

  free(a), free(b), free(ra), free(rb), free(c);
  CHECK_DONE();
}
