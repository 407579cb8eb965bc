/* priority(...): with one CPU worker nothing runs before the taskwait, and then the
 * scheduler's order shows (NANORT_CPU_WORKERS=1). */
#include "check.h"

#include <string.h>

static char order[16];
static int next;

#pragma omp task priority(p) label(record)
static void record(char name, int p) {
  (void)p;
  order[next++] = name;
}

int main(void) {
  record('a', 0);
  record('b', 5);
  record('c', 10);
  char d = 'd';
  #pragma omp task priority(7) firstprivate(d)
  order[next++] = d;
  #pragma omp taskwait
  order[next] = 0;
  printf("order %s\n", order);
  CHECK(strcmp(order, "cdba") == 0);
  CHECK_DONE();
}
