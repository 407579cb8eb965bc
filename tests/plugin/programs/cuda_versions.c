/* A task with a CUDA version (implements): the smp task add and the kernel add_cuda of
 * kernels/cuda_kernels.cu in one site, the smp one first. The default scheduler runs the
 * first, so add's body always runs; with NANORT_SCHEDULER=dmda and NANORT_PERF_MODEL=off and
 * a GPU, the scheduler tries both (without a GPU only the smp one can run). The results are
 * the same either way. */
#include "check.h"

#include <nanort/nanort.h>
#include <stdlib.h>
#include <string.h>

static int add_smp_runs;

#pragma omp task in([n]x) inout([n]y)
void add(int n, const float *x, float *y) {
  for (int i = 0; i < n; ++i) y[i] += x[i];
  __atomic_add_fetch(&add_smp_runs, 1, __ATOMIC_RELAXED);
}

#pragma omp target device(cuda) ndrange(1, count, 32) name(add_cuda) implements(add)
#pragma omp task
__global__ void add_gpu(int count, const float *from, float *to);

int main(void) {
  enum { N = 1024, BLOCKS = 8, BLOCK = N / BLOCKS, ROUNDS = 16, CALLS = BLOCKS + ROUNDS };
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 3);
    y[i] = (float)i;
  }
  /* Independent tasks, one per block: the scheduler places each; then a chain. */
  for (int b = 0; b < BLOCKS; ++b)
    add(BLOCK, x + b * BLOCK, y + b * BLOCK);
  for (int r = 0; r < ROUNDS; ++r)
    add(N, x, y);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i)
    CHECK(y[i] == (float)i + (float)(1 + ROUNDS) * (float)(i % 3));

  int gpus = nanort_device_count(NANORT_DEVICE_CUDA);
  const char *scheduler = getenv("NANORT_SCHEDULER");
  printf("CUDA devices: %d; smp version ran %d of %d\n", gpus, add_smp_runs, CALLS);
  if (gpus > 0 && scheduler && strcmp(scheduler, "dmda") == 0)
    CHECK(add_smp_runs > 0 && add_smp_runs < CALLS);
  else
    CHECK(add_smp_runs == CALLS);
  CHECK_DONE();
}
