/* OpenCL kernels as tasks: the OmpSs SAXPY, __local memory from shmem, a 2-D ndrange, a
 * CPU task reading a kernel's result, no_copy_deps with copy clauses (copy_in, copy_out,
 * copy_inout). Kernels in saxpy.cl. */
#include "check.h"

#pragma omp target device(opencl) ndrange(1, n, 128) copy_deps
#pragma omp task in([n]x) inout([n]y)
__kernel void saxpy(int n, float a, __global const float *x, __global float *y);

#pragma omp target device(opencl) ndrange(1, n, 64) shmem(64 * sizeof(float))
#pragma omp task inout(y[0;n])
__kernel void scale_local(int n, __global float *y, __local float *tmp);

#pragma omp target device(opencl) ndrange(2, rows, cols) no_copy_deps copy_inout([rows * cols]m)
#pragma omp task inout([rows][cols]m)
__kernel void add_block(__global float *m, int cols, float v, int rows);

#pragma omp target device(opencl) ndrange(1, n) no_copy_deps copy_in([n]x) copy_out(y[0;n])
#pragma omp task in([n]x) out([n]y)
__kernel void scaled_copy(int n, float a, __global const float *x, __global float *y);

#pragma omp task in([n]y) out(*sum)
static void total(int n, const float *y, double *sum) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += y[i];
  *sum = s;
}

int main(void) {
  enum { N = 1000 };
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = i;
    y[i] = 1;
  }
  saxpy(N, 2.0f, x, y);
  scale_local(N, y, 0);
  double sum = 0;
  total(N, y, &sum);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) CHECK(y[i] == 2 * (2.0f * i + 1));
  CHECK(sum == 2.0 * N * N);

  static float m[16 * 8];
  add_block(m, 8, 1.5f, 16);
  add_block(m, 8, 1.0f, 16);
  #pragma omp taskwait
  for (int i = 0; i < 16 * 8; ++i) CHECK(m[i] == 2.5f);

  static float z[N];
  scaled_copy(N, 3.0f, x, z);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) CHECK(z[i] == 3.0f * i);
  CHECK_DONE();
}
