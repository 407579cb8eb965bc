/* The main demo (scripts/demo.sh): the blocked matmul with three implementations of its tile
 * product, so that it runs on whatever the machine has: the OpenCL kernel (any OpenCL device:
 * a GPU, or PoCL on the CPU), the CUDA kernel (NVIDIA GPUs), and plain C on the CPU workers.
 * The scheduler picks one per tile product (demo.sh runs it with dmda, which tries each place
 * and then prefers the fastest); the result is checked and NANORT_STATS=1 prints where the
 * tasks ran and what moved.
 *   matmul_demo [--n=N] [--nb=NB] [--reps=R]     (defaults: n 512, nb 64) */
#include <nanort/nanort.h>

#include "matmul.h"

#pragma omp target device(opencl) ndrange(2, nb / MATMUL_PER_THREAD, nb / MATMUL_PER_THREAD, \
                                         MATMUL_THREADS, MATMUL_THREADS) copy_deps
#pragma omp task in([nb * nb]a, [nb * nb]b) inout([nb * nb]c)
__kernel void matmul_tile(int nb, __global const float *a, __global const float *b,
                          __global float *c);

#ifdef MATMUL_DEMO_CUDA
#pragma omp target device(cuda) ndrange(2, nb / MATMUL_PER_THREAD, nb / MATMUL_PER_THREAD, \
                                       MATMUL_THREADS, MATMUL_THREADS) copy_deps \
    name(matmul_tile) implements(matmul_tile)
#pragma omp task
__global__ void matmul_tile_cuda(int nb, const float *a, const float *b, float *c);
#endif

/* The CPU workers' version: the same product, row by row. */
#pragma omp target device(smp) implements(matmul_tile)
#pragma omp task
void matmul_tile_cpu(int nb, const float *a, const float *b, float *c) {
  for (int i = 0; i < nb; ++i)
    for (int k = 0; k < nb; ++k) {
      const float aik = a[i * nb + k];
      for (int j = 0; j < nb; ++j) c[i * nb + j] += aik * b[k * nb + j];
    }
}

int main(int argc, char **argv) {
  static const char *const options[] = {"n", "nb", "reps", NULL};
  app_check_options(argc, argv, options);
  char n_option[32], nb_option[32], reps_option[32];
  snprintf(n_option, sizeof n_option, "--n=%ld", app_option(argc, argv, "n", 512));
  snprintf(nb_option, sizeof nb_option, "--nb=%ld", app_option(argc, argv, "nb", 64));
  snprintf(reps_option, sizeof reps_option, "--reps=%ld", app_option(argc, argv, "reps", 3));
  char *config_argv[] = {argv[0], n_option, nb_option, reps_option, NULL};
  struct matmul_config cfg = matmul_config(4, config_argv, 0);

  size_t matrix = cfg.n * cfg.n * sizeof(float);
  float *a = (float *)malloc(matrix), *b = (float *)malloc(matrix), *c = (float *)malloc(matrix);
  matmul_init(&cfg, a, b);
  double *times = (double *)malloc(cfg.reps * sizeof(double));
  for (int rep = -1; rep < cfg.reps; ++rep) { /* rep -1: the warm-up */
    matmul_clear(&cfg, c);
    double start = app_now();
    for (long i = 0; i < cfg.nt; ++i)
      for (long j = 0; j < cfg.nt; ++j)
        for (long k = 0; k < cfg.nt; ++k)
          matmul_tile((int)cfg.nb, matmul_tile_at(&cfg, a, i, k), matmul_tile_at(&cfg, b, k, j),
                      matmul_tile_at(&cfg, c, i, j));
    #pragma omp taskwait
    app_record(times, rep, app_now() - start);
  }
  int ok = matmul_check(&cfg, a, b, c);
  printf("matmul demo: %ld x %ld floats in %ld x %ld tiles; CPU workers %d, OpenCL devices %d, "
         "CUDA GPUs %d\n", cfg.n, cfg.n, cfg.nt, cfg.nt, nanort_device_count(NANORT_DEVICE_SMP),
         nanort_device_count(NANORT_DEVICE_OPENCL), nanort_device_count(NANORT_DEVICE_CUDA));
  app_report("matmul", "demo", nanort_device_count(NANORT_DEVICE_OPENCL) +
                                   nanort_device_count(NANORT_DEVICE_CUDA),
             cfg.size, times, cfg.reps, ok);
  free(a);
  free(b);
  free(c);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
