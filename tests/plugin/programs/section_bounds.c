/* Array sections and the off-by-one warnings (issue 19). Every section here is correct; one
 * (the forward difference's in(x[i:i+BS]), which reads BS+1 elements on purpose) has the
 * shape of a common mistake and is reported with a warning, which changes nothing: the
 * program builds and its results are those of the sequential computation. The tests also
 * build it with -Werror (that warning becomes an error) and -w (no output), and check that no
 * other section here is reported (tests/plugin/tests.cmake). */
#include <stdlib.h>

#include "check.h"

#define N 64
#define BS 16

static int v[N];

/* Forward differences of a block: d[i..i+BS-1] from x[i..i+BS], BS+1 elements. */
#pragma omp task in(x[i:i+BS]) out(d[i;BS])
static void diff_block(int i, const double *x, double *d) {
  SLOW();
  for (int k = i; k < i + BS; ++k) d[k] = x[k + 1] - x[k];
}

/* OmpSs-2's spelling, a length and an inclusive upper bound. */
#pragma oss task inout(y[i;BS]) in(x[i:i+BS-1])
static void axpy_block(int i, double a, const double *x, double *y) {
  SLOW();
  for (int k = i; k < i + BS; ++k) y[k] += a * x[k];
}

/* OpenMP's spelling: start and length. */
#pragma omp task depend(in: x[i:BS]) depend(inout: s[0:1])
static void sum_block(int i, const double *x, double *s) {
  for (int k = i; k < i + BS; ++k) s[0] += x[k];
}

/* A shaped pointer, its section the whole array. */
#pragma omp task inout(([n]p)[0:n-1])
static void twice(int n, int *p) {
  for (int k = 0; k < n; ++k) p[k] *= 2;
}

/* A task that returns: the caller's array lives on until the taskwait. */
static void fill_rows(int n, int (*m)[N]) {
  for (int r = 0; r < n; ++r) {
    #pragma omp task out(m[r:r][0:N-1]) firstprivate(r)
    for (int c = 0; c < N; ++c) m[r][c] = r * N + c;
  }
}

int main(void) {
  double *x = malloc((N + 1) * sizeof *x), *d = malloc(N * sizeof *d);
  double *y = malloc(N * sizeof *y), sum = 0;
  double ed[N], ey[N], esum = 0;
  int n = N / 2;
  int w[n], ew[N];
  int m[4][N];
  for (int k = 0; k <= N; ++k) x[k] = (double)(k * k % 17);
  for (int k = 0; k < N; ++k) y[k] = k, v[k] = k, ew[k] = 2 * k;
  for (int k = 0; k < n; ++k) w[k] = k;

  for (int i = 0; i < N; i += BS) diff_block(i, x, d);
  for (int i = 0; i < N; i += BS) axpy_block(i, 0.5, d, y);
  for (int i = 0; i < N; i += BS) sum_block(i, y, &sum);
  twice(N, v);
  #pragma omp task inout(v[0:N-1]) in(w[0:n-1])
  for (int k = 0; k < n; ++k) v[k] += w[k];
  #pragma omp taskwait on(v[0;N])
  fill_rows(4, m);
  #pragma omp taskwait

  for (int k = 0; k < N; ++k) ed[k] = x[k + 1] - x[k];
  for (int k = 0; k < N; ++k) ey[k] = k + 0.5 * ed[k], esum += ey[k];
  for (int k = 0; k < n; ++k) ew[k] += k;
  for (int k = 0; k < N; ++k) CHECK(d[k] == ed[k] && y[k] == ey[k] && v[k] == ew[k]);
  CHECK(sum == esum);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < N; ++c) CHECK(m[r][c] == r * N + c);
  free(x), free(d), free(y);
  CHECK_DONE();
}
