/* C inline tasks whose bodies call the function they are in (the outlined bodies come before
 * that function, with a declaration of it), and a taskwait that waits for them. */
#include "check.h"

int fib(int n) {
  int x, y;
  if (n < 2) return n;
  #pragma omp task shared(x) firstprivate(n)
  x = fib(n - 1);
  #pragma omp task shared(y) firstprivate(n)
  y = fib(n - 2);
  #pragma omp taskwait
  return x + y;
}

static long sum_to(long n) {
  long rest = 0;
  if (n == 0) return 0;
  #pragma omp task shared(rest)
  rest = sum_to(n - 1);
  #pragma omp taskwait
  return n + rest;
}

int main(void) {
  CHECK(fib(18) == 2584);
  CHECK(sum_to(100) == 5050);
  CHECK_DONE();
}
