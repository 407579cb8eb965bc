/* OmpSs-1 forms of older C programs (issue 19), each result compared with the same work done
 * sequentially: function tasks declared 'void f()' (no prototype before C23), a task declared
 * with its pragma that this file neither defines nor calls, and sections of shaped
 * expressions, ([n]p)[a:b] and ([n][m]p)[a;k][b;l]. Writers sleep (SLOW), so that a dependence
 * over the wrong bytes lets a reader run too early and see the old values. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 10, R = 6, C = 8 };

int counter;
int *cell;

/* No parameters, said the old way; the clauses name globals. */
#pragma omp task inout(cell[0])
void bump()
{
  SLOW();
  cell[0] += counter;
}

/* Declared without its parameters, with the pragma; the definition below gives them. */
#pragma omp task in(([n]src)[0:n-1]) out(([n]dst)[0;n])
void copy_scaled();

/* Declared with its pragma, defined in no file of this program, never called. */
#pragma omp task inout([n]x)
void clear_elsewhere(int *x, int n);

void copy_scaled(int n, const int *src, int *dst, int f) {
  SLOW();
  for (int i = 0; i < n; ++i)
    dst[i] = src[i] * f;
}

/* Rows a..a+k-1, columns b..b+l-1 of an R x C matrix held in a plain pointer. */
static void add_block(int *m, int a, int k, int b, int l, int v) {
  #pragma omp task inout(([R][C]m)[a;k][b;l]) firstprivate(v)
  {
    SLOW();
    for (int i = a; i < a + k; ++i)
      for (int j = b; j < b + l; ++j)
        m[i * C + j] += v;
  }
}

int main(void) {
  int one = 1;
  cell = &one;
  counter = 4;
  bump();
  bump();
  #pragma omp task in(cell[0]) shared(one)
  CHECK(one == 9);
  #pragma omp taskwait
  CHECK(one == 9);

  int *src = malloc(N * sizeof *src), *dst = calloc(N, sizeof *dst);
  for (int i = 0; i < N; ++i)
    src[i] = i;
  copy_scaled(N, src, dst, 3);
  /* A reader of the last element only: it must wait for the whole shaped section. */
  int last = -1;
  #pragma omp task in(([N]dst)[N-1:N-1]) out(last)
  last = dst[N - 1];
  #pragma omp taskwait
  for (int i = 0; i < N; ++i)
    CHECK(dst[i] == 3 * i);
  CHECK(last == 3 * (N - 1));

  /* Blocks of a matrix through a shape: two writers of disjoint blocks, then a reader of one
   * element of each, then one of the corner only they share nothing with. */
  int *m = calloc(R * C, sizeof *m), seq[R][C];
  memset(seq, 0, sizeof seq);
  add_block(m, 0, 3, 0, 4, 1);
  add_block(m, 3, 3, 4, 4, 2);
  add_block(m, 1, 4, 2, 4, 10);
  int seen[2] = {-1, -1};
  #pragma omp task in(([R][C]m)[2;1][3;1], ([R][C]m)[5:5][7:7]) out(seen)
  {
    seen[0] = m[2 * C + 3];
    seen[1] = m[5 * C + 7];
  }
  #pragma omp taskwait
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      seq[i][j] += 1;
  for (int i = 3; i < 6; ++i)
    for (int j = 4; j < 8; ++j)
      seq[i][j] += 2;
  for (int i = 1; i < 5; ++i)
    for (int j = 2; j < 6; ++j)
      seq[i][j] += 10;
  CHECK(memcmp(m, seq, sizeof seq) == 0);
  CHECK(seen[0] == seq[2][3] && seen[1] == seq[5][7]);
  free(src), free(dst), free(m);
  CHECK_DONE();
}
