/* Tasks with an OpenCL and an smp implementation (device(opencl, smp)): the runtime takes
 * the first listed that has a device. Built twice: run as is, the OpenCL kernel runs (PoCL);
 * run with NANORT_OPENCL_DEVICES=none and -DNO_OPENCL, the smp body runs and the results are
 * the same. */
#include "check.h"

static int add_smp_calls, square_smp_calls;

#pragma omp target device(opencl, smp) ndrange(1, n, 16) file(kernels/target_clauses.cl) \
    name(add_into)
#pragma omp task in([n]x) inout([n]y)
void add(int n, const float *x, float *y) {
  for (int i = 0; i < n; ++i) y[i] += x[i];
  ++add_smp_calls;
}

#pragma omp target device(opencl, smp) ndrange(1, n) file(kernels/target_clauses.cl)
#pragma omp task inout([n]y)
void square(int n, float *y) {
  for (int i = 0; i < n; ++i) y[i] = y[i] * y[i];
  ++square_smp_calls;
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
#ifdef NO_OPENCL
  CHECK(add_smp_calls == 2 && square_smp_calls == 1);
#else
  CHECK(add_smp_calls == 0 && square_smp_calls == 0);
#endif
  CHECK_DONE();
}
