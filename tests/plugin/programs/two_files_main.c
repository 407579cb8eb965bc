/* Calls task functions defined in another file (two_files_task.c). */
#include "check.h"
#include "two_files.h"

int main(void) {
  double v[8];
  for (int i = 0; i < 8; ++i) v[i] = 1;
  scale(8, v, 2.0);
  offset(8, v, 1.0);
  scale(8, v, 3.0);
  double first = 0;
  #pragma omp task in(v) out(first)
  first = v[0];
  #pragma omp taskwait
  CHECK(first == 9.0);
  for (int i = 0; i < 8; ++i) CHECK(v[i] == 9.0);
  CHECK_DONE();
}
