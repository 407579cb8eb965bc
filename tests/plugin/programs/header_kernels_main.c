/* Kernel tasks declared in a header (header_kernels.h), included twice here (its guard) and
 * by two more files: header_kernels_more.c calls the kernels too, with its own
 * MAX_NUM_THREADS; header_kernels_nocall.c includes the header without calling them (and
 * waits for the tasks: finish). */
#include "check.h"
#include "header_kernels.h"
#include "header_kernels.h"

/* Declared after the header and before the calls: the kernels' ndrange and shmem name it. */
const int MAX_NUM_THREADS = 128;

#define N 1024

void more(int n, const float *x, float *y); /* header_kernels_more.c */
void finish(void);                          /* header_kernels_nocall.c: a taskwait */

/* The index whose value reverse_blocks moves to i, for blocks of b elements. */
static int mirror(int i, int b) { return i / b * b + (b - 1 - i % b); }

int main(void) {
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = i;
    y[i] = 1;
  }
  saxpy(N, 2.0f, x, y);
  reverse_blocks(N, y, 0);
  double sum = 0;
  total(N, y, &sum); /* defined in header_kernels_more.c */
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) CHECK(y[i] == 2.0f * mirror(i, 128) + 1);
  CHECK(sum == (double)N * N);

  /* saxpy with a = 1, blocks of 64 reversed, then add_one (header_kernels_more.c). */
  more(N, x, y);
  add_one(N, y);
  finish();
  for (int i = 0; i < N; ++i) {
    int j = mirror(i, 64);
    CHECK(y[i] == 2.0f * mirror(j, 128) + 1 + j + 1);
  }
  CHECK_DONE();
}
