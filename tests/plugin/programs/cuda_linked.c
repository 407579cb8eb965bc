/* CUDA kernels from an object made by plain `nvcc -c` (tests/cuda/linked_kernels.cu), given to
 * nanocc as an object: no .cu file, the kernels are found in the object's image. A C++ kernel
 * (linked_scale) is declared here by its plain name. Where there is no CUDA device, the
 * program says so and exits with 77 (ctest: skipped). */
#include "check.h"

#include <nanort/nanort.h>

#pragma omp target device(cuda) ndrange(1, n, 128) copy_deps
#pragma omp task inout([n]x)
__global__ void linked_add(int *x, int v, int n);

#pragma omp target device(cuda) ndrange(1, n, 128) copy_deps
#pragma omp task inout([n]x)
__global__ void linked_scale(float *x, int n, float f);

int main(void) {
  if (nanort_device_count(NANORT_DEVICE_CUDA) == 0) {
    printf("SKIP: no CUDA device (no NVIDIA GPU or driver, or NANORT_CUDA_DEVICES=none)\n");
    return 77;
  }
  enum { N = 5000 };
  static int x[N];
  static float y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = i;
    y[i] = 0.5f;
  }
  linked_add(x, 7, N);
  linked_scale(y, N, 4.0f);
  linked_add(x, 1, N);
#pragma omp taskwait
  for (int i = 0; i < N; ++i) {
    CHECK(x[i] == i + 8);
    CHECK(y[i] == 2.0f);
  }
  printf("all results correct\n");
  return 0;
}
