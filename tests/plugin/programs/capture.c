/* Data sharing of the variables that inline tasks name in dependences (issue 19, DESIGN.md
 * decision 3): a variable whose own storage is the dependence is shared; a pointer through
 * which a section is named is firstprivate, so that the task uses the address its dependence
 * was computed on even if the program changes the pointer or returns. Each task waits until
 * the program has changed what the task must not see. */
#include "check.h"

#define N 16

static int go, go2;

static void fill(double *x, double v) {
  for (int i = 0; i < N; ++i) x[i] = v;
}
static int all(const double *x, int from, int to, double v) {
  for (int i = from; i < to; ++i)
    if (x[i] != v) return 0;
  return 1;
}

/* A task on the data of a pointer parameter: the function returns before the task runs. */
static void scale_later(double *x, int n, double f) {
  #pragma omp task inout(x[0;n])
  {
    wait_for_go(&go);
    for (int i = 0; i < n; ++i) x[i] *= f;
  }
}

/* The same through a member of a structure passed by value: the pointer member is read when
 * the task is created (v is copied), and the task's changes to v are its own. */
struct vec {
  double *data;
  int n;
  int runs;
};
static void negate_later(struct vec v) {
  #pragma omp task inout(v.data[0;v.n])
  {
    wait_for_go(&go);
    for (int i = 0; i < v.n; ++i) v.data[i] = -v.data[i];
    v.runs++;
  }
}

/* A parameter declared as an array is a pointer: the task copies the pointer (and the lowered
 * code must not take 'sizeof' of the parameter, which -Wall reports). */
static void double_rows_later(double m[][N], int rows) {
  for (int i = 0; i < rows; ++i) {
    #pragma omp task inout(m[i][0;N])
    {
      wait_for_go(&go2);
      for (int j = 0; j < N; ++j) m[i][j] *= 2.0;
    }
  }
}

/* Overwrites the stack where the frames of the functions above were. */
static __attribute__((noinline)) void clobber_stack(void) {
  volatile unsigned char junk[8192];
  for (unsigned i = 0; i < sizeof junk; ++i) junk[i] = 0;
}

/* A function task copies its arguments: the caller may change its pointer. */
#pragma omp task inout([n]x)
void add_one(double *x, int n) {
  wait_for_go(&go);
  for (int i = 0; i < n; ++i) x[i] += 1.0;
}

int main(void) {
  double b1[N], b2[N], b3[N];

  /* The function returns, the stack is reused; 'taskwait on' the data, then plain taskwait. */
  fill(b1, 2.0);
  go = 0;
  scale_later(b1, N, 3.0);
  struct vec v = {b2, N, 0};
  fill(b2, 5.0);
  negate_later(v);
  clobber_stack();
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait on(b1[0;N])
  CHECK(all(b1, 0, N, 6.0));
  #pragma omp taskwait
  CHECK(all(b2, 0, N, -5.0));

  /* in(p[0;n]) out(q), q a scalar: q is shared (the program sees the sum), p firstprivate
   * (the program moves on to other data). */
  double sum = 0.0;
  double *p = b1;
  fill(b1, 1.0), fill(b2, 100.0);
  go = 0;
  #pragma omp task in(p[0;N]) out(sum)
  {
    wait_for_go(&go);
    for (int i = 0; i < N; ++i) sum += p[i];
  }
  p = b2;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(sum == N * 1.0);

  /* A structure's pointer member, then the program points it elsewhere: the task keeps the
   * data its dependence names, and its v is a copy. */
  struct vec w = {b1, N, 0};
  fill(b1, 1.0), fill(b2, 1.0);
  go = 0;
  #pragma omp task inout(w.data[0;w.n])
  {
    wait_for_go(&go);
    for (int i = 0; i < w.n; ++i) w.data[i] = 9.0;
    w.runs = 1;
  }
  w.data = b2;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(all(b1, 0, N, 9.0) && all(b2, 0, N, 1.0) && w.runs == 0);

  /* A pointer named in a dependence and assigned in the body: the assignment is the task's. */
  double *cur = b1;
  #pragma omp task inout(cur[0;N])
  for (int i = 0; i < N; ++i) *cur++ = i;
  #pragma omp taskwait
  CHECK(cur == b1 && b1[N - 1] == N - 1);

  /* An array of pointers: the row pointer of the dependence, even after the program replaces
   * it. The array is copied; the rows are not. */
  double *rows[2] = {b1, b2};
  int r = 1;
  fill(b1, 0.0), fill(b2, 0.0), fill(b3, 0.0);
  go = 0;
  #pragma omp task inout(rows[r][0;N])
  {
    wait_for_go(&go);
    for (int i = 0; i < N; ++i) rows[r][i] = 7.0;
  }
  rows[1] = b3;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(all(b2, 0, N, 7.0) && all(b3, 0, N, 0.0) && all(b1, 0, N, 0.0));

  /* Nested: tasks inside a task, on the outer task's pointer, which the outer body then
   * changes; 'taskwait on' in the outer body waits through that pointer. */
  fill(b1, 0.0), fill(b2, 0.0);
  double *q = b1;
  go = go2 = 0;
  #pragma omp task inout(q[0;N])
  {
    #pragma omp task inout(q[0;N / 2])
    {
      wait_for_go(&go);
      for (int i = 0; i < N / 2; ++i) q[i] += 1.0;
    }
    #pragma omp taskwait on(q[0;1])
    q[N - 1] = q[0] + 1.0; /* 2 */
    #pragma omp task inout(q[N / 2;1])
    {
      wait_for_go(&go2);
      q[N / 2] = 4.0;
    }
    q = 0; /* the outer task's own copy */
    __atomic_store_n(&go2, 1, __ATOMIC_RELEASE);
    #pragma omp taskwait
  }
  q = b2;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(all(b1, 0, N / 2, 1.0) && b1[N / 2] == 4.0 && b1[N - 1] == 2.0 && all(b2, 0, N, 0.0));
  CHECK(q == b2);

  /* shared(p) wins over the dependence: the body reads the program's p when it runs. */
  double *sp = b1, *seen = 0;
  go = 0;
  #pragma omp task shared(sp, seen) in(sp[0;1])
  {
    wait_for_go(&go);
    seen = sp;
  }
  sp = b3;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(seen == b3);

  /* A function task's pointer argument. */
  fill(b1, 0.0), fill(b2, 0.0);
  double *arg = b1;
  go = 0;
  add_one(arg, N);
  arg = b2;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(all(b1, 0, N, 1.0) && all(b2, 0, N, 0.0) && arg == b2);

  /* Tasks on the rows of a matrix passed as 'double m[][N]', from a function that returns. */
  double m[3][N];
  for (int i = 0; i < 3; ++i) fill(m[i], i + 1.0);
  go2 = 0;
  double_rows_later(m, 3);
  clobber_stack();
  __atomic_store_n(&go2, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(all(m[0], 0, N, 2.0) && all(m[1], 0, N, 4.0) && all(m[2], 0, N, 6.0));
  CHECK_DONE();
}
