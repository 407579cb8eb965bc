/* Single-source OpenCL: kernels defined in the host file after their target and task
 * pragmas. Their text (OpenCL C: get_global_id, __local, barrier, directives of its own) is
 * the translation unit's OpenCL program; host code keeps their declarations, and every call
 * is a task. name(...) still picks the kernel's name. */
#include "check.h"

#pragma omp target device(opencl) ndrange(1, n, 64) copy_deps
#pragma omp task in([n]x) inout([n]y)
__kernel void axpy(int n, float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}

static int host_helper(int v) { return v + 1; } /* host code between kernels stays host code */

#pragma oss target device(opencl) ndrange(1, n, 32) shmem(32 * sizeof(float))
#pragma oss task inout([n]y)
__kernel void reverse_blocks(int n, __global float *y, __local float *tmp) {
#define BLOCK 32 /* an OpenCL macro: the host never sees it */
  int i = get_global_id(0), l = get_local_id(0);
  int base = i - l;
  if (i < n) tmp[l] = y[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n && base + BLOCK <= n) y[i] = tmp[BLOCK - 1 - l];
}

#pragma omp target device(opencl) ndrange(2, rows, cols) name(fill)
#pragma omp task out([rows * cols]m)
__kernel void fill(__global int *m, int rows, int cols) {
  m[get_global_id(0) * cols + get_global_id(1)] = (int)(get_global_id(0) * 100 + get_global_id(1));
}

int main(void) {
  enum { N = 256 };
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = i;
    y[i] = 1;
  }
  axpy(N, 2.0f, x, y);    /* y = 2i + 1 */
  reverse_blocks(N, y, 0);
  static int m[8 * 4];
  fill(m, 8, 4);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) {
    int j = (i / 32) * 32 + 31 - i % 32;
    CHECK(y[i] == 2.0f * j + 1);
  }
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 4; ++c) CHECK(m[r * 4 + c] == r * 100 + c);
  CHECK(host_helper(1) == 2);
  CHECK_DONE();
}
