/* Tasks with a CUDA and an smp implementation (device(cuda, smp)): the runtime takes the first
 * listed that has a device, so without a GPU the smp bodies run; with one, the kernels of
 * kernels/cuda_kernels.cu. The results are the same either way. Also device(smp, cuda) (smp
 * is present first, so it always runs), device(opencl, cuda, smp) and name(...). */
#include "check.h"

#include <nanort/nanort.h>

static int add_smp_calls, square_smp_calls, scale_smp_calls;

#pragma omp target device(cuda, smp) ndrange(1, n, 32) name(add_cuda)
#pragma omp task in([n]x) inout([n]y)
void add(int n, const float *x, float *y) {
  for (int i = 0; i < n; ++i) y[i] += x[i];
  ++add_smp_calls;
}

#pragma omp target device(smp, cuda) ndrange(1, n)
#pragma omp task inout([n]y)
void square(int n, float *y) {
  for (int i = 0; i < n; ++i) y[i] = y[i] * y[i];
  ++square_smp_calls;
}

/* Three versions: OpenCL (PoCL where there is no GPU), CUDA, smp. */
#pragma omp target device(opencl, cuda, smp) ndrange(1, n) file(kernels/target_clauses.cl) \
    name(square)
#pragma omp task inout([n]y)
void square3(int n, float *y) {
  for (int i = 0; i < n; ++i) y[i] = y[i] * y[i];
  ++scale_smp_calls;
}

int main(void) {
  enum { N = 160 };
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = i;
    y[i] = 2;
  }
  add(N, x, y);
  square(N, y);
  add(N, x, y);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) CHECK(y[i] == (float)(i + 2) * (float)(i + 2) + (float)i);
  static float z[N];
  for (int i = 0; i < N; ++i) z[i] = i;
  square3(N, z);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) CHECK(z[i] == (float)i * (float)i);
  int gpus = nanort_device_count(NANORT_DEVICE_CUDA);
  int cl = nanort_device_count(NANORT_DEVICE_OPENCL);
  printf("CUDA devices: %d, OpenCL devices: %d\n", gpus, cl);
  CHECK(add_smp_calls == (gpus == 0 ? 2 : 0));
  CHECK(square_smp_calls == 1); /* device(smp, cuda): smp first, always present */
  CHECK(scale_smp_calls == (cl == 0 && gpus == 0 ? 1 : 0));
  CHECK_DONE();
}
