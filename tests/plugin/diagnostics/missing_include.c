/* A file with an error of its own (printf without <stdio.h>) that includes a header declaring
 * a kernel task with OpenCL's keywords: the compile reports that error, first. */
#include "kernel_header.h"

const int MAX_NUM_THREADS = 128;

int main(void) {
  float x[4] = {0}, y[4] = {0};
  saxpy(4, 1.0f, x, y);
  #pragma omp taskwait
  printf("%f\n", y[0]);
  return 0;
}
