/* CUDA kernels as tasks, declared in C host code (kernels in kernels/cuda_kernels.cu, which
 * nanocc compiles with nvcc and embeds): the OmpSs SAXPY, dynamic shared memory from shmem, a
 * 2-D ndrange, a CPU task reading a kernel's result. Where there is no CUDA device, the
 * program says so and exits with 77 (ctest: skipped). */
#include "check.h"

#include <nanort/nanort.h>

#pragma omp target device(cuda) ndrange(1, n, 128) copy_deps
#pragma omp task in([n]x) inout([n]y)
__global__ void saxpy(int n, float a, const float *x, float *y);

#pragma omp target device(cuda) ndrange(1, n, 64) shmem(64 * sizeof(float))
#pragma omp task inout(y[0;n])
__global__ void reverse_blocks(int n, float *y);

/* Without __global__: C code that only declares the kernel. */
#pragma omp target device(cuda) ndrange(2, cols, rows, 8, 4)
#pragma omp task inout([rows][cols]m)
void add_block(float *m, int cols, float v, int rows);

#pragma omp task in([n]y) out(*sum)
static void total(int n, const float *y, double *sum) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += y[i];
  *sum = s;
}

int main(void) {
  if (nanort_device_count(NANORT_DEVICE_CUDA) == 0) {
    printf("SKIP: no CUDA device (no NVIDIA GPU or driver, or NANORT_CUDA_DEVICES=none)\n");
    return 77;
  }
  enum { N = 1024 };
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = i;
    y[i] = 1;
  }
  saxpy(N, 2.0f, x, y);
  reverse_blocks(N, y);
  double sum = 0;
  total(N, y, &sum);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) {
    int j = i / 64 * 64 + (63 - i % 64);
    CHECK(y[i] == 2.0f * j + 1);
  }
  CHECK(sum == (double)N * (N - 1) + N);

  static float m[16 * 24];
  add_block(m, 24, 1.5f, 16);
  add_block(m, 24, 1.0f, 16);
  #pragma omp taskwait
  for (int i = 0; i < 16 * 24; ++i) CHECK(m[i] == 2.5f);
  CHECK_DONE();
}
