/* Calls the kernel tasks of header_kernels.h with a MAX_NUM_THREADS of its own, and defines
 * the smp function task and the plain task declared there. */
#include <unistd.h>
#include "header_kernels.h"

static const int MAX_NUM_THREADS = 64;

void more(int n, const float *x, float *y) {
  saxpy(n, 1.0f, x, y);
  reverse_blocks(n, y, 0);
}

void total(int n, const float *y, double *sum) {
  usleep(20000); /* a task that runs too early sees the old values */
  double s = 0;
  for (int i = 0; i < n; ++i) s += y[i];
  *sum = s;
}

void add_one(int n, float *y) {
  usleep(20000);
  for (int i = 0; i < n; ++i) y[i] += 1;
}
