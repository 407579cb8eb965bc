/* target clauses beyond device and ndrange: file(...) embeds a .cl file from the pragma
 * (resolved from this file's folder), name(...) gives the kernel's name when it differs from
 * the function's, and device(opencl, smp) / device(smp, opencl) give a function with a body two
 * implementations, of which the runtime takes the first that can run. */
#include "check.h"

/* The kernel is scale_kernel; the host calls it scale. */
#pragma omp target device(opencl) ndrange(1, n, 64) file(kernels/target_clauses.cl) \
    name(scale_kernel)
#pragma omp task inout([n]y)
__kernel void scale(int n, float a, __global float *y);

/* name() with the program nanocc builds from saxpy.cl (SCALE comes from its build options). */
#pragma omp target device(opencl) ndrange(1, n) name(saxpy)
#pragma omp task in([n]x) inout([n]y)
void my_saxpy(int n, float a, const float *x, float *y);

/* Two implementations: OpenCL first (PoCL runs it), so the smp body must not run. */
static int add_smp_calls;
#pragma oss target device(opencl, smp) ndrange(1, n, 10) file("kernels/target_clauses.cl") \
    name(add_into)
#pragma oss task in([n]x) inout([n]y)
void add(int n, const float *x, float *y) {
  for (int i = 0; i < n; ++i) y[i] += x[i];
  ++add_smp_calls;
}

/* smp first: the body runs on a CPU worker. */
static int square_smp_calls;
#pragma omp target device(smp, opencl) ndrange(1, n) file(./kernels/target_clauses.cl)
#pragma omp task inout([n]y)
void square(int n, float *y) {
  for (int i = 0; i < n; ++i) y[i] = y[i] * y[i];
  ++square_smp_calls;
}

int main(void) {
  enum { N = 640 };
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = i;
    y[i] = 1;
  }
  scale(N, 3.0f, y);        /* y = 3 */
  add(N, x, y);             /* y = i + 3 */
  square(N, y);             /* y = (i + 3)^2 */
  my_saxpy(N, 2.0f, x, y);  /* y = 2 i + (i + 3)^2 */
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) {
    float want = 2.0f * (float)i + (float)(i + 3) * (float)(i + 3);
    CHECK(y[i] == want);
  }
  CHECK(add_smp_calls == 0);
  CHECK(square_smp_calls == 1);
  CHECK_DONE();
}
