/* NBody, native CUDA version: the bodies are split evenly (in blocks of bs) across the GPUs;
 * each GPU holds all positions of two steps and the velocities of its own bodies, and runs one
 * kernel per step over its bodies on a stream of its own. After each step every GPU copies its
 * new positions straight into the other GPUs' arrays (cudaMemcpyPeerAsync: over NVLink or PCIe
 * with peer access, else staged by the driver) and records an event; before the next step each
 * GPU's stream waits for the other GPUs' events. Nothing waits on the host until the results are
 * copied back. Host arrays are page-locked (cudaMallocHost) so that copies are asynchronous and
 * at full speed. */
#include <cuda_runtime.h>

#include "nbody.cu"
#include "nbody.h"

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
  long first, end; /* its bodies [first, end) */
  float4 *pos[2];  /* all positions, step s in pos[s % 2] */
  float4 *vel[2];  /* the velocities of its bodies */
  cudaStream_t stream;
  cudaEvent_t sent; /* its new positions are in every other GPU */
};

int main(int argc, char **argv) {
  struct nbody_config c = nbody_config(argc, argv, 1);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  long blocks = (c.n + c.bs - 1) / c.bs;
  int gpus = c.gpus > 0 && c.gpus < count ? c.gpus : count;
  if (gpus > blocks) gpus = (int)blocks;
  if (gpus > MAX_GPUS) gpus = MAX_GPUS;

  size_t bytes = c.n * sizeof(nbody_vec4);
  nbody_vec4 *pos[2], *vel[2];
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaMallocHost(&pos[b], bytes));
    CHECK(cudaMallocHost(&vel[b], bytes));
  }
  struct gpu g[MAX_GPUS];
  for (int d = 0; d < gpus; ++d) {
    g[d].first = blocks * d / gpus * c.bs;
    g[d].end = blocks * (d + 1) / gpus * c.bs;
    if (g[d].end > c.n) g[d].end = c.n;
    CHECK(cudaSetDevice(d));
    for (int b = 0; b < 2; ++b) {
      CHECK(cudaMalloc(&g[d].pos[b], bytes));
      CHECK(cudaMalloc(&g[d].vel[b], (g[d].end - g[d].first) * sizeof(float4)));
    }
    CHECK(cudaStreamCreateWithFlags(&g[d].stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&g[d].sent, cudaEventDisableTiming));
    for (int e = 0; e < gpus; ++e) { /* direct copies to the GPUs it can reach */
      int can = 0;
      if (e != d) CHECK(cudaDeviceCanAccessPeer(&can, d, e));
      if (can) CHECK(cudaDeviceEnablePeerAccess(e, 0));
    }
  }

  double *times = (double *)malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    nbody_init(c.n, pos[0], vel[0]);
    double start = app_now();
    for (int d = 0; d < gpus; ++d) {
      CHECK(cudaSetDevice(d));
      size_t own = (g[d].end - g[d].first) * sizeof(float4);
      CHECK(cudaMemcpyAsync(g[d].pos[0], pos[0], bytes, cudaMemcpyHostToDevice, g[d].stream));
      CHECK(cudaMemcpyAsync(g[d].vel[0], vel[0] + g[d].first, own, cudaMemcpyHostToDevice,
                            g[d].stream));
    }
    for (int s = 0; s < c.steps; ++s) {
      int cur = s % 2, nxt = 1 - cur;
      int exchange = gpus > 1 && s + 1 < c.steps;
      for (int d = 0; d < gpus; ++d) {
        CHECK(cudaSetDevice(d));
        int first = (int)g[d].first, bodies = (int)(g[d].end - g[d].first);
        dim3 grid((bodies + NBODY_GROUP - 1) / NBODY_GROUP), block(NBODY_GROUP, NBODY_SPLIT);
        nbody_step<<<grid, block, 0, g[d].stream>>>((int)c.n, first, bodies, NBODY_DT, NBODY_EPS2,
                                                    g[d].pos[cur], g[d].vel[cur],
                                                    g[d].pos[nxt] + first, g[d].vel[nxt]);
        CHECK(cudaGetLastError());
        if (!exchange) continue;
        for (int e = 0; e < gpus; ++e)
          if (e != d)
            CHECK(cudaMemcpyPeerAsync(g[e].pos[nxt] + first, e, g[d].pos[nxt] + first, d,
                                      bodies * sizeof(float4), g[d].stream));
        CHECK(cudaEventRecord(g[d].sent, g[d].stream));
      }
      if (!exchange) continue;
      for (int d = 0; d < gpus; ++d) { /* the next step reads every GPU's new positions */
        CHECK(cudaSetDevice(d));
        for (int e = 0; e < gpus; ++e)
          if (e != d) CHECK(cudaStreamWaitEvent(g[d].stream, g[e].sent, 0));
      }
    }
    /* The results: the last step and the one before (the check needs both). */
    for (int d = 0; d < gpus; ++d) {
      CHECK(cudaSetDevice(d));
      size_t own = (g[d].end - g[d].first) * sizeof(float4);
      for (int s = c.steps; s >= c.steps - 1 && s >= 1; --s) {
        CHECK(cudaMemcpyAsync(pos[s % 2] + g[d].first, g[d].pos[s % 2] + g[d].first, own,
                              cudaMemcpyDeviceToHost, g[d].stream));
        CHECK(cudaMemcpyAsync(vel[s % 2] + g[d].first, g[d].vel[s % 2], own,
                              cudaMemcpyDeviceToHost, g[d].stream));
      }
    }
    for (int d = 0; d < gpus; ++d) CHECK(cudaStreamSynchronize(g[d].stream));
    app_record(times, rep, app_now() - start);
  }

  int ok = nbody_check(&c, pos, vel);
  app_report("nbody", "native_cuda", gpus, c.size, times, c.reps, ok);
  for (int d = 0; d < gpus; ++d) {
    CHECK(cudaSetDevice(d));
    for (int b = 0; b < 2; ++b) {
      CHECK(cudaFree(g[d].pos[b]));
      CHECK(cudaFree(g[d].vel[b]));
    }
    CHECK(cudaStreamDestroy(g[d].stream));
    CHECK(cudaEventDestroy(g[d].sent));
  }
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaFreeHost(pos[b]));
    CHECK(cudaFreeHost(vel[b]));
  }
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
