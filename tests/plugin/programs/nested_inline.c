/* C inline tasks nested inside inline tasks: shared, firstprivate and private captures seen
 * through one and two levels, dependences between the nested tasks, 'taskwait' and
 * 'taskwait on' inside a task, a nested task in a loop of the outer body. */
#include "check.h"

static void tree(int *out) {
  int total = 0; /* shared by every level */
  int base = 10; /* firstprivate in the outer task */
  #pragma omp task inout(total) firstprivate(base)
  {
    int part[4] = {0, 0, 0, 0}; /* local to the outer body, shared with the nested tasks */
    for (int i = 0; i < 4; ++i) {
      #pragma omp task out(part[i]) firstprivate(base)
      {
        SLOW();
        part[i] = base + i;
      }
    }
    #pragma omp task in(part) inout(total)
    {
      for (int i = 0; i < 4; ++i) total += part[i]; /* 46 */
      int extra = 0;
      #pragma omp task inout(extra)
      extra = 100;
      #pragma omp taskwait on(extra)
      total += extra; /* 146 */
    }
    #pragma omp taskwait
    base = -1; /* the outer task's own copy */
    total += part[3]; /* 159 */
  }
  #pragma omp taskwait
  *out = total;
}

int main(void) {
  int result = 0;
  tree(&result);
  CHECK(result == 159);

  /* A shared scalar updated by a nested task, ordered by its dependences. */
  double acc = 1.0;
  int scratch;
  #pragma omp task inout(acc) private(scratch)
  {
    scratch = 3;
    #pragma omp task inout(acc) firstprivate(scratch)
    {
      SLOW();
      acc *= scratch;
    }
    #pragma omp task inout(acc)
    acc += 1.0;
  }
  #pragma omp taskwait
  CHECK(acc == 4.0);
  CHECK_DONE();
}
