/* Blocked matmul, native CUDA version: the tile rows of C are split evenly across the GPUs;
 * each GPU holds its tile rows of A and C and all of B. Three streams per GPU: copies in, tile
 * kernels, copies out, ordered by events, so that each C tile's inputs move while the previous
 * tile computes and each finished C tile moves home while the next computes. B arrives column
 * by column during the first tile row. Host matrices are page-locked (cudaMallocHost). */
#include <cuda_runtime.h>

#include "matmul.cu"
#include "matmul.h"

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(e_));                   \
      exit(APP_FAILED);                                                                    \
    }                                                                                      \
  } while (0)

enum { MAX_GPUS = 16 };

struct gpu {
  long first, end;             /* its tile rows of C [first, end) */
  float *a, *b, *c;            /* A and C: its tile rows; B: all of it */
  cudaStream_t in, run, out;   /* copies in, kernels, copies out */
  cudaEvent_t copied, computed;
};

int main(int argc, char **argv) {
  struct matmul_config cfg = matmul_config(argc, argv, 1);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  int gpus = cfg.gpus > 0 && cfg.gpus < count ? cfg.gpus : count;
  if (gpus > cfg.nt) gpus = (int)cfg.nt;
  if (gpus > MAX_GPUS) gpus = MAX_GPUS;
  size_t tile = cfg.nb * cfg.nb * sizeof(float), matrix = cfg.nt * cfg.nt * tile;

  float *a, *b, *c;
  CHECK(cudaMallocHost(&a, matrix));
  CHECK(cudaMallocHost(&b, matrix));
  CHECK(cudaMallocHost(&c, matrix));
  matmul_init(&cfg, a, b);
  struct gpu g[MAX_GPUS];
  for (int d = 0; d < gpus; ++d) {
    g[d].first = cfg.nt * d / gpus;
    g[d].end = cfg.nt * (d + 1) / gpus;
    size_t rows = (g[d].end - g[d].first) * cfg.nt * tile;
    CHECK(cudaSetDevice(d));
    CHECK(cudaMalloc(&g[d].a, rows));
    CHECK(cudaMalloc(&g[d].b, matrix));
    CHECK(cudaMalloc(&g[d].c, rows));
    CHECK(cudaStreamCreate(&g[d].in));
    CHECK(cudaStreamCreate(&g[d].run));
    CHECK(cudaStreamCreate(&g[d].out));
    CHECK(cudaEventCreateWithFlags(&g[d].copied, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&g[d].computed, cudaEventDisableTiming));
  }
  dim3 threads(MATMUL_THREADS, MATMUL_THREADS);
  int per_block = MATMUL_THREADS * MATMUL_PER_THREAD; /* C elements per block and dimension */
  dim3 blocks(cfg.nb / per_block, cfg.nb / per_block);

  double *times = (double *)malloc(cfg.reps * sizeof(double));
  for (int rep = -1; rep < cfg.reps; ++rep) { /* rep -1: the warm-up */
    matmul_clear(&cfg, c);
    double start = app_now();
    for (int d = 0; d < gpus; ++d) {
      struct gpu *u = &g[d];
      CHECK(cudaSetDevice(d));
      for (long i = u->first; i < u->end; ++i)
        for (long j = 0; j < cfg.nt; ++j) {
          /* The GPU's A and C hold tile rows first to end, in the host's layout. */
          float *dc = matmul_tile_at(&cfg, u->c, i - u->first, j);
          /* What C[i][j]'s products need that is not there yet: the C tile, A's tile row i
           * (with the row's first tile), B's tile column j (during the first tile row). */
          CHECK(cudaMemcpyAsync(dc, matmul_tile_at(&cfg, c, i, j), tile, cudaMemcpyHostToDevice,
                                u->in));
          if (j == 0)
            CHECK(cudaMemcpyAsync(matmul_tile_at(&cfg, u->a, i - u->first, 0),
                                  matmul_tile_at(&cfg, a, i, 0), cfg.nt * tile,
                                  cudaMemcpyHostToDevice, u->in));
          if (i == u->first) /* nt tiles, one tile row apart */
            CHECK(cudaMemcpy2DAsync(matmul_tile_at(&cfg, u->b, 0, j), cfg.nt * tile,
                                    matmul_tile_at(&cfg, b, 0, j), cfg.nt * tile, tile, cfg.nt,
                                    cudaMemcpyHostToDevice, u->in));
          CHECK(cudaEventRecord(u->copied, u->in));
          CHECK(cudaStreamWaitEvent(u->run, u->copied, 0));
          for (long k = 0; k < cfg.nt; ++k) {
            matmul_tile<<<blocks, threads, 0, u->run>>>(
                (int)cfg.nb, matmul_tile_at(&cfg, u->a, i - u->first, k),
                matmul_tile_at(&cfg, u->b, k, j), dc);
            CHECK(cudaGetLastError());
          }
          CHECK(cudaEventRecord(u->computed, u->run));
          CHECK(cudaStreamWaitEvent(u->out, u->computed, 0));
          CHECK(cudaMemcpyAsync(matmul_tile_at(&cfg, c, i, j), dc, tile, cudaMemcpyDeviceToHost,
                                u->out));
        }
    }
    for (int d = 0; d < gpus; ++d) {
      CHECK(cudaSetDevice(d));
      CHECK(cudaDeviceSynchronize());
    }
    app_record(times, rep, app_now() - start);
  }

  int ok = matmul_check(&cfg, a, b, c);
  app_report("matmul", "native_cuda", gpus, cfg.size, times, cfg.reps, ok);
  for (int d = 0; d < gpus; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaEventDestroy(g[d].copied));
    CHECK(cudaEventDestroy(g[d].computed));
    CHECK(cudaStreamDestroy(g[d].in));
    CHECK(cudaStreamDestroy(g[d].run));
    CHECK(cudaStreamDestroy(g[d].out));
    CHECK(cudaFree(g[d].a));
    CHECK(cudaFree(g[d].b));
    CHECK(cudaFree(g[d].c));
  }
  CHECK(cudaFreeHost(a));
  CHECK(cudaFreeHost(b));
  CHECK(cudaFreeHost(c));
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
