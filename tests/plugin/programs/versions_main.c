/* Tasks with versions (implements): an smp task and an OpenCL version of it, in one site.
 * scale comes from versions.h (defined in versions_task.c); axpy is defined here and its
 * OpenCL version is declared after main, with other parameter names and no data clauses
 * (axpy's apply). Run with the default scheduler, every task runs its first implementation
 * (the smp one); with NANORT_SCHEDULER=dmda and NANORT_PERF_MODEL=off, the scheduler tries
 * each version before it knows their times, so both run, on the same data. */
#include "check.h"
#include "versions.h"

#include <stdlib.h>
#include <string.h>

static int axpy_smp_runs;

#pragma omp task in([n]x) inout([n]y)
void axpy(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
  __atomic_add_fetch(&axpy_smp_runs, 1, __ATOMIC_RELAXED);
}

int main(void) {
  enum { N = 1024, BLOCKS = 8, BLOCK = N / BLOCKS, ROUNDS = 16, CALLS = BLOCKS + ROUNDS };
  static float x[N], y[N], expected[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 7);
    y[i] = expected[i] = (float)i;
  }
  /* Independent tasks, one per block: the scheduler places each. Then a chain on the whole
   * array, in which the data moves between the versions. Exact in float whichever version
   * runs: products of small integers, powers of two. */
  for (int b = 0; b < BLOCKS; ++b)
    scale(BLOCK, y + b * BLOCK, 2.0f);
  for (int b = 0; b < BLOCKS; ++b)
    axpy(BLOCK, 1.0f, x + b * BLOCK, y + b * BLOCK);
  for (int i = 0; i < N; ++i)
    expected[i] = expected[i] * 2.0f + x[i];
  for (int r = 0; r < ROUNDS; ++r) {
    float factor = r % 2 ? 2.0f : 0.5f;
    scale(N, y, factor);
    axpy(N, 2.0f, x, y);
    for (int i = 0; i < N; ++i)
      expected[i] = expected[i] * factor + 2.0f * x[i];
  }
  #pragma omp taskwait
  for (int i = 0; i < N; ++i)
    CHECK(y[i] == expected[i]);

  const char *scheduler = getenv("NANORT_SCHEDULER");
  if (scheduler && strcmp(scheduler, "dmda") == 0) {
    printf("smp versions ran: scale %d of %d, axpy %d of %d\n", scale_smp_runs, CALLS,
           axpy_smp_runs, CALLS);
    CHECK(scale_smp_runs > 0 && scale_smp_runs < CALLS);
    CHECK(axpy_smp_runs > 0 && axpy_smp_runs < CALLS);
  } else {
    CHECK(scale_smp_runs == CALLS && axpy_smp_runs == CALLS);
  }
  CHECK_DONE();
}

#pragma omp target device(opencl) ndrange(1, len, 16) file(kernels/versions.cl) implements(axpy)
#pragma omp task
__kernel void axpy_cl(int len, float alpha, __global const float *src, __global float *dst);
