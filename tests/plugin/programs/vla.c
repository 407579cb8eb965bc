/* Variable-length arrays and pointers to their rows in inline tasks (issue 19), in the style
 * of OmpSs programs: tiles of a matrix passed as double (*a)[ts][ts], wavefronts over a
 * parameter u[n][m], a VLA shared through its dependences, copied by firstprivate, private
 * scratch. Each result is compared with the same computation run sequentially. Writers sleep
 * (SLOW) so that a dependence with a wrong address or size lets a reader run too early. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int go;

/* Tiles: every task's dependence is a whole tile, its size ts * ts * sizeof(double) known at
 * run time only. */
static void tile_init(int nt, int ts, double (*a)[ts][ts]) {
  for (int t = 0; t < nt; ++t) {
    #pragma omp task out(a[t][0;ts][0;ts])
    {
      SLOW();
      for (int i = 0; i < ts; ++i)
        for (int j = 0; j < ts; ++j)
          a[t][i][j] = t + i * 0.5 + j * 0.25;
    }
  }
}

static void tile_scale(int nt, int ts, double (*a)[ts][ts], double f) {
  for (int t = 0; t < nt; ++t) {
    #pragma oss task inout(a[t][0:ts-1][0:ts-1])
    {
      SLOW();
      for (int i = 0; i < ts; ++i)
        for (int j = 0; j < ts; ++j)
          a[t][i][j] *= f;
    }
  }
}

/* The last element of each tile, read through its own dependence: it must wait for the whole
 * tile's writer. */
static void tile_corners(int nt, int ts, double (*a)[ts][ts], double *out) {
  for (int t = 0; t < nt; ++t) {
    #pragma omp task in(a[t][ts - 1][ts - 1]) out(out[t])
    out[t] = a[t][ts - 1][ts - 1];
  }
}

/* A wavefront over a parameter written as an array: u is a pointer to rows of m ints. */
static void wavefront(int n, int m, int u[n][m]) {
  for (int i = 1; i < n; ++i) {
    #pragma omp task in(u[i - 1][0;m]) inout(u[i][0;m])
    {
      SLOW();
      for (int j = 1; j < m; ++j)
        u[i][j] += u[i - 1][j - 1];
    }
  }
  #pragma omp taskwait
}

static void wavefront_seq(int n, int m, int u[n][m]) {
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      u[i][j] += u[i - 1][j - 1];
}

/* Rows of a VLA through int (*A)[n], a whole row as one dependence. */
static void rows_sum(int rows, int n, int (*A)[n], long *sums) {
  for (int r = 0; r < rows; ++r) {
    #pragma omp task inout(A[r])
    {
      SLOW();
      for (int j = 0; j < n; ++j)
        A[r][j] += r;
    }
    #pragma omp task in(A[r]) out(sums[r])
    {
      long s = 0;
      for (int j = 0; j < n; ++j)
        s += A[r][j];
      sums[r] = s;
    }
  }
  #pragma omp taskwait
}

/* A VLA of the function, shared because its dependences name it; the function waits. */
static long vla_shared(int n) {
  int v[n];
  long total = 0;
  #pragma omp task out(v)
  {
    SLOW();
    for (int i = 0; i < n; ++i)
      v[i] = i * 3;
  }
  #pragma omp task inout(v[0;n])
  for (int i = 0; i < n; ++i)
    v[i] += 1;
  #pragma omp task in(v) out(total)
  for (int i = 0; i < n; ++i)
    total += v[i];
  #pragma omp taskwait
  CHECK(sizeof v == n * sizeof(int));
  return total;
}

/* firstprivate(v): the task has the whole array as it was when the task was created. The
 * function changes v afterwards and returns before the task runs. */
static void vla_firstprivate(int n, long *out) {
  int v[n];
  for (int i = 0; i < n; ++i)
    v[i] = i;
  #pragma omp task firstprivate(v) out(*out)
  {
    wait_for_go(&go);
    long s = 0;
    for (int i = 0; i < n; ++i) {
      s += v[i];
      v[i] = -1; /* the task's own copy */
    }
    *out = s + (long)(sizeof v / sizeof v[0]);
  }
  for (int i = 0; i < n; ++i)
    v[i] = 1000;
}

/* private(scratch): each task gets its own n-element array. A 2-D VLA too. */
static void vla_private(int tasks, int n, long *res) {
  int scratch[n];
  double grid[n][n];
  for (int t = 0; t < tasks; ++t) {
    #pragma omp task private(scratch, grid) out(res[t])
    {
      for (int i = 0; i < n; ++i) {
        scratch[i] = t + i;
        for (int j = 0; j < n; ++j)
          grid[i][j] = scratch[i] * j;
      }
      long s = 0;
      for (int i = 0; i < n; ++i)
        s += scratch[i] + (long)grid[i][n - 1];
      res[t] = s + (long)(sizeof grid / sizeof(double));
    }
  }
  #pragma omp taskwait
}

/* A task inside a task that shares its parent's firstprivate VLA; the parent waits for it. */
static long vla_nested(int n) {
  int v[n];
  long total = 0;
  for (int i = 0; i < n; ++i)
    v[i] = 2;
  #pragma omp task firstprivate(v) shared(total)
  {
    #pragma omp task shared(v)
    for (int i = 0; i < n; ++i)
      v[i] *= 5;
    #pragma omp taskwait
    for (int i = 0; i < n; ++i)
      total += v[i];
  }
  #pragma omp taskwait
  CHECK(v[0] == 2);
  return total;
}

int main(void) {
  enum { NT = 4, TS = 9 };
  int nt = NT, ts = TS;
  double (*a)[ts][ts] = malloc(sizeof(double[nt][ts][ts]));
  double (*s)[ts][ts] = malloc(sizeof(double[nt][ts][ts]));
  double corners[NT];
  tile_init(nt, ts, a);
  tile_scale(nt, ts, a, 2.0);
  tile_corners(nt, ts, a, corners);
  #pragma omp taskwait
  for (int t = 0; t < nt; ++t)
    for (int i = 0; i < ts; ++i)
      for (int j = 0; j < ts; ++j)
        s[t][i][j] = (t + i * 0.5 + j * 0.25) * 2.0;
  CHECK(memcmp(a, s, sizeof(double[nt][ts][ts])) == 0);
  for (int t = 0; t < nt; ++t)
    CHECK(corners[t] == s[t][ts - 1][ts - 1]);
  free(a);
  free(s);

  int n = 7, m = 11;
  int (*u)[m] = malloc(sizeof(int[n][m]));
  int (*w)[m] = malloc(sizeof(int[n][m]));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      u[i][j] = w[i][j] = j - i;
  wavefront(n, m, u);
  wavefront_seq(n, m, w);
  CHECK(memcmp(u, w, sizeof(int[n][m])) == 0);
  free(u);
  free(w);

  int rows = 5, cols = 6;
  int (*A)[cols] = calloc(rows, sizeof *A);
  long sums[5];
  rows_sum(rows, cols, A, sums);
  for (int r = 0; r < rows; ++r)
    CHECK(sums[r] == (long)r * cols);
  free(A);

  long expect = 0;
  for (int i = 0; i < 50; ++i)
    expect += i * 3 + 1;
  CHECK(vla_shared(50) == expect);

  long fp = 0;
  go = 0;
  vla_firstprivate(40, &fp);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(fp == 40 * 39 / 2 + 40);

  long res[6];
  vla_private(6, 5, res);
  for (int t = 0; t < 6; ++t) {
    long e = 0;
    for (int i = 0; i < 5; ++i)
      e += (t + i) + (long)(t + i) * 4;
    CHECK(res[t] == e + 25);
  }

  CHECK(vla_nested(30) == 30 * 10);
  CHECK_DONE();
}
