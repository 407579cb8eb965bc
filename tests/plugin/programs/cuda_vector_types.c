/* Host C with CUDA's vector types, as OmpSs's NBody has them: float4, float2, make_float4,
 * with no include of a CUDA header (nanocc --cuda, or .cu files, or nanort_annotate with CUDA
 * kernels give them). The task has a CUDA kernel (kernels/vector_kernels.cu) and an smp body
 * on the same types: the kernel where there is a GPU, the body where there is none; the
 * results are the same. It also uses omp.h's routines (nanort_annotate links nanort::omp). */
#include "check.h"

#include <nanort/nanort.h>
#include <omp.h>
#include <stddef.h>

#pragma omp target device(cuda, smp) ndrange(1, n, 64)
#pragma omp task inout([n]bodies) in([n]pushes)
void advance(int n, float4 *bodies, const float2 *pushes) {
  for (int i = 0; i < n; ++i) {
    float4 b = bodies[i];
    bodies[i] = make_float4(b.x + pushes[i].x, b.y + pushes[i].y, b.z, b.w * 2.0f);
  }
}

int main(void) {
  /* nvcc's layout: the kernel reads the same bytes. */
  CHECK(sizeof(float4) == 16 && _Alignof(float4) == 16);
  CHECK(sizeof(float2) == 8 && _Alignof(float2) == 8);
  CHECK(offsetof(float4, w) == 12);
  CHECK(sizeof(double2) == 16 && sizeof(int4) == 16);
  int4 i4 = make_int4(1, 2, 3, 4);
  CHECK(i4.x + i4.y + i4.z + i4.w == 10);

  enum { N = 200 };
  static float4 bodies[N];
  static float2 pushes[N];
  for (int i = 0; i < N; ++i) {
    bodies[i] = make_float4((float)i, 0.0f, 1.0f, 1.0f);
    pushes[i] = make_float2(1.0f, (float)i);
  }
  advance(N, bodies, pushes);
  advance(N, bodies, pushes);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) {
    CHECK(bodies[i].x == (float)i + 2.0f);
    CHECK(bodies[i].y == 2.0f * (float)i);
    CHECK(bodies[i].z == 1.0f);
    CHECK(bodies[i].w == 4.0f);
  }
  CHECK(omp_get_max_threads() == nanort_device_count(NANORT_DEVICE_SMP));
  CHECK_DONE();
}
