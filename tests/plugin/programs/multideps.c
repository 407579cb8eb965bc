/* Multidependences (issue 19), OmpSs-1 style: {item, i=start;length}, {item, i=start:end}
 * (the end included), with a step, a list of values, several iterators and copy clauses. Each
 * result is compared with the same computation done sequentially. Writers sleep, so that a
 * reader ordered after too few of them runs early and sees old values. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 16, BS = 64 };

/* Each block by its own task; the tasks return before they run. */
static void fill_blocks(int *a, int nb, int base) {
  for (int b = 0; b < nb; ++b) {
    #pragma omp task out(a[b * BS;BS]) firstprivate(b)
    {
      SLOW();
      for (int i = 0; i < BS; ++i) a[b * BS + i] = base + b * BS + i;
    }
  }
}

/* One task that reads every block: one dependence per block, start and length. */
static void sum_blocks(const int *a, int nb, long *sum) {
  #pragma omp task in({a[b * BS;BS], b=0;nb}) out(*sum)
  {
    long s = 0;
    for (int i = 0; i < nb * BS; ++i) s += a[i];
    *sum = s;
  }
}

/* Element by element, with start and length (Mercurium's own form). */
static void generate(int start, int length, int *a, int val) {
  #pragma omp task out({a[k], k = start;length})
  {
    SLOW();
    for (int i = start; i < start + length; i++) a[i] = val;
  }
}

static void consume(int start, int length, const int *a, int *ok) {
  #pragma omp task in({a[k], k = start;length}) out(*ok)
  {
    int good = 1;
    for (int i = start; i < start + length; i++) good &= a[i] == 7;
    *ok = good;
  }
}

int main(void) {
  int *a = malloc(sizeof(int) * N * BS);
  long sum = 0, expected = 0;
  for (int i = 0; i < N * BS; ++i) expected += 100 + i;
  fill_blocks(a, N, 100);
  sum_blocks(a, N, &sum);
  #pragma omp taskwait
  CHECK(sum == expected);

  /* One task per element, then a reader of a range of them. */
  int e[32] = {0}, ok = 0;
  for (int i = 0; i < 32; ++i) generate(i, 1, e, 7);
  consume(4, 20, e, &ok);
  #pragma omp taskwait
  CHECK(ok);

  /* i = start:end (end included) and a step: the even blocks, then the odd ones by a list. */
  int *c = malloc(sizeof(int) * N * BS);
  memset(c, 0, sizeof(int) * N * BS);
  fill_blocks(c, N, 0);
  long even = 0, odd = 0, even_expected = 0, odd_expected = 0;
  for (int b = 0; b < N; ++b)
    for (int i = 0; i < BS; ++i)
      *(b % 2 ? &odd_expected : &even_expected) += b * BS + i;
  #pragma omp task in({c[b * BS;BS], b=0:N-1:2}) shared(even)
  for (int b = 0; b < N; b += 2)
    for (int i = 0; i < BS; ++i) even += c[b * BS + i];
  #pragma omp task in({c[b * BS;BS], b={1, 3, 5, 7, 9, 11, 13, 15}}) shared(odd)
  for (int b = 1; b < N; b += 2)
    for (int i = 0; i < BS; ++i) odd += c[b * BS + i];
  #pragma omp taskwait
  CHECK(even == even_expected && odd == odd_expected);

  /* Two iterators, the second bounded by the first: the lower triangle of a matrix, each row
   * written by a task, read by one task through one dependence per element. */
  static double m[N][N];
  for (int i = 0; i < N; ++i) {
    #pragma omp task out(m[i][0;i + 1]) firstprivate(i)
    {
      SLOW();
      for (int j = 0; j <= i; ++j) m[i][j] = i * N + j;
    }
  }
  double tri = 0, tri_expected = 0;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j <= i; ++j) tri_expected += i * N + j;
  #pragma omp task inout({m[i][j], i=0:N-1, j=0:i}) shared(tri)
  for (int i = 0; i < N; ++i)
    for (int j = 0; j <= i; ++j) tri += m[i][j];
  #pragma omp taskwait
  CHECK(tri == tri_expected);

  /* Copies of several pieces (multicopies): accepted on a CPU task, where they move nothing. */
  #pragma omp task copy_in({a[k * BS;BS], k = 0;N}) inout({a[k * BS;BS], k = 0;N})
  for (int i = 0; i < N * BS; ++i) a[i] -= 100;
  #pragma omp taskwait
  sum = 0;
  for (int i = 0; i < N * BS; ++i) sum += a[i];
  CHECK(sum == expected - 100L * N * BS);
  free(a);
  free(c);
  CHECK_DONE();
}
