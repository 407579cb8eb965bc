/* Pragmas written with _Pragma: directly, through object-like macros, and through a
 * function-like macro that builds the pragma's text with the preprocessor (the usual way to
 * put a macro argument into a _Pragma). Tasks, target, taskwait and critical. */
#include "check.h"

#define STR(x) #x
#define TASK_INOUT(v) _Pragma(STR(omp task inout(v)))
#define WAIT _Pragma("omp taskwait")
#define CRITICAL _Pragma("oss critical")

_Pragma("omp target device(smp)") _Pragma("omp task inout(*x) label(add_one)")
static void add_one(int *x) {
  SLOW();
  *x += 1;
}

int main(void) {
  int a = 0, b = 0, hits = 0;
  _Pragma("omp task inout(a)")
  {
    SLOW();
    a += 5;
  }
  add_one(&a); /* after the inline task: both write a */
  TASK_INOUT(b)
  b += 7;
  for (int i = 0; i < 8; ++i) {
    _Pragma("omp task shared(hits)")
    {
      CRITICAL
      hits += 1;
    }
  }
  WAIT
  CHECK(a == 6);
  CHECK(b == 7);
  CHECK(hits == 8);
  CHECK_DONE();
}
