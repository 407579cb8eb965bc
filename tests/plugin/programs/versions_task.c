/* The smp version of scale, whose pragma is in versions.h. */
#include "versions.h"

int scale_smp_runs;

void scale(int n, float *x, float factor) {
  for (int i = 0; i < n; ++i) x[i] *= factor;
  __atomic_add_fetch(&scale_smp_runs, 1, __ATOMIC_RELAXED);
}
