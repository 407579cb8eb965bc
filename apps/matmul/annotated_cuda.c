/* Blocked matmul, annotated version with the CUDA kernel (matmul.cu): one task per tile
 * product C[i][j] += A[i][k] * B[k][j]; the runtime orders the products of each C tile, moves
 * the tiles to the GPUs as the tasks need them and, at the taskwait, brings C home. */
#include <nanort/nanort.h>

#include "matmul.h"

#pragma omp target device(cuda) ndrange(2, nb / MATMUL_PER_THREAD, nb / MATMUL_PER_THREAD, \
                                         MATMUL_THREADS, MATMUL_THREADS) copy_deps
#pragma omp task in([nb * nb]a, [nb * nb]b) inout([nb * nb]c)
__global__ void matmul_tile(int nb, const float *a, const float *b, float *c);

int main(int argc, char **argv) {
  struct matmul_config cfg = matmul_config(argc, argv, 0);
  int devices = nanort_device_count(NANORT_DEVICE_CUDA);
  if (devices == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
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
  app_report("matmul", "annotated_cuda", devices, cfg.size, times, cfg.reps, ok);
  free(a);
  free(b);
  free(c);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
