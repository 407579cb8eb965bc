/* CUDA kernel tasks declared in a header (header_cuda.h), called from this file and from
 * header_cuda_more.c, each with its own MAX_NUM_THREADS. Where there is no CUDA device, the
 * program says so and exits with 77 (ctest: skipped). */
#include "check.h"
#include "header_cuda.h"

#include <nanort/nanort.h>

/* Declared after the header and before the calls: the kernels' ndrange and shmem name it. */
const int MAX_NUM_THREADS = 128;

#define N 1024

void more(int n, const float *x, float *y); /* header_cuda_more.c */

/* The index whose value reverse_blocks moves to i, for blocks of b elements. */
static int mirror(int i, int b) { return i / b * b + (b - 1 - i % b); }

int main(void) {
  if (nanort_device_count(NANORT_DEVICE_CUDA) == 0) {
    printf("SKIP: no CUDA device (no NVIDIA GPU or driver, or NANORT_CUDA_DEVICES=none)\n");
    return 77;
  }
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = i;
    y[i] = 1;
  }
  saxpy(N, 2.0f, x, y);
  reverse_blocks(N, y);
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) CHECK(y[i] == 2.0f * mirror(i, 128) + 1);
  more(N, x, y); /* saxpy with a = 1, blocks of 64 reversed */
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) {
    int j = mirror(i, 64);
    CHECK(y[i] == 2.0f * mirror(j, 128) + 1 + j);
  }
  CHECK_DONE();
}
