/* Heat, native CUDA version, on one GPU: the two grids in device memory, allocated once; per
 * repetition the grid is copied in, each step launches one kernel per block of rows on one
 * stream (the blocks of a step are independent, the stream orders the steps) and swaps the
 * grids, and the result is copied home. The host grid is page-locked (cudaMallocHost) so that
 * the copies are asynchronous and at full speed. */
#include <cuda_runtime.h>

#include "heat.cu"
#include "heat.h"

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(e_));                   \
      exit(APP_FAILED);                                                                    \
    }                                                                                      \
  } while (0)

int main(int argc, char **argv) {
  struct heat_config c = heat_config(argc, argv, 1);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  int n = (int)c.n;
  size_t bytes = (size_t)n * n * sizeof(float);
  float *grid, *dev[2];
  CHECK(cudaSetDevice(0));
  CHECK(cudaMallocHost(&grid, bytes));
  CHECK(cudaMalloc(&dev[0], bytes));
  CHECK(cudaMalloc(&dev[1], bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  double *times = (double *)malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    heat_init(n, grid);
    double start = app_now();
    float *a = dev[0], *b = dev[1];
    /* Only a goes in: the kernels write every point of b, boundary included. */
    CHECK(cudaMemcpyAsync(a, grid, bytes, cudaMemcpyHostToDevice, stream));
    for (int s = 0; s < c.steps; ++s) {
      for (int k = 0; k < c.blocks; ++k) {
        int first = heat_first(&c, k), rows = heat_rows(&c, k);
        long at = (long)first * n;
        dim3 groups((n + HEAT_LOCAL_X - 1) / HEAT_LOCAL_X, (rows + HEAT_LOCAL_Y - 1) / HEAT_LOCAL_Y);
        dim3 threads(HEAT_LOCAL_X, HEAT_LOCAL_Y);
        heat_sweep<<<groups, threads, 0, stream>>>(n, first, rows, a + at, b + at);
        CHECK(cudaGetLastError());
      }
      float *t = a;
      a = b;
      b = t;
    }
    CHECK(cudaMemcpyAsync(grid, a, bytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    app_record(times, rep, app_now() - start);
  }

  int ok = heat_check(&c, grid);
  app_report("heat", "native_cuda", 1, c.size, times, c.reps, ok);
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(dev[0]));
  CHECK(cudaFree(dev[1]));
  CHECK(cudaFreeHost(grid));
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
