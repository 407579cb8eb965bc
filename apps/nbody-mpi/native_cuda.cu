/* NBody across MPI ranks, native CUDA version: each rank computes its own bodies on its GPU
 * (one GPU per rank when ranks share a node; all the node's GPUs, splitting the rank's bodies,
 * when the rank is alone on it). Each GPU holds all positions of two steps and the velocities
 * of its own bodies, and runs one kernel per step over them on a stream of its own. After each
 * step the GPUs copy their new positions home, MPI_Allgather gives every rank all the new
 * positions, and each GPU gets back the positions it did not compute. Host arrays are
 * page-locked (cudaMallocHost) so that copies are asynchronous and at full speed. */
#include <cuda_runtime.h>

#include "../nbody/nbody.cu"
#include "nbody_mpi.h"

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(e_));                   \
      MPI_Abort(MPI_COMM_WORLD, APP_FAILED);                                               \
    }                                                                                      \
  } while (0)

enum { MAX_GPUS = 16 };

struct gpu {
  int id;          /* CUDA device number */
  long first, end; /* its bodies [first, end) */
  float4 *pos[2];  /* all positions, step s in pos[s % 2] */
  float4 *vel[2];  /* the velocities of its bodies */
  cudaStream_t stream;
};

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  struct nbody_mpi m;
  int ok;
  struct nbody_config c = nbody_mpi_config(argc, argv, 1, &m, &ok);
  if (!ok) {
    MPI_Finalize();
    return APP_FAILED;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (!nbody_mpi_all(count > 0)) { /* every rank skips if one has no GPU */
    if (m.rank == 0) printf("SKIP: no CUDA device on some rank\n");
    MPI_Finalize();
    return APP_SKIP;
  }
  int base, gpus = nbody_mpi_devices(&c, &m, count, &base);
  if (gpus > MAX_GPUS) gpus = MAX_GPUS;
  long blocks = (m.own + c.bs - 1) / c.bs;

  size_t bytes = c.n * sizeof(nbody_vec4);
  nbody_vec4 *pos[2], *vel[2];
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaMallocHost(&pos[b], bytes));
    CHECK(cudaMallocHost(&vel[b], bytes));
  }
  struct gpu g[MAX_GPUS];
  for (int d = 0; d < gpus; ++d) {
    g[d].id = base + d;
    g[d].first = m.first + blocks * d / gpus * c.bs;
    g[d].end = m.first + blocks * (d + 1) / gpus * c.bs;
    if (g[d].end > m.first + m.own) g[d].end = m.first + m.own;
    CHECK(cudaSetDevice(g[d].id));
    for (int b = 0; b < 2; ++b) {
      CHECK(cudaMalloc(&g[d].pos[b], bytes));
      CHECK(cudaMalloc(&g[d].vel[b], (g[d].end - g[d].first) * sizeof(float4)));
    }
    CHECK(cudaStreamCreateWithFlags(&g[d].stream, cudaStreamNonBlocking));
  }

  double *times = (double *)malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    nbody_init(c.n, pos[0], vel[0]);
    MPI_Barrier(MPI_COMM_WORLD); /* the ranks start together */
    double start = app_now();
    for (int d = 0; d < gpus; ++d) {
      CHECK(cudaSetDevice(g[d].id));
      size_t own = (g[d].end - g[d].first) * sizeof(float4);
      CHECK(cudaMemcpyAsync(g[d].pos[0], pos[0], bytes, cudaMemcpyHostToDevice, g[d].stream));
      CHECK(cudaMemcpyAsync(g[d].vel[0], vel[0] + g[d].first, own, cudaMemcpyHostToDevice,
                            g[d].stream));
    }
    for (int s = 0; s < c.steps; ++s) {
      int cur = s % 2, nxt = 1 - cur;
      for (int d = 0; d < gpus; ++d) {
        CHECK(cudaSetDevice(g[d].id));
        int first = (int)g[d].first, bodies = (int)(g[d].end - g[d].first);
        dim3 grid((bodies + NBODY_GROUP - 1) / NBODY_GROUP), block(NBODY_GROUP, NBODY_SPLIT);
        nbody_step<<<grid, block, 0, g[d].stream>>>((int)c.n, first, bodies, NBODY_DT, NBODY_EPS2,
                                                    g[d].pos[cur], g[d].vel[cur],
                                                    g[d].pos[nxt] + first, g[d].vel[nxt]);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(pos[nxt] + first, g[d].pos[nxt] + first, bodies * sizeof(float4),
                              cudaMemcpyDeviceToHost, g[d].stream));
      }
      for (int d = 0; d < gpus; ++d) CHECK(cudaStreamSynchronize(g[d].stream));
      /* The rank's part is in place in pos[nxt]; the other ranks' parts arrive around it. */
      MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, pos[nxt], (int)(4 * m.own), MPI_FLOAT,
                    MPI_COMM_WORLD);
      if (s + 1 == c.steps) continue;
      for (int d = 0; d < gpus; ++d) { /* the positions it did not compute, before and after */
        CHECK(cudaSetDevice(g[d].id));
        CHECK(cudaMemcpyAsync(g[d].pos[nxt], pos[nxt], g[d].first * sizeof(float4),
                              cudaMemcpyHostToDevice, g[d].stream));
        CHECK(cudaMemcpyAsync(g[d].pos[nxt] + g[d].end, pos[nxt] + g[d].end,
                              (c.n - g[d].end) * sizeof(float4), cudaMemcpyHostToDevice,
                              g[d].stream));
      }
    }
    /* The velocities of the last step and the one before (the check needs both; the
     * positions are home already). */
    for (int d = 0; d < gpus; ++d) {
      CHECK(cudaSetDevice(g[d].id));
      size_t own = (g[d].end - g[d].first) * sizeof(float4);
      for (int s = c.steps; s >= c.steps - 1 && s >= 1; --s)
        CHECK(cudaMemcpyAsync(vel[s % 2] + g[d].first, g[d].vel[s % 2], own,
                              cudaMemcpyDeviceToHost, g[d].stream));
    }
    for (int d = 0; d < gpus; ++d) CHECK(cudaStreamSynchronize(g[d].stream));
    app_record(times, rep, app_now() - start);
  }

  int status = nbody_mpi_finish(&c, &m, "native_cuda", gpus, pos, vel, times);
  for (int d = 0; d < gpus; ++d) {
    CHECK(cudaSetDevice(g[d].id));
    for (int b = 0; b < 2; ++b) {
      CHECK(cudaFree(g[d].pos[b]));
      CHECK(cudaFree(g[d].vel[b]));
    }
    CHECK(cudaStreamDestroy(g[d].stream));
  }
  for (int b = 0; b < 2; ++b) {
    CHECK(cudaFreeHost(pos[b]));
    CHECK(cudaFreeHost(vel[b]));
  }
  free(times);
  MPI_Finalize();
  return status;
}
