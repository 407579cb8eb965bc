/* taskiter on an OpenCL device, as OmpSs programs write it: the kernel declared with its
 * pragmas and written in a .cl file, malloc'd grids swapped after every step, each step a
 * kernel task per block of the grid. Recorded once and replayed: with unroll(2) and an odd
 * number of steps (the last one run as written), and with update, where every step adds its
 * own source (each replay's kernels given new values). Each result is compared with the same
 * loop run in order on the CPU. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 1024, BLOCK = 128 };

#pragma oss target device(opencl) ndrange(1, BLOCK, 64) copy_deps
#pragma oss task in(a[0;n]) out(b[0;BLOCK])
__kernel void smooth(int n, int lo, int q, __global const int *a, __global int *b);

static int source(int step) { return 3 * (step % 5) + 1; }

static void smooth_ref(const int *a, int *b, int n, int q) {
  for (int i = 0; i < n; ++i) {
    int v = (i == 0 || i == n - 1) ? a[i] : (a[i - 1] + 2 * a[i] + a[i + 1]) / 4;
    b[i] = i == n / 2 ? v + q : v;
  }
}

static void init(int *x) {
  for (int i = 0; i < N; ++i) x[i] = (i * 37) % 1000;
}

/* The loop run in order on the CPU; 'vary': each step's own source, else 5. */
static int *reference(int steps, int vary) {
  int *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  init(a);
  for (int s = 0; s < steps; ++s) {
    smooth_ref(a, b, N, vary ? source(s) : 5);
    int *t = a;
    a = b;
    b = t;
  }
  free(b);
  return a;
}

static int *steady(int steps) {
  int *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  init(a);
  #pragma oss taskiter unroll(2)
  for (int s = 0; s < steps; ++s) {
    for (int lo = 0; lo < N; lo += BLOCK) smooth(N, lo, 5, a, b + lo);
    int *t = a;
    a = b;
    b = t;
  }
  #pragma oss taskwait
  free(b);
  return a;
}

static int *with_sources(int steps) {
  int *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  init(a);
  #pragma oss taskiter unroll(2) update
  for (int s = 0; s < steps; ++s) {
    int q = source(s);
    for (int lo = 0; lo < N; lo += BLOCK) smooth(N, lo, q, a, b + lo);
    int *t = a;
    a = b;
    b = t;
  }
  #pragma oss taskwait
  free(b);
  return a;
}

int main(void) {
  for (int steps = 1; steps <= 41; steps += 20) {
    int *got = steady(steps), *want = reference(steps, 0);
    CHECK(memcmp(got, want, N * sizeof *got) == 0);
    free(got);
    free(want);
    got = with_sources(steps);
    want = reference(steps, 1);
    CHECK(memcmp(got, want, N * sizeof *got) == 0);
    free(got);
    free(want);
  }
  CHECK_DONE();
}
