/* Function tasks in C, one per dependence syntax. Every reader is created right after a slow
 * writer of the same data, so a dependence that is not registered shows as a wrong value. */
#include "check.h"

#define N 64
#define HALF (N / 2)

#pragma omp task out([n]v)
static void fill(int n, int *v, int value) {
  SLOW();
  for (int i = 0; i < n; ++i) v[i] = value;
}

#pragma omp task in([n]v) out(*sum)
static void total(int n, const int *v, long *sum) {
  long s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  *sum = s;
}

/* x[start;length] */
#pragma omp task inout(v[start;len])
void add_len(int *v, int start, int len, int d) {
  SLOW();
  for (int i = start; i < start + len; ++i) v[i] += d;
}

/* x[lower:upper], upper bound included */
#pragma omp task in(v[lo:hi]) out(*sum)
void sum_incl(const int *v, int lo, int hi, long *sum) {
  long s = 0;
  for (int i = lo; i <= hi; ++i) s += v[i];
  *sum = s;
}

/* [n][m]x: a pointer seen as a matrix */
#pragma omp task inout([rows][cols]m)
void bump_matrix(int rows, int cols, double *m) {
  SLOW();
  for (int i = 0; i < rows * cols; ++i) m[i] += 1;
}
#pragma omp task in([rows][cols]m) out(*sum)
void sum_matrix(int rows, int cols, const double *m, double *sum) {
  double s = 0;
  for (int i = 0; i < rows * cols; ++i) s += m[i];
  *sum = s;
}

/* m[r;nr][c;nc]: a block of a 2-D array */
#pragma omp task inout(m[r0;nr][c0;nc])
void bump_block(double m[8][8], int r0, int nr, int c0, int nc) {
  SLOW();
  for (int i = r0; i < r0 + nr; ++i)
    for (int j = c0; j < c0 + nc; ++j) m[i][j] += 10;
}
#pragma omp task in(m[r0;nr][c0;nc]) out(*sum)
void sum_block(double m[8][8], int r0, int nr, int c0, int nc, double *sum) {
  double s = 0;
  for (int i = r0; i < r0 + nr; ++i)
    for (int j = c0; j < c0 + nc; ++j) s += m[i][j];
  *sum = s;
}

/* variable-length array parameters (C) */
#pragma omp task inout([ts][ts]a)
void bump_vla(int ts, double a[ts][ts], double d) {
  SLOW();
  for (int i = 0; i < ts; ++i)
    for (int j = 0; j < ts; ++j) a[i][j] += d;
}
#pragma omp task in([ts][ts]a) out(*sum)
void sum_vla(int ts, double a[ts][ts], double *sum) {
  double s = 0;
  for (int i = 0; i < ts; ++i)
    for (int j = 0; j < ts; ++j) s += a[i][j];
  *sum = s;
}

/* struct members, elements, *p */
struct pair { int a, b; };
#pragma omp task inout(p->a)
void inc_a(struct pair *p) {
  SLOW();
  p->a++;
}
#pragma omp task in(p->a) out(*out)
void read_a(const struct pair *p, int *out) { *out = p->a; }
#pragma omp task inout(v[3])
void inc_elem(int *v) {
  SLOW();
  v[3]++;
}
#pragma omp task in(v[3]) out(*out)
void read_elem(const int *v, int *out) { *out = v[3]; }

/* depend(...), input/output */
#pragma omp task depend(out: *x)
void set(int *x, int value) {
  SLOW();
  *x = value;
}
#pragma omp task input(*x) output(*y)
void copy(const int *x, int *y) { *y = *x; }

/* concurrent: may run together; commutative: one at a time in any order */
#pragma omp task concurrent(*acc)
void cadd(int *acc, int v) { __atomic_fetch_add(acc, v, __ATOMIC_RELAXED); }
#pragma omp task commutative(*acc)
void madd(int *acc, int v) {
  int t = *acc;
  usleep(2000);
  *acc = t + v;
}
#pragma omp task in(*acc) out(*out)
void read_int(const int *acc, int *out) { *out = *acc; }

/* recursion: calls inside a task are nested tasks */
#pragma omp task out(*r)
void fib(int n, long *r) {
  if (n < 2) {
    *r = n;
    return;
  }
  long a, b;
  fib(n - 1, &a);
  fib(n - 2, &b);
  #pragma omp taskwait
  *r = a + b;
}

/* if(0): the caller runs the task before the call returns */
#pragma omp task inout(*x) if(undeferred)
void bump_if(int *x, int undeferred) { (void)undeferred; ++*x; }

/* priority and label are accepted; a zero-argument task */
static int ticks;
#pragma omp task priority(3) label(tick)
void tick(void) { __atomic_fetch_add(&ticks, 1, __ATOMIC_RELAXED); }

/* A call only creates the task: the caller goes on before the body ran (the body waits until
 * the caller has looked). */
#pragma omp task out(*flag)
static void gated_set(int *flag, const int *go) {
  wait_for_go(go);
  __atomic_store_n(flag, 1, __ATOMIC_RELAXED);
}

int main(void) {
  int flag = 0, go = 0;
  gated_set(&flag, &go);
  CHECK(__atomic_load_n(&flag, __ATOMIC_RELAXED) == 0);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(flag == 1);

  static int v[N];
  long sum = 0;
  fill(N, v, 2);
  total(N, v, &sum);
  #pragma omp taskwait
  CHECK(sum == 2 * N);

  add_len(v, 10, 5, 1); /* v[10..14] = 3 */
  sum_incl(v, 10, 14, &sum);
  #pragma omp taskwait
  CHECK(sum == 5 * 3);
  CHECK(v[9] == 2 && v[15] == 2);

  static double m[8][8];
  double dsum = 0;
  bump_matrix(8, 8, &m[0][0]);
  sum_matrix(8, 8, &m[0][0], &dsum);
  #pragma omp taskwait
  CHECK(dsum == 64);
  bump_block(m, 2, 3, 4, 2);
  sum_block(m, 2, 3, 4, 2, &dsum);
  #pragma omp taskwait
  CHECK(dsum == 6 * 11);
  CHECK(m[1][4] == 1 && m[2][3] == 1 && m[2][4] == 11 && m[4][5] == 11 && m[5][5] == 1);

  int ts = 8;
  bump_vla(ts, m, 1.0);
  sum_vla(ts, m, &dsum);
  #pragma omp taskwait
  CHECK(dsum == 64 + 6 * 10 + 64);

  struct pair p = {1, 1};
  int out = 0;
  inc_a(&p);
  read_a(&p, &out);
  #pragma omp taskwait
  CHECK(out == 2);
  inc_elem(v);
  read_elem(v, &out);
  #pragma omp taskwait
  CHECK(out == 3);

  int x = 0, y = 0;
  set(&x, 7);
  copy(&x, &y);
  #pragma omp taskwait
  CHECK(y == 7);

  int acc = 0, seen = 0;
  for (int i = 1; i <= 10; ++i) cadd(&acc, i);
  read_int(&acc, &seen);
  #pragma omp taskwait
  CHECK(seen == 55);
  for (int i = 1; i <= 10; ++i) madd(&acc, i);
  read_int(&acc, &seen);
  #pragma omp taskwait
  CHECK(seen == 110);

  long f = 0;
  fib(15, &f);
  #pragma omp taskwait
  CHECK(f == 610);

  int z = 0;
  bump_if(&z, 0);
  CHECK(z == 1); /* no taskwait: if(0) ran it already */
  #pragma omp taskwait

  for (int i = 0; i < 5; ++i) tick();
  #pragma omp taskwait
  CHECK(ticks == 5);
  CHECK_DONE();
}
