/* The data environment of a task lives until its children are done (OmpSs-2; issue 19): an
 * outer task with private and firstprivate variables creates inner tasks that share them and
 * does not wait for them. Many outer tasks run one after the other on the same workers, so
 * storage that died with an outer body would be overwritten by the next one before the inner
 * tasks (which sleep first) read it. Each result is compared with the sequential run. */
#include <string.h>

#include "check.h"

enum { OUTER = 16, LEN = 4 };

/* OmpSs-2: private(c, v, vla), firstprivate(f, result); the inner task shares them (the
 * function returns at once: its own variables die). */
static void outer_tasks(int n, int *result) {
  int c = -1, v[LEN], vla[n], f = 0;
  memset(v, 0, sizeof v);
  memset(vla, 0, sizeof vla);
  for (int k = 0; k < OUTER; ++k) {
    f = 1000 * k;
    #pragma oss task private(c, v, vla) firstprivate(f, result)
    {
      c = k;
      for (int i = 0; i < LEN; ++i)
        v[i] = 10 * k + i;
      for (int i = 0; i < n; ++i)
        vla[i] = k + i;
      #pragma oss task shared(c, v, vla, f, result)
      {
        SLOW();
        int sum = c + f;
        for (int i = 0; i < LEN; ++i)
          sum += v[i];
        for (int i = 0; i < n; ++i)
          sum += vla[i];
        c = -2; /* the outer's private copy, alive still */
        result[k] = sum;
      }
    }
  }
}

/* OmpSs-1: private scratch that two levels of children share; the middle task returns at
 * once ('out', firstprivate in the outer and middle tasks, is shared by the innermost). */
static void nested_scratch(long *out) {
  long scratch[8];
  for (int k = 0; k < OUTER; ++k) {
    #pragma omp task private(scratch)
    {
      for (int i = 0; i < 8; ++i)
        scratch[i] = k * i;
      #pragma omp task shared(scratch)
      {
        #pragma omp task shared(scratch, out)
        {
          SLOW();
          long s = 0;
          for (int i = 0; i < 8; ++i)
            s += scratch[i];
          out[k] = s;
        }
      }
    }
  }
}

int main(void) {
  int n = 5;
  int result[OUTER];
  long out[OUTER];
  outer_tasks(n, result);
  nested_scratch(out);
  #pragma oss taskwait
  for (int k = 0; k < OUTER; ++k) {
    int expect = k + 1000 * k;
    for (int i = 0; i < LEN; ++i)
      expect += 10 * k + i;
    for (int i = 0; i < n; ++i)
      expect += k + i;
    CHECK(result[k] == expect);
    long s = 0;
    for (int i = 0; i < 8; ++i)
      s += (long)k * i;
    CHECK(out[k] == s);
  }
  CHECK_DONE();
}
