/* SAXPY, native CUDA version: the blocks are split evenly across the GPUs; each GPU copies its
 * blocks in, runs the kernel and copies them out on a few streams, so that the copies of one
 * block overlap those of others (both copy directions) and the kernels. Host arrays are
 * page-locked (cudaMallocHost) so that the copies are asynchronous and at full speed. */
#include <cuda_runtime.h>

#include "saxpy.cu"
#include "saxpy.h"

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(e_));                   \
      exit(APP_FAILED);                                                                    \
    }                                                                                      \
  } while (0)

enum { MAX_GPUS = 16, STREAMS = 4 };

struct gpu {
  long first, end; /* its blocks [first, end) */
  float *x, *y;    /* device arrays of its blocks */
  cudaStream_t stream[STREAMS];
};

int main(int argc, char **argv) {
  struct saxpy_config cfg = saxpy_config(argc, argv, 1);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  int gpus = cfg.gpus > 0 && cfg.gpus < count ? cfg.gpus : count;
  long blocks = (cfg.n + cfg.bs - 1) / cfg.bs;
  if (gpus > blocks) gpus = (int)blocks;
  if (gpus > MAX_GPUS) gpus = MAX_GPUS;

  float *x, *y;
  CHECK(cudaMallocHost(&x, cfg.n * sizeof(float)));
  CHECK(cudaMallocHost(&y, cfg.n * sizeof(float)));
  struct gpu g[MAX_GPUS];
  for (int d = 0; d < gpus; ++d) {
    g[d].first = blocks * d / gpus;
    g[d].end = blocks * (d + 1) / gpus;
    size_t bytes = (g[d].end - g[d].first) * cfg.bs * sizeof(float);
    CHECK(cudaSetDevice(d));
    CHECK(cudaMalloc(&g[d].x, bytes));
    CHECK(cudaMalloc(&g[d].y, bytes));
    for (int s = 0; s < STREAMS; ++s) CHECK(cudaStreamCreate(&g[d].stream[s]));
  }

  double *times = (double *)malloc(cfg.reps * sizeof(double));
  for (int rep = -1; rep < cfg.reps; ++rep) { /* rep -1: the warm-up */
    saxpy_init(cfg.n, x, y);
    double start = app_now();
    for (int d = 0; d < gpus; ++d) {
      CHECK(cudaSetDevice(d));
      for (long b = g[d].first; b < g[d].end; ++b) {
        long i = b * cfg.bs;
        int len = (int)saxpy_length(&cfg, i);
        size_t bytes = len * sizeof(float);
        long at = i - g[d].first * cfg.bs; /* in the device arrays */
        float *dx = g[d].x + at, *dy = g[d].y + at;
        cudaStream_t s = g[d].stream[b % STREAMS];
        CHECK(cudaMemcpyAsync(dx, x + i, bytes, cudaMemcpyHostToDevice, s));
        CHECK(cudaMemcpyAsync(dy, y + i, bytes, cudaMemcpyHostToDevice, s));
        saxpy<<<(len + SAXPY_LOCAL - 1) / SAXPY_LOCAL, SAXPY_LOCAL, 0, s>>>(len, SAXPY_A, dx, dy);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(y + i, dy, bytes, cudaMemcpyDeviceToHost, s));
      }
    }
    for (int d = 0; d < gpus; ++d) {
      CHECK(cudaSetDevice(d));
      CHECK(cudaDeviceSynchronize());
    }
    app_record(times, rep, app_now() - start);
  }

  int ok = saxpy_check(cfg.n, y);
  app_report("saxpy", "native_cuda", gpus, cfg.size, times, cfg.reps, ok);
  for (int d = 0; d < gpus; ++d) {
    CHECK(cudaSetDevice(d));
    for (int s = 0; s < STREAMS; ++s) CHECK(cudaStreamDestroy(g[d].stream[s]));
    CHECK(cudaFree(g[d].x));
    CHECK(cudaFree(g[d].y));
  }
  CHECK(cudaFreeHost(x));
  CHECK(cudaFreeHost(y));
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
