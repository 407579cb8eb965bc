/* Heat, native CUDA version with a CUDA Graph, on one GPU: the program of native_cuda.cu, its
 * time loop captured by hand. Two steps, a sweep of every block from grid 0 into grid 1 and
 * one back, are captured once from the stream (the graph keeps the stream's order: kernel
 * after kernel) and instantiated; a repetition copies the grid in, launches the graph steps / 2
 * times, launches an odd last step's kernels directly, and copies the result home. The host
 * grid is page-locked (cudaMallocHost) so that the copies are asynchronous and at full speed. */
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

/* One step: a kernel per block of rows, from src into dst, on the stream. */
static void sweep(const struct heat_config *c, cudaStream_t stream, const float *src, float *dst) {
  int n = (int)c->n;
  for (int k = 0; k < c->blocks; ++k) {
    int first = heat_first(c, k), rows = heat_rows(c, k);
    long at = (long)first * n;
    dim3 groups((n + HEAT_LOCAL_X - 1) / HEAT_LOCAL_X, (rows + HEAT_LOCAL_Y - 1) / HEAT_LOCAL_Y);
    dim3 threads(HEAT_LOCAL_X, HEAT_LOCAL_Y);
    heat_sweep<<<groups, threads, 0, stream>>>(n, first, rows, src + at, dst + at);
    CHECK(cudaGetLastError());
  }
}

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

  /* The graph is set-up, like the allocations and the stream: made once, before the
   * repetitions, and not timed (its time is printed on its own line). It holds the device
   * grids' addresses, which stay the same in every repetition. */
  double setup = app_now();
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  sweep(&c, stream, dev[0], dev[1]);
  sweep(&c, stream, dev[1], dev[0]);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphUpload(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  printf("graph: two steps (%d kernels) captured, instantiated and uploaded in %.3f ms, "
         "not timed\n", 2 * c.blocks, 1e3 * (app_now() - setup));

  /* Timed: the copy in, the graph launches and the odd step, the copy out. */
  double *times = (double *)malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    heat_init(n, grid);
    double start = app_now();
    /* Only grid 0 goes in: the kernels write every point of the grid they sweep into. */
    CHECK(cudaMemcpyAsync(dev[0], grid, bytes, cudaMemcpyHostToDevice, stream));
    for (int s = 0; s + 1 < c.steps; s += 2) CHECK(cudaGraphLaunch(exec, stream));
    if (c.steps % 2) sweep(&c, stream, dev[0], dev[1]);
    CHECK(cudaMemcpyAsync(grid, dev[c.steps % 2], bytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    app_record(times, rep, app_now() - start);
  }

  int ok = heat_check(&c, grid);
  app_report("heat", "native_cuda_graph", 1, c.size, times, c.reps, ok);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(dev[0]));
  CHECK(cudaFree(dev[1]));
  CHECK(cudaFreeHost(grid));
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
