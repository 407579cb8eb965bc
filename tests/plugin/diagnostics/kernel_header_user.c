/* Calls the kernel task of kernel_header.h without declaring MAX_NUM_THREADS: the error is
 * reported in the header, at the clause. */
#include "kernel_header.h"

void run(int n, float *x, float *y) { saxpy(n, 2.0f, x, y); }
