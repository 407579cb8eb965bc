/* taskwait with dependences (issue 19): OmpSs-2's taskwait in/out/inout(...) and OpenMP's
 * taskwait depend(...) wait only for the earlier tasks that access the named data.
 *
 * The unrelated task below runs until the program sets 'go', which it does only after the
 * taskwait in(x) returned: a taskwait that waited for every task would never return (the test
 * then ends at its time limit). The task is running before x's task is created, so no thread
 * that waits can pick it up to run it itself. */
#include <stdlib.h>

#include "check.h"

static int go, started;

/* Creates its tasks and returns: the caller's taskwait must still see them. */
static void start_unrelated(int *y) {
  #pragma oss task inout(*y)
  {
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    wait_for_go(&go);
    *y += 1;
  }
}

static void produce(int *x, int value) {
  #pragma oss task out(*x)
  {
    SLOW();
    *x = value;
  }
}

/* A sum of blocks, each block a task; the taskwait names the blocks with a multidependence. */
static long blocks(int n, int bs) {
  int *v = malloc(sizeof(int) * (size_t)n * (size_t)bs);
  for (int b = 0; b < n; ++b) {
    #pragma oss task out(v[b * bs;bs]) firstprivate(b)
    {
      SLOW();
      for (int i = 0; i < bs; ++i) v[b * bs + i] = b * bs + i;
    }
  }
  #pragma oss taskwait in({v[b * bs;bs], b=0;n})
  long sum = 0;
  for (int i = 0; i < n * bs; ++i) sum += v[i];
  free(v);
  return sum;
}

int main(void) {
  int x = 0, y = 0, z = 0;
  start_unrelated(&y);
  while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
    usleep(100);

  produce(&x, 1);
  #pragma oss taskwait in(x)
  CHECK(x == 1);
  CHECK(__atomic_load_n(&y, __ATOMIC_RELAXED) == 0); /* the unrelated task is still waiting */

  produce(&x, 2);
  #pragma omp taskwait depend(in: x)
  CHECK(x == 2);

  produce(&x, 3);
  produce(&z, 4);
  #pragma oss taskwait inout(x) out(z)
  CHECK(x == 3 && z == 4);

  /* A taskwait inside a task waits for that task's own children. */
  #pragma oss task inout(x)
  {
    produce(&x, 5);
    #pragma oss taskwait inout(x)
    CHECK(x == 5);
    x += 1;
  }
  #pragma omp taskwait depend(inout: x)
  CHECK(x == 6);

  CHECK(blocks(8, 100) == 800L * 799 / 2);

  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma oss taskwait
  CHECK(y == 1);
  CHECK_DONE();
}
