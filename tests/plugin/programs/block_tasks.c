/* Function tasks declared inside a function (issue 19): the calls that the declaration in the
 * block is visible to are tasks with its clauses; calls elsewhere follow the function's
 * file-scope declarations. The same function with other clauses in two functions that create
 * tasks and return, a function defined later in this file and one defined in another file
 * (block_tasks_lib.c), a function that is also a task at file scope, a declaration in a nested
 * block, target device(smp) before one, OmpSs-2 spelling. Every result is compared with the
 * same computation run sequentially. */
#include <stdlib.h>

#include "check.h"

enum { N = 64, BS = 8 };

/* Defined in block_tasks_lib.c, with no pragma there. */
void add_block(const int *src, int *dst, int n);

static int x;

/* Two functions that declare the same function with other clauses and return without
 * waiting: the second task reads what the first writes. */
static void first(void) {
#pragma omp task inout(*x)
  void step(int *x, int c);

  x = 3;
  step(&x, 1);
}

static void second(void) {
#pragma omp task in(*x)
  void step(int *x, int c);

  step(&x, 2);
}

static int step_failures;
void step(int *x, int c) {
  if (c == 1) {
    SLOW();
    if (*x != 3) ++step_failures;
    (*x)++;
  } else if (*x != 4) {
    ++step_failures;
  }
}

/* Blocks of an array scaled by tasks, then summed by tasks declared in a nested block; the
 * functions are defined after their users. */
static void scale_and_sum(int *a, int n, int factor, int *sums) {
#pragma omp task inout(a[0;bs])
  void scale(int *a, int bs, int factor);
  for (int i = 0; i < n; i += BS)
    scale(a + i, BS, factor);
  {
#pragma oss task in(a[0;bs]) out(*s)
    void sum(const int *a, int bs, int *s);
    for (int i = 0; i < n; i += BS)
      sum(a + i, BS, &sums[i / BS]);
  }
  /* The nested block's declaration is not visible here: this call is a task again with the
   * clauses of the first declaration, after the sums read the block. */
  scale(a, BS, 10);
}

void scale(int *a, int bs, int factor) {
  SLOW();
  for (int i = 0; i < bs; ++i) a[i] *= factor;
}

void sum(const int *a, int bs, int *s) {
  int t = 0;
  for (int i = 0; i < bs; ++i) t += a[i];
  *s = t;
}

/* A task at file scope without dependences, and the same function declared in a block with a
 * dependence: in that scope the calls carry the dependence and run the body, not another
 * task (the file-scope task's cost expression counts its tasks). */
static int file_scope_tasks;
static int count_file_scope(void) { return ++file_scope_tasks; }

#pragma omp task cost(count_file_scope())
void bump(int *p, int by);

static void bump_in_order(int *p) {
#pragma omp task inout(*p)
  void bump(int *p, int by);
  for (int k = 1; k <= 4; ++k)
    bump(p, k); /* each sees the one before it: *p = (*p) * 2 + k */
}

void bump(int *p, int by) {
  SLOW();
  *p = *p * 2 + by;
}

/* A function defined in another file, and target device(smp) before the declaration. */
static void add_blocks(const int *src, int *dst, int n) {
#pragma omp target device(smp) copy_deps
#pragma omp task in(src[0;n]) inout(dst[0;n]) label(add_block_local)
  void add_block(const int *src, int *dst, int n);
  for (int i = 0; i < N; i += BS)
    add_block(src + i, dst + i, BS);
  add_block(src, dst, BS); /* after the first one on the same block */
}

/* The call is a task: it returns before the body, which waits for the program's go. */
static int go, done;
static void wait_then_mark(int *d) {
  wait_for_go(&go);
  __atomic_store_n(d, 1, __ATOMIC_RELEASE);
}

static void start_waiter(void) {
#pragma oss task out(*d)
  void wait_then_mark(int *d);
  wait_then_mark(&done);
}

int main(void) {
  /* The same function, other clauses in two functions. */
  first();
  second();
#pragma omp taskwait
  CHECK(step_failures == 0);
  CHECK(x == 4);

  /* Scale and sum, against the sequential computation. */
  int *a = malloc(sizeof(int) * N), *expect = malloc(sizeof(int) * N);
  int sums[N / BS], expect_sums[N / BS];
  for (int i = 0; i < N; ++i) a[i] = expect[i] = i;
  scale_and_sum(a, N, 3, sums);
#pragma omp taskwait
  for (int i = 0; i < N; ++i) expect[i] *= 3;
  for (int b = 0; b < N / BS; ++b) {
    expect_sums[b] = 0;
    for (int i = 0; i < BS; ++i) expect_sums[b] += expect[b * BS + i];
  }
  for (int i = 0; i < BS; ++i) expect[i] *= 10;
  for (int i = 0; i < N; ++i) CHECK(a[i] == expect[i]);
  for (int b = 0; b < N / BS; ++b) CHECK(sums[b] == expect_sums[b]);

  /* In the block's scope, the block's clauses; outside, the file-scope task's. */
  int p = 1, q = 5, expect_p = 1;
  bump_in_order(&p);
#pragma omp taskwait
  for (int k = 1; k <= 4; ++k) expect_p = expect_p * 2 + k;
  CHECK(p == expect_p);
  bump(&q, 1); /* the file-scope task */
#pragma omp taskwait
  CHECK(q == 11);
  CHECK(file_scope_tasks == 1);

  /* A function defined in another file. */
  int *src = malloc(sizeof(int) * N), *dst = malloc(sizeof(int) * N);
  for (int i = 0; i < N; ++i) {
    src[i] = i + 1;
    dst[i] = 2 * i;
  }
  add_blocks(src, dst, N);
#pragma omp taskwait
  for (int i = 0; i < N; ++i) CHECK(dst[i] == 2 * i + (i + 1) * (i < BS ? 2 : 1));

  /* The call returns before the task ran. */
  start_waiter();
  CHECK(__atomic_load_n(&done, __ATOMIC_ACQUIRE) == 0);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
#pragma omp taskwait
  CHECK(done == 1);

  free(a);
  free(expect);
  free(src);
  free(dst);
  CHECK_DONE();
}
