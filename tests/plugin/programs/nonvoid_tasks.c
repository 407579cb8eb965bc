/* Function tasks that return a value (OmpSs-1, Mercurium's enable_nonvoid_function_tasks):
 * recursive fibonacci and factorial, results stored into variables and array elements and
 * read after a taskwait, accumulations, results inside expressions, conditional expressions,
 * initializers and arguments of other task calls, a structure result, a dropped result, the
 * calls of one statement running together. Each result is compared with the same computation
 * done by plain functions. */
#include "check.h"

#include <stdlib.h>

struct pair {
  int lo, hi;
};

#pragma omp task
int fib(int n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2); /* both tasks made, then waited for together */
}

static int seq_fib(int n) { return n < 2 ? n : seq_fib(n - 1) + seq_fib(n - 2); }

/* The user's own parallel form: results into locals, read after the taskwait. */
#pragma oss task
long pfib(int n) {
  long x, y;
  if (n < 2) return n;
  x = pfib(n - 1);
  y = pfib(n - 2);
  #pragma oss taskwait
  return x + y;
}

#pragma omp task
long fact(int n) {
  if (n <= 1) return 1;
  return n * fact(n - 1);
}

static long seq_fact(int n) { return n <= 1 ? 1 : n * seq_fact(n - 1); }

#pragma omp task in(*v)
double weight(const double *v, int i) {
  SLOW();
  return v[0] * i + 0.5;
}

static double seq_weight(const double *v, int i) { return v[0] * i + 0.5; }

#pragma omp task
int square(int i);

#pragma omp task
struct pair around(int i) {
  struct pair p = {i - 1, i + 1};
  return p;
}

/* A result that may not be written before the program lets the task finish. */
#pragma omp task
int late(const int *go) {
  wait_for_go(go);
  return 42;
}

/* Reads what an earlier task wrote into x: ordered after it by x's dependence. */
#pragma omp task in(*x) out(*y)
void twice(const int *x, int *y) { *y = 2 * *x; }

/* A result nobody reads: the call is a task like that of a void function. */
#pragma omp task inout(*counter)
int bump(int *counter) {
  SLOW();
  return ++*counter;
}

#pragma omp task
int add(int a, int b) { return a + b; }

/* Returns v once 'want' tasks have arrived (or -100 after 20 s): the calls of one statement
 * run at once. */
static int arrived;
#pragma omp task
int meet(int v, int want) {
  int i;
  __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
  for (i = 0; i < 200000 && __atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < want; ++i) usleep(100);
  return __atomic_load_n(&arrived, __ATOMIC_ACQUIRE) >= want ? v : -100;
}

static int seq_square(int i) { return i * i; }

/* Joint calls under a label and an if without braces. */
#pragma omp task
int tri(int n) {
  switch (n) {
  case 0:
    return 0;
  default:
    if (n > 0) return tri(n - 1) + n + add(0, 0);
  }
  return -1;
}

static int seq_tri(int n) { return n == 0 ? 0 : seq_tri(n - 1) + n; }

int main(void) {
  enum { N = 16 };
  int r[N], seq_r[N];
  double w[N], seq_w[N];
  double base = 3.0;
  struct pair pairs[N];
  int i;

  {
    int both = meet(1, 2) + meet(2, 2);
    CHECK(both == 3);
  }
  CHECK(fib(14) == seq_fib(14));
  CHECK(pfib(18) == seq_fib(18));
  CHECK(fact(12) == seq_fact(12));
  CHECK(tri(20) == seq_tri(20));

  /* Results into array elements and a structure array: all tasks at once, then a taskwait. */
  for (i = 0; i < N; ++i) {
    r[i] = square(i);
    w[i] = weight(&base, i);
    pairs[i] = around(i);
  }
  #pragma omp taskwait
  for (i = 0; i < N; ++i) {
    seq_r[i] = seq_square(i);
    seq_w[i] = seq_weight(&base, i);
    CHECK(r[i] == seq_r[i]);
    CHECK(w[i] == seq_w[i]);
    CHECK(pairs[i].lo == i - 1 && pairs[i].hi == i + 1);
  }

  /* Accumulations: 'op=' of a result, and results inside larger expressions. */
  {
    long acc = 0, seq_acc = 0;
    int x = 0, seq_x = 0, y = 0, seq_y = 0, prod = 1, seq_prod = 1;
    for (i = 0; i < N; ++i) {
      acc += square(i);
      seq_acc += seq_square(i);
      x += square(i) + i;
      seq_x += seq_square(i) + i;
      y = square(i) + i + y;
      seq_y = seq_square(i) + i + seq_y;
      if (i < 6) prod *= add(i, 1);
      if (i < 6) seq_prod *= i + 1;
    }
    #pragma omp taskwait
    CHECK(acc == seq_acc);
    CHECK(x == seq_x);
    CHECK(y == seq_y);
    CHECK(prod == seq_prod);
  }

  /* Conditional expressions, initializers, a const initializer, arguments of task calls. */
  {
    int c = 0, seq_c = 0;
    const int k = square(7);
    double h = weight(&base, 2) * 2;
    for (i = 0; i < N; ++i) {
      int v = (i % 3) ? square(i) : -1;
      c += (i % 2) ? v : add(v, i);
      seq_c += (i % 2) ? ((i % 3) ? seq_square(i) : -1)
                       : ((i % 3) ? seq_square(i) : -1) + i;
    }
    CHECK(k == 49);
    CHECK(h == 2 * seq_weight(&base, 2));
    #pragma omp taskwait
    CHECK(c == seq_c);
    CHECK(add(square(3), square(4)) == 25);
    CHECK(square(add(2, 3)) == 25);
  }

  /* 'x = f();' does not wait: the task writes x later, and a task that reads x after it
   * sees the result. */
  {
    int go = 0, x = -1, y = 0;
    x = late(&go);
    CHECK(x == -1);
    twice(&x, &y);
    usleep(200000); /* time for twice to run if it did not wait for x */
    CHECK(y == 0);
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    #pragma omp taskwait
    CHECK(x == 42);
    CHECK(y == 84);
  }

  /* Dropped results: the tasks still run, in the order of their dependences. */
  {
    int counter = 0;
    for (i = 0; i < 5; ++i) bump(&counter);
    (void)bump(&counter);
    #pragma omp taskwait
    CHECK(counter == 6);
  }

  /* Inside an inline task. */
  {
    int z = 0;
    #pragma omp task shared(z)
    {
      z = square(9);
      #pragma omp taskwait
    }
    #pragma omp taskwait
    CHECK(z == 81);
  }
  CHECK_DONE();
}

int square(int i) {
  SLOW();
  return i * i;
}
