// Calls the kernel tasks of header_kernels.h (one in a namespace) with a MAX_NUM_THREADS of
// its own, and defines the smp and plain tasks declared there (with C linkage, as the header
// declares them).
#include "header_kernels.h"

#include <unistd.h>

static const int MAX_NUM_THREADS = 64;

namespace app {
void more(int n, const float *x, float *y) {
  blas::axpy(n, 1.0f, x, y);
  reverse_blocks(n, y, nullptr);
}
} // namespace app

void more(int n, const float *x, float *y) { app::more(n, x, y); }

void total(int n, const float *y, double *sum) {
  usleep(20000); // a task that runs too early sees the old values
  double s = 0;
  for (int i = 0; i < n; ++i) s += y[i];
  *sum = s;
}

void add_one(int n, float *y) {
  usleep(20000);
  for (int i = 0; i < n; ++i) y[i] += 1;
}
