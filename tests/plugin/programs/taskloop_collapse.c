/* collapse(n) on taskloops, OpenMP / OmpSs-1 (#pragma omp) and OmpSs-2 (#pragma oss): the
 * iterations split are those of the whole nest. A matrix loop with grainsize and with
 * num_tasks (how many tasks each makes, counted as taskloop.c counts them), every iteration
 * run once, loops that count down or step by more than one, variables declared before the
 * loops, empty inner ranges, collapse(3), and dependences per iteration that order two
 * collapsed taskloops with no taskwait between them. Each result is compared with the same
 * nest run in order. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { R = 30, C = 17 };

/* How many tasks a collapsed taskloop makes: each counts itself once. */
static int tasks_num_tasks(int rows, int cols, int tasks) {
  int count = 0, first = 1;
  #pragma omp taskloop collapse(2) num_tasks(tasks) firstprivate(first) shared(count)
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      if (first) {
        first = 0;
        #pragma omp atomic
        count += 1;
      }
  return count;
}

static int tasks_grainsize(int rows, int cols, int grain) {
  int count = 0, first = 1;
  #pragma omp taskloop collapse(2) grainsize(grain) firstprivate(first) shared(count)
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      if (first) {
        first = 0;
        #pragma omp atomic
        count += 1;
      }
  return count;
}

static void scale(double *out, const double *in, int rows, int cols, double k) {
  #pragma omp taskloop collapse(2) grainsize(25)
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      if ((i * cols + j) % 100 == 0) SLOW(); /* a missing wait reads old values */
      out[i * cols + j] = in[i * cols + j] * k + i - j;
    }
}

int main(void) {
  double *in = malloc(R * C * sizeof(double)), *out = malloc(R * C * sizeof(double));
  for (int i = 0; i < R * C; ++i) in[i] = (i * 17) % 23;
  scale(out, in, R, C, 0.5);
  int ok = 1;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) ok &= out[i * C + j] == in[i * C + j] * 0.5 + i - j;
  CHECK(ok);

  /* The collapsed space is R * C = 510 iterations. */
  CHECK(tasks_num_tasks(R, C, 7) == 7);
  CHECK(tasks_num_tasks(R, C, 1000) == R * C);
  CHECK(tasks_num_tasks(3, 1, 5) == 3);
  CHECK(tasks_grainsize(R, C, 100) == 5);
  CHECK(tasks_grainsize(R, C, 1000) == 1);
  CHECK(tasks_num_tasks(0, C, 4) == 0);
  CHECK(tasks_num_tasks(R, 0, 4) == 0);

  /* Every iteration once: counting down, steps of 3, inclusive bounds, variables declared
   * before the loops. */
  int *hits = calloc(R * C, sizeof(int));
  int i, j;
  #pragma omp taskloop collapse(2) num_tasks(11) shared(hits)
  for (i = R - 1; i >= 0; i--)
    for (j = 0; j <= C - 1; j += 3) {
      #pragma omp atomic
      hits[i * C + j] += 1;
    }
  int once = 1;
  for (int k = 0; k < R * C; ++k) once &= hits[k] == ((k % C) % 3 == 0);
  CHECK(once);

  /* collapse(3). */
  enum { X = 5, Y = 6, Z = 7 };
  int cube[X][Y][Z];
  memset(cube, 0, sizeof cube);
  #pragma omp taskloop collapse(3) grainsize(9) shared(cube)
  for (int x = 0; x < X; ++x)
    for (int y = Y - 1; y >= 0; --y)
      for (unsigned z = 0; z < Z; ++z) cube[x][y][z] += x * 100 + y * 10 + (int)z;
  int cube_ok = 1;
  for (int x = 0; x < X; ++x)
    for (int y = 0; y < Y; ++y)
      for (int z = 0; z < Z; ++z) cube_ok &= cube[x][y][z] == x * 100 + y * 10 + z;
  CHECK(cube_ok);

  /* OmpSs-2: dependences per iteration order two collapsed taskloops (transposing a then
   * reading the transpose), no taskwait between them. */
  int *a = malloc(R * C * sizeof(int)), *t = malloc(R * C * sizeof(int));
  int *back = malloc(R * C * sizeof(int));
  for (int k = 0; k < R * C; ++k) a[k] = k * 3 + 1, t[k] = back[k] = -1;
  #pragma oss taskloop collapse(2) grainsize(40) in(a[r * C + c]) out(t[c * R + r])
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      if ((r * C + c) % 170 == 0) SLOW();
      t[c * R + r] = a[r * C + c];
    }
  #pragma oss taskloop collapse(2) num_tasks(4) in(t[c * R + r]) out(back[r * C + c])
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) back[r * C + c] = t[c * R + r] * 2;
  #pragma oss taskwait
  int deps_ok = 1;
  for (int k = 0; k < R * C; ++k) deps_ok &= back[k] == a[k] * 2;
  CHECK(deps_ok);

  free(in), free(out), free(hits), free(a), free(t), free(back);
  CHECK_DONE();
}
