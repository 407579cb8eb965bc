/* A heat stencil as users write it (issue 19): two malloc'd grids, one inline task per block
 * with in/inout sections, and the grid pointers swapped after each step's tasks are created.
 * Each task must use the grids its dependences were computed on: the pointers named in the
 * sections are firstprivate. The result is compared with the same steps run as a plain loop,
 * several times.
 *
 * gated runs make a wrong capture fail every time: each task of a step waits until the
 * program has swapped the pointers, and the program waits until the step's tasks are done
 * before it goes on. A task that read the program's variables would see the swapped grids,
 * read what its step writes and write what its step reads. Free runs let the program run
 * ahead of many steps of tasks. */
#include "check.h"

#include <stdlib.h>

#define N 512
#define BS 64
#define NB (N / BS)

static int swapped, finished; /* the gate of gated runs */

static void wait_until(const int *v, int at_least) {
  for (int i = 0; i < 200000 && __atomic_load_n(v, __ATOMIC_ACQUIRE) < at_least; ++i)
    usleep(100);
}

/* steps steps on the grids a and b (cells 0 and N + 1 fixed); returns the grid that holds the
 * result. */
static double *heat(double *a, double *b, int steps, int gated) {
  swapped = finished = 0;
  for (int t = 0; t < steps; ++t) {
    for (int lo = 1; lo <= N; lo += BS) {
      #pragma omp task in(a[lo - 1;BS + 2]) inout(b[lo;BS])
      {
        if (gated)
          wait_until(&swapped, t + 1);
        for (int i = lo; i < lo + BS; ++i)
          b[i] = 0.25 * (a[i - 1] + 2.0 * a[i] + a[i + 1]);
        if (gated)
          __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
      }
    }
    double *tmp = a;
    a = b;
    b = tmp;
    if (gated) {
      __atomic_store_n(&swapped, t + 1, __ATOMIC_RELEASE);
      wait_until(&finished, (t + 1) * NB);
    }
  }
  #pragma omp taskwait
  return a;
}

static double *reference(double *a, double *b, int steps) {
  for (int t = 0; t < steps; ++t) {
    for (int i = 1; i <= N; ++i)
      b[i] = 0.25 * (a[i - 1] + 2.0 * a[i] + a[i + 1]);
    double *tmp = a;
    a = b;
    b = tmp;
  }
  return a;
}

static void init(double *g) {
  g[0] = 100.0;
  g[N + 1] = -50.0;
  for (int i = 1; i <= N; ++i)
    g[i] = (double)((i * 37) % 101);
}

/* Runs heat and the plain loop from the same start; 1 when every cell agrees exactly. */
static int run(int steps, int gated) {
  double *a = malloc((N + 2) * sizeof *a), *b = malloc((N + 2) * sizeof *b);
  double *ra = malloc((N + 2) * sizeof *ra), *rb = malloc((N + 2) * sizeof *rb);
  init(a), init(b), init(ra), init(rb);
  double *got = heat(a, b, steps, gated);
  double *want = reference(ra, rb, steps);
  int same = 1;
  for (int i = 0; i < N + 2; ++i)
    if (got[i] != want[i]) {
      printf("FAILED: %s run of %d steps: cell %d is %g, not %g\n", gated ? "gated" : "free",
             steps, i, got[i], want[i]);
      same = 0;
      break;
    }
  free(a), free(b), free(ra), free(rb);
  return same;
}

int main(void) {
  for (int r = 0; r < 2; ++r)
    CHECK(run(25, 1));
  for (int r = 0; r < 4; ++r)
    CHECK(run(200, 0));
  CHECK_DONE();
}
