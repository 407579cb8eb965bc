/* An OmpSs-1 program as mcc takes it: printf without <stdio.h> (an implicit declaration: a
 * warning for mcc's gcc, an error for clang 19 unless nanocc keeps it a warning), Nanos++'s
 * routines without their header (mcc declares them in every OmpSs file), sqrt without -lm. */
#include <math.h>
#include <nanort/nanort.h>

#pragma omp task in([n]x) out([1]norm)
void norm2(int n, const double *x, double *norm) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * x[i];
  *norm = sqrt(s);
}

int main(int argc, char **argv) {
  (void)argv;
  int failures = 0;
  const int n = 1000 + argc; /* (not a constant: sqrt is called, not folded) */
  double *x = nanos_malloc_pinned_cuda(n * sizeof(double));
  for (int i = 0; i < n; ++i) x[i] = 1.0;
  double norm = 0;
  norm2(n, x, &norm);
  #pragma omp taskwait
  if (fabs(norm - sqrt((double)n)) > 1e-9) {
    printf("FAILED: norm %f, expected %f\n", norm, sqrt((double)n));
    ++failures;
  }
  nanos_free_pinned_cuda(x);
  if ((int)nanos_get_opencl_num_devices() != nanort_device_count(NANORT_DEVICE_OPENCL) ||
      (int)nanos_get_cuda_num_devices() != nanort_device_count(NANORT_DEVICE_CUDA)) {
    printf("FAILED: Nanos++'s device counts differ from nanort's\n");
    ++failures;
  }
  void *buffer = ompss_opencl_malloc(64);
  ompss_opencl_free(buffer);
  if (failures) return 1;
  printf("all results correct\n");
  return 0;
}
