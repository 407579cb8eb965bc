/* An annotated C program built with nanort_annotate from the installed package: an OpenCL
 * kernel task (kernel in saxpy.cl, SCALE from OPENCL_BUILD_OPTIONS), a CPU function task
 * that reads its result, an inline task, taskwait, omp.h's routines (nanort::omp, which
 * nanort_annotate links). ANNOTATED_N comes from target_compile_definitions,
 * ANNOTATED_BLOCK from target_include_directories. */
#include "annotated.h"
#include <annotated_sizes.h>
#include <omp.h>

#pragma omp target device(opencl) ndrange(1, n, ANNOTATED_BLOCK) copy_deps
#pragma omp task in([n]x) inout([n]y)
__kernel void saxpy(int n, float a, __global const float *x, __global float *y);

static int team, thread; /* what omp.h says inside the task */

#pragma omp task in([n]y) out(*sum)
static void total(int n, const float *y, double *sum) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += y[i];
  *sum = s;
  team = omp_get_num_threads();
  thread = omp_get_thread_num();
}

int main(void) {
  static float x[ANNOTATED_N], y[ANNOTATED_N];
  for (int i = 0; i < ANNOTATED_N; ++i) {
    x[i] = i;
    y[i] = 1;
  }
  saxpy(ANNOTATED_N, 2.0f, x, y);
  double sum = 0;
  total(ANNOTATED_N, y, &sum);
  int count = 0;
  #pragma oss task inout(count) in(sum)
  count = (int)(sum > 0) + 1;
  #pragma omp taskwait
  for (int i = 0; i < ANNOTATED_N; ++i) CHECK(y[i] == 3 * (2.0f * i + 1));
  CHECK(sum == 3.0 * ANNOTATED_N * ANNOTATED_N);
  CHECK(count == 2);
  CHECK(team == 2); /* check.sh: NANORT_CPU_WORKERS=2 */
  CHECK(thread >= 0 && thread < 2);
  if (failures) return 1;
  printf("annotated C: all results correct\n");
  return 0;
}
