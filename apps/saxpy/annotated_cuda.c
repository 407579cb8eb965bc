/* SAXPY, annotated version with the CUDA kernel (saxpy.cu): one task per block; the runtime
 * moves each block's data to a GPU, runs the kernel and, at the taskwait, brings y home. */
#include <nanort/nanort.h>

#include "saxpy.h"

#pragma omp target device(cuda) ndrange(1, n, SAXPY_LOCAL) copy_deps
#pragma omp task in([n]x) inout([n]y)
__global__ void saxpy(int n, float a, const float *x, float *y);

int main(int argc, char **argv) {
  struct saxpy_config cfg = saxpy_config(argc, argv, 0);
  int devices = nanort_device_count(NANORT_DEVICE_CUDA);
  if (devices == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  float *x = (float *)malloc(cfg.n * sizeof(float)), *y = (float *)malloc(cfg.n * sizeof(float));

  double *times = (double *)malloc(cfg.reps * sizeof(double));
  for (int rep = -1; rep < cfg.reps; ++rep) { /* rep -1: the warm-up */
    saxpy_init(cfg.n, x, y);
    double start = app_now();
    for (long i = 0; i < cfg.n; i += cfg.bs)
      saxpy((int)saxpy_length(&cfg, i), SAXPY_A, x + i, y + i);
    #pragma omp taskwait
    app_record(times, rep, app_now() - start);
  }

  int ok = saxpy_check(cfg.n, y);
  app_report("saxpy", "annotated_cuda", devices, cfg.size, times, cfg.reps, ok);
  free(x);
  free(y);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
