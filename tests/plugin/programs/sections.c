/* Array sections (issue 18). Without SECTION_ERROR: depend(in: x[a:n]) is a start and a
 * length (OpenMP), commas inside calls and parentheses in a subscript are the user's own, a ':'
 * of a '?' is no separator, and empty sections are allowed. With SECTION_ERROR=<case>: a
 * section whose length or start is wrong at run time ends the program with exit status 1 and a
 * message naming the pragma, the task and the section as written (tests/plugin/tests.cmake). */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int pick(int a, int b) { return a < b ? b : a; }

/* Writes x[2], x[3] and x[4]: with depend()'s start and length, x[2:3]. */
#pragma omp task depend(inout: x[k:n])
static void bump(int k, int n, int *x) {
  SLOW();
  for (int i = k; i < k + n; ++i) x[i] += 1;
}

#pragma omp task inout(x[0;n])
static void scale(int n, float *x) {
  for (int i = 0; i < n; ++i) x[i] *= 2;
}

#pragma omp task in(p[i - 1;2]) label(neighbours)
static void neighbours(int i, const float *p) { (void)i, (void)p; }

#pragma omp task in([n]x)
static void shaped(int n, const float *x) { (void)n, (void)x; }

static int run_error(const char *which) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float m[4][4] = {{0}};
  int n = -5, a = 6, b = 3, i = 0, c = -1;
  if (!strcmp(which, "length")) {
    scale(n, x);
  } else if (!strcmp(which, "depend")) {
    int v[8] = {0};
    bump(2, b - a + 1, v);
  } else if (!strcmp(which, "end")) {
    #pragma omp task inout(x[a:b])
    x[a] = 0;
  } else if (!strcmp(which, "start")) {
    neighbours(i, x + 4);
  } else if (!strcmp(which, "array")) {
    #pragma omp task inout(x[i - 3;2])
    x[0] = 0;
  } else if (!strcmp(which, "shape")) {
    shaped(n + 2, x);
  } else if (!strcmp(which, "row")) {
    #pragma omp task in(m[0;2][c;2]) label(block)
    (void)m;
  } else if (!strcmp(which, "taskwait")) {
    #pragma omp taskwait on(x[0;n + 4])
  } else {
    printf("unknown SECTION_ERROR '%s'\n", which);
    return 2;
  }
  #pragma omp taskwait
  printf("FAILED: the section error '%s' was not reported\n", which);
  return 1;
}

int main(void) {
  if (getenv("SECTION_ERROR"))
    return run_error(getenv("SECTION_ERROR"));

  /* x[2:3] is x[2], x[3], x[4]: the reader of x[4] waits for the writer. (Read as an
   * included end, x[2:3] would be x[2], x[3] only, and the reader would see 0.) */
  int v[8] = {0};
  bump(2, 3, v);
  int seen = -1;
  #pragma omp task in(v[4]) out(seen)
  seen = v[4];
  #pragma omp taskwait
  CHECK(seen == 1);
  CHECK(v[1] == 0 && v[2] == 1 && v[3] == 1 && v[4] == 1 && v[5] == 0);

  /* Commas inside a call and inside parentheses; a ':' of a '?'. */
  int k = 1;
  #pragma omp task inout(v[pick(1, k)], v[(pick(0, k), 6)], v[k ? 2 : 3 ; 2])
  {
    SLOW();
    v[1] = 10, v[6] = 60, v[2] = 20, v[3] = 30;
  }
  int sum = 0;
  #pragma omp task in(v[1;3], v[6]) out(sum)
  sum = v[1] + v[2] + v[3] + v[6];
  #pragma omp taskwait
  CHECK(sum == 120);

  /* Empty sections: x[a;0] and x[a:a-1]. */
  #pragma omp task inout(v[3;0], v[5:4])
  v[7] = 7;
  #pragma omp taskwait
  CHECK(v[7] == 7);
  CHECK_DONE();
}
