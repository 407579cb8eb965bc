/* Includes header_kernels.h without calling its kernels (no MAX_NUM_THREADS here): nothing of
 * them is lowered in this file. Its only pragma is a taskwait. */
#include "header_kernels.h"

void finish(void) {
  #pragma omp taskwait
}
