/* omp_in_final() as OmpSs programs use it: a cut-off that stops making tasks once a task is
 * final, with a stub of their own for builds without OpenMP (nanocc does not define _OPENMP,
 * so the stub is compiled here). Calls of omp_in_final() are the runtime's answer all the same:
 * inside final tasks they return 1. Compared with the sequential computation. */
#include "check.h"

#ifndef _OPENMP
int omp_in_final(void) { return 0; }
#endif

static long serial_sum(const int *v, int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}

static int final_calls, other_calls;

/* Splits in two tasks; below 'cutoff' elements the tasks are final, and their children (and
 * the omp_in_final() checks in them) run at once. */
static long tree_sum(const int *v, int n, int cutoff) {
  long left = 0, right = 0;
  if (n <= 8) {
    if (omp_in_final()) {
      #pragma omp atomic
      final_calls++;
    } else {
      #pragma omp atomic
      other_calls++;
    }
    return serial_sum(v, n);
  }
  #pragma omp task shared(left) final(n / 2 <= cutoff)
  left = tree_sum(v, n / 2, cutoff);
  #pragma omp task shared(right) final(n - n / 2 <= cutoff)
  right = tree_sum(v + n / 2, n - n / 2, cutoff);
  #pragma omp taskwait
  return left + right;
}

int main(void) {
  enum { N = 1000 };
  static int v[N];
  for (int i = 0; i < N; ++i) v[i] = (i * 7919) % 1000 - 300;
  const long expected = serial_sum(v, N);

  CHECK(omp_in_final() == 0); /* outside any task */
  CHECK(tree_sum(v, N, 0) == expected);
  CHECK(final_calls == 0 && other_calls > 0);

  final_calls = other_calls = 0;
  CHECK(tree_sum(v, N, N) == expected); /* every task final */
  CHECK(final_calls > 0 && other_calls == 0);

  int in_final = -1;
  #pragma omp task shared(in_final) final(1)
  in_final = omp_in_final();
  #pragma omp taskwait
  CHECK(in_final == 1);
  CHECK_DONE();
}
