#include "check.h"
#include "two_files.h"

void scale(int n, double *v, double f) {
  SLOW();
  for (int i = 0; i < n; ++i) v[i] *= f;
}

#pragma omp task inout([n]v)
void offset(int n, double *v, double d) {
  SLOW();
  for (int i = 0; i < n; ++i) v[i] += d;
}
