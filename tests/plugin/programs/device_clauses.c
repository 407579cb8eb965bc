/* OmpSs-1 device clauses on CPU tasks, and the clauses that change no result (issue 19):
 * '#pragma omp target device(smp)' with copy clauses before an inline task, copy_in /
 * copy_out / copy_inout / copy_deps / no_copy_deps written on the task itself, inprivate,
 * cost, onready, simd, declare simd and taskyield. Compared with the sequential computation. */
#include <stdlib.h>

#include "check.h"

static int my_global = 1;

#pragma omp declare simd
static float axpy1(float a, float x, float y) { return a * x + y; }

/* copy clauses on a function task: its pointer data is shared, as with a dependence. Copy
 * clauses order nothing (OmpSs-1): the dependence orders it after the writer of f. */
#pragma omp task inout([n]f) copy_inout([n]f) no_copy_deps
static void twice(int n, float *f) {
  for (int i = 0; i < n; ++i) f[i] *= 2;
}

static int evaluated;
static int cost_of(int n) { ++evaluated; return n; }

/* onready (OmpSs-2): its action runs after the task's dependences are satisfied and before
 * its body; for a function task, with the task's arguments. */
static void ready(int *n, int value) { *n = value; }

#pragma oss task onready(ready(n, 77)) inout(*n)
static void after_ready(int *n) { *n += 1; }

enum { n = 100 };

int main(void) {
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
  float expected[n];
  for (int i = 0; i < n; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
    expected[i] = 2.0f * (0.5f * i + 1.0f);
  }

  /* target device(smp): the task runs on the CPU; the variables of its copy clauses are
   * shared (a copy_inout of a local that the task increments is seen after the taskwait). */
  int cpinout = 9;
  #pragma omp target device(smp) copy_inout(my_global, cpinout)
  #pragma omp task
  {
    my_global++;
    cpinout++;
  }
  #pragma omp taskwait
  CHECK(my_global == 2 && cpinout == 10);

  #pragma omp target device(smp) copy_deps copy_in(x[0:n-1])
  #pragma omp task inout(y[0;n]) cost(cost_of(n))
  {
    #pragma omp simd
    for (int i = 0; i < n; ++i) y[i] = axpy1(0.5f, x[i], y[i]);
    #pragma omp taskyield
  }
  twice(n, y);
  #pragma omp taskwait
  int same = 1;
  for (int i = 0; i < n; ++i) same &= y[i] == expected[i];
  CHECK(same);
  CHECK(evaluated == 1);

  /* copy clauses written on the task, without a target line. */
  int out = 0;
  #pragma omp task copy_in([n]x) copy_out(out) no_copy_deps
  for (int i = 0; i < n; ++i) out += (int)x[i];
  #pragma omp taskwait
  CHECK(out == n * (n - 1) / 2);

  /* inprivate: a private copy made when the task starts, after the writer before it ended
   * (firstprivate would copy the value of when the task was created). */
  int v = 1;
  int arr[2][2] = {{-1, -1}, {-1, -1}};
  #pragma omp task out(v, arr)
  {
    SLOW();
    v = 5;
    arr[1][1] = 7;
  }
  int seen = 0, seen_arr = 0;
  int *original = &v;
  #pragma omp task inprivate(v, arr) shared(seen, seen_arr)
  {
    seen = v + (&v != original ? 100 : 0);
    v++;
    seen_arr = arr[1][1];
    arr[1][1] = 0;
  }
  #pragma omp taskwait
  CHECK(seen == 105);
  CHECK(seen_arr == 7);
  CHECK(v == 5 && arr[1][1] == 7);

  int r = 4, before = 0;
  #pragma oss task out(r)
  {
    SLOW();
    r = 10;
  }
  #pragma oss task onready(ready(&before, r)) inout(r) shared(before)
  r += before;
  #pragma oss taskwait
  CHECK(before == 10 && r == 20);
  after_ready(&r);
  #pragma oss taskwait
  CHECK(r == 78);
  free(x);
  free(y);
  CHECK_DONE();
}
