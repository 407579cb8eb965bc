// CUDA kernels as tasks from C++ host code (nanocxx): a '__global__' kernel declaration, a
// kernel with a C++ smp version (device(cuda, smp)) that calls a '__host__ __device__'
// function (the plugin defines CUDA's specifiers away in host code). The kernels are in
// kernels/cuda_kernels.cu. Without a CUDA device the smp version runs and the
// CUDA-only task is not called.
#include "check.h"

#include <nanort/nanort.h>

#include <vector>

__host__ __device__ inline float twice(float v) { return 2.0f * v; }

#pragma omp target device(cuda) ndrange(1, n, 128)
#pragma omp task in([n]x) inout([n]y)
__global__ void saxpy(int n, float a, const float *x, float *y);

#pragma omp target device(cuda, smp) ndrange(1, n) name(square)
#pragma omp task inout([n]y)
void square_twice(int n, float *y) {
  for (int i = 0; i < n; ++i) y[i] = twice(y[i] * y[i]) / 2.0f;
}

int main() {
  const int n = 500;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = i;
    y[i] = 3;
  }
  bool gpu = nanort_device_count(NANORT_DEVICE_CUDA) > 0;
  if (gpu)
    saxpy(n, 2.0f, x.data(), y.data());
  square_twice(n, y.data());
  #pragma omp taskwait
  for (int i = 0; i < n; ++i) {
    float v = gpu ? 2.0f * i + 3 : 3.0f;
    CHECK(y[i] == v * v);
  }
  if (!gpu)
    printf("no CUDA device: the smp version ran, saxpy was not called\n");
  CHECK_DONE();
}
