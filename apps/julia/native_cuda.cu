/* native_cuda.cu: the Julia set on the CUDA runtime API. The slices of rows go round-robin to
 * the GPUs (so that the costly interior rows in the middle of the image are shared out); on
 * each GPU the slices alternate between two streams, so that one slice's copy home overlaps the
 * next slice's kernel. The image is in page-locked host memory; device buffers are allocated
 * once, before the timed repetitions. */
#include <vector>

#include "app.h"
#include "julia.h"
#include "julia.cu"

/* Every CUDA call is checked: the call and the error, then exit status 1. */
#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(e_));                 \
      exit(APP_FAILED);                                                                  \
    }                                                                                    \
  } while (0)

enum { STREAMS = 2 };

int main(int argc, char **argv) {
  julia_problem p = julia_setup(argc, argv, 1);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  int gpus = p.gpus > 0 && p.gpus < count ? p.gpus : count;
  size_t pixels = (size_t)p.width * p.height;
  unsigned int *image;
  CHECK(cudaMallocHost(&image, pixels * sizeof *image));
  /* Each GPU has a whole image and writes only its slices there (no buffer is reused, so the
   * streams need not wait for each other). */
  std::vector<unsigned int *> device_image(gpus);
  std::vector<cudaStream_t> streams(gpus * STREAMS);
  for (int g = 0; g < gpus; ++g) {
    CHECK(cudaSetDevice(g));
    CHECK(cudaMalloc(&device_image[g], pixels * sizeof *image));
    for (int s = 0; s < STREAMS; ++s) CHECK(cudaStreamCreate(&streams[g * STREAMS + s]));
  }
  int slices = (p.height + p.slice - 1) / p.slice;
  std::vector<double> times(p.reps);
  for (int rep = -1; rep < p.reps; ++rep) { /* rep -1: the warm-up */
    memset(image, 0, pixels * sizeof *image);
    double start = app_now();
    for (int s = 0; s < slices; ++s) {
      int g = s % gpus;
      cudaStream_t stream = streams[g * STREAMS + s / gpus % STREAMS];
      int row0 = s * p.slice;
      int rows = p.height - row0 < p.slice ? p.height - row0 : p.slice;
      size_t first = (size_t)row0 * p.width;
      CHECK(cudaSetDevice(g));
      dim3 block(32, 4), grid((p.width + 31) / 32, (rows + 3) / 4);
      julia<<<grid, block, 0, stream>>>(p.width, rows, row0, p.x0, p.y0, p.step, JULIA_CRE,
                                        JULIA_CIM, p.iters, device_image[g] + first);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpyAsync(image + first, device_image[g] + first,
                            (size_t)rows * p.width * sizeof *image, cudaMemcpyDeviceToHost,
                            stream));
    }
    for (int g = 0; g < gpus; ++g) {
      CHECK(cudaSetDevice(g));
      CHECK(cudaDeviceSynchronize());
    }
    app_record(times.data(), rep, app_now() - start);
  }
  int ok = julia_check(&p, image);
  app_report("julia", "native_cuda", gpus, p.size, times.data(), p.reps, ok);
  for (int g = 0; g < gpus; ++g) {
    CHECK(cudaSetDevice(g));
    for (int s = 0; s < STREAMS; ++s) CHECK(cudaStreamDestroy(streams[g * STREAMS + s]));
    CHECK(cudaFree(device_image[g]));
  }
  CHECK(cudaFreeHost(image));
  return ok ? APP_OK : APP_FAILED;
}
