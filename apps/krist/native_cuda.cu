/* native_cuda.cu: Krist on the CUDA runtime API. The blocks of reflections go round-robin to
 * the GPUs; on each GPU they alternate between two streams, so that one block's copies overlap
 * the other's kernel. Every GPU gets all the atoms once per repetition (on its first stream;
 * the second waits for that copy through an event). Host arrays are page-locked; device
 * buffers are allocated once, before the timed repetitions. */
#include <vector>

#include "app.h"
#include "krist.h"
#include "krist.cu"

/* Every CUDA call is checked: the call and the error, then exit status 1. */
#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(e_));                 \
      exit(APP_FAILED);                                                                  \
    }                                                                                    \
  } while (0)

enum { STREAMS = 2, THREADS = 128 };

/* A GPU's copies of the arrays (whole: each block uses its own part), streams and the event
 * that says its atoms have arrived. */
struct gpu {
  float *atoms, *f;
  int *hkl;
  cudaStream_t streams[STREAMS];
  cudaEvent_t atoms_in;
};

int main(int argc, char **argv) {
  krist_problem p = krist_setup(argc, argv, 1);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  int gpus = p.gpus > 0 && p.gpus < count ? p.gpus : count;
  size_t atom_bytes = (size_t)p.atoms * 4 * sizeof(float);
  size_t hkl_bytes = (size_t)p.reflections * 3 * sizeof(int);
  size_t f_bytes = (size_t)p.reflections * 2 * sizeof(float);
  float *atoms, *f;
  int *hkl;
  CHECK(cudaMallocHost(&atoms, atom_bytes));
  CHECK(cudaMallocHost(&hkl, hkl_bytes));
  CHECK(cudaMallocHost(&f, f_bytes));
  krist_init(&p, atoms, hkl);
  std::vector<gpu> dev(gpus);
  for (int g = 0; g < gpus; ++g) {
    CHECK(cudaSetDevice(g));
    CHECK(cudaMalloc(&dev[g].atoms, atom_bytes));
    CHECK(cudaMalloc(&dev[g].hkl, hkl_bytes));
    CHECK(cudaMalloc(&dev[g].f, f_bytes));
    for (int s = 0; s < STREAMS; ++s) CHECK(cudaStreamCreate(&dev[g].streams[s]));
    CHECK(cudaEventCreateWithFlags(&dev[g].atoms_in, cudaEventDisableTiming));
  }
  int blocks = (p.reflections + p.bs - 1) / p.bs;
  std::vector<double> times(p.reps);
  for (int rep = -1; rep < p.reps; ++rep) { /* rep -1: the warm-up */
    memset(f, 0, f_bytes);
    double start = app_now();
    for (int g = 0; g < gpus; ++g) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaMemcpyAsync(dev[g].atoms, atoms, atom_bytes, cudaMemcpyHostToDevice,
                            dev[g].streams[0]));
      CHECK(cudaEventRecord(dev[g].atoms_in, dev[g].streams[0]));
      for (int s = 1; s < STREAMS; ++s)
        CHECK(cudaStreamWaitEvent(dev[g].streams[s], dev[g].atoms_in, 0));
    }
    for (int b = 0; b < blocks; ++b) {
      gpu &d = dev[b % gpus];
      cudaStream_t stream = d.streams[b / gpus % STREAMS];
      size_t first = (size_t)b * p.bs;
      int n = p.reflections - (int)first < p.bs ? p.reflections - (int)first : p.bs;
      CHECK(cudaSetDevice(b % gpus));
      CHECK(cudaMemcpyAsync(d.hkl + 3 * first, hkl + 3 * first, 3 * (size_t)n * sizeof(int),
                            cudaMemcpyHostToDevice, stream));
      krist<<<(n + THREADS - 1) / THREADS, THREADS, 0, stream>>>(p.atoms, d.atoms, n,
                                                                 d.hkl + 3 * first,
                                                                 d.f + 2 * first);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpyAsync(f + 2 * first, d.f + 2 * first, 2 * (size_t)n * sizeof(float),
                            cudaMemcpyDeviceToHost, stream));
    }
    for (int g = 0; g < gpus; ++g) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaDeviceSynchronize());
    }
    app_record(times.data(), rep, app_now() - start);
  }
  int ok = krist_check(&p, atoms, hkl, f);
  app_report("krist", "native_cuda", gpus, p.size, times.data(), p.reps, ok);
  for (int g = 0; g < gpus; ++g) {
    CHECK(cudaSetDevice(g));
    for (int s = 0; s < STREAMS; ++s) CHECK(cudaStreamDestroy(dev[g].streams[s]));
    CHECK(cudaEventDestroy(dev[g].atoms_in));
    CHECK(cudaFree(dev[g].atoms));
    CHECK(cudaFree(dev[g].hkl));
    CHECK(cudaFree(dev[g].f));
  }
  CHECK(cudaFreeHost(atoms));
  CHECK(cudaFreeHost(hkl));
  CHECK(cudaFreeHost(f));
  return ok ? APP_OK : APP_FAILED;
}
