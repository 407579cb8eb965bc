/* A task fails in C: the pragma taskwait names the failed task and the task not run after it,
 * then ends the program with exit status 1, statistics and trace written. The task fails
 * through nanort_task_fail, as a C library wrapped in a task reports an error. */
#include <nanort/nanort.h>
#include <stdio.h>

int main(void) {
  int x = 0, y = 0, z = 0;
  #pragma omp task out(x) label(producer)
  {
    x = 1;
    nanort_task_fail("found no input file", NULL, NULL);
  }
  #pragma omp task in(x) out(y) label(consumer)
  y = x + 1;
  #pragma omp task out(z) label(unrelated)
  z = 3;
  #pragma omp taskwait
  printf("FAILED: the program went on after the failing taskwait (y %d, z %d)\n", y, z);
  return 0;
}
