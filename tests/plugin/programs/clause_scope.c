/* Clause expressions are evaluated at each call, with the parameters bound to the call's
 * arguments; the other names in them are those visible where the task is called, here
 * declared after the task's declaration or definition. */
#include "check.h"

/* The kernel reverses each block of LOCAL_SIZE elements of y (kernels/header_kernels.cl). */
#pragma omp target device(opencl) ndrange(1, n, LOCAL_SIZE) \
    shmem(LOCAL_SIZE * sizeof(float)) file(kernels/header_kernels.cl)
#pragma omp task inout(y[0;n])
__kernel void reverse_blocks(int n, __global float *y, __local float *tile);

#pragma omp task inout([block_size]x)
static void bump(float *x, int n) {
  SLOW();
  for (int i = 0; i < n; ++i) x[i] += 1;
}

#pragma omp task in([block_size]x) out(*sum)
static void sum_block(const float *x, int n, float *sum) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += x[i];
  *sum = s;
}

/* Declared after the tasks, before their calls. */
static const int LOCAL_SIZE = 32;
static int block_size = 64;

int main(void) {
  static float y[256];
  for (int i = 0; i < 256; ++i) y[i] = i;
  reverse_blocks(256, y, 0);
  #pragma omp taskwait
  for (int i = 0; i < 256; ++i) CHECK(y[i] == i / 32 * 32 + (31 - i % 32));

  float x[64] = {0}, sum = -1;
  bump(x, 64);
  sum_block(x, 64, &sum); /* after bump: both name x[0..block_size) */
  #pragma omp taskwait
  CHECK(sum == 64);
  CHECK_DONE();
}
