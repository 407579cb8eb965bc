/* Inline tasks in C: data sharing, dependences, taskwait forms, critical, atomic, final. */
#include "check.h"

#include <nanort/nanort.h>
#include <string.h>

#define N 32
#define LAST (N - 1)

int main(void) {
  int a[N], b[N];
  int k = 5;
  for (int i = 0; i < N; ++i) a[i] = i, b[i] = 0;

  /* The statement became a task: the program goes on before it ran (the task waits until the
   * program has looked). */
  int flag = 0, go = 0;
  #pragma omp task shared(flag, go)
  {
    wait_for_go(&go);
    __atomic_store_n(&flag, 1, __ATOMIC_RELAXED);
  }
  CHECK(__atomic_load_n(&flag, __ATOMIC_RELAXED) == 0);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  #pragma omp taskwait
  CHECK(flag == 1);

  /* Named in a dependence: shared. k: firstprivate, its value at creation. */
  #pragma omp task out(b)
  {
    SLOW();
    for (int i = 0; i < N; ++i) b[i] = a[i] + k;
  }
  k = 100;
  #pragma omp task in(b[0:LAST]) inout(a)
  for (int i = 0; i < N; ++i) a[i] = b[i] * 2;
  #pragma omp taskwait
  for (int i = 0; i < N; ++i) CHECK(a[i] == 2 * (i + 5));

  /* shared / private / firstprivate / default clauses */
  int s = 0, p = 7, fp = 3;
  #pragma omp task shared(s) private(p) firstprivate(fp) out(s)
  {
    p = 1;
    s = fp + p;
    fp = 1000; /* the task's own copy */
  }
  #pragma omp taskwait
  CHECK(s == 4);
  CHECK(p == 7);
  CHECK(fp == 3);
  int d = 0;
  #pragma omp task default(shared)
  d = 9;
  #pragma omp taskwait
  CHECK(d == 9);

  /* A pointer dependence with a shape; a statement without braces after if */
  int *ptr = b;
  if (k > 0)
    #pragma omp task inout([N]ptr)
    for (int i = 0; i < N; ++i) ptr[i] = -1;
  #pragma omp taskwait
  CHECK(b[0] == -1 && b[LAST] == -1);

  /* taskwait on: waits for the writer of x only */
  int x = 0, y = 0;
  #pragma omp task out(x)
  {
    SLOW();
    x = 42;
  }
  #pragma omp task out(y)
  {
    SLOW();
    SLOW();
    y = 1;
  }
  #pragma omp taskwait on(x)
  CHECK(x == 42);
  #pragma omp taskwait noflush
  CHECK(y == 1);

  /* depend(inout: ...) chains */
  int chain = 0;
  for (int i = 0; i < 10; ++i) {
    #pragma omp task depend(inout: chain) firstprivate(i)
    {
      if (i == 0) SLOW();
      chain = chain * 2 + 1;
    }
  }
  #pragma omp taskwait
  CHECK(chain == 1023);

  /* critical and atomic inside concurrent tasks */
  long crit = 0, atom = 0;
  double fatom = 0;
  for (int i = 0; i < 40; ++i) {
    #pragma omp task shared(crit, atom, fatom)
    {
      #pragma omp critical(counter)
      {
        long t = crit;
        usleep(100);
        crit = t + 1;
      }
      #pragma omp atomic
      atom += 2;
      #pragma omp atomic
      fatom += 0.5;
    }
  }
  #pragma omp taskwait
  CHECK(crit == 40);
  CHECK(atom == 80);
  CHECK(fatom == 20.0);

  /* final(1): tasks created inside run at once */
  int inner = 0, was_final = 0;
  #pragma omp task final(1) shared(inner, was_final)
  {
    was_final = nanort_in_final();
    nanort_task *t = 0;
    (void)t;
    inner = 1;
  }
  /* if(0): runs before the statement completes */
  int undeferred = 0;
  #pragma omp task if(0) shared(undeferred)
  undeferred = 1;
  CHECK(undeferred == 1);
  #pragma omp taskwait
  CHECK(inner == 1);
  CHECK(was_final == 1);
  CHECK_DONE();
}
