/* Calls the CUDA kernel tasks of header_cuda.h with a MAX_NUM_THREADS of its own. */
#include "header_cuda.h"

static const int MAX_NUM_THREADS = 64;

void more(int n, const float *x, float *y) {
  saxpy(n, 1.0f, x, y);
  reverse_blocks(n, y);
}
