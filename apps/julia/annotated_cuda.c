/* annotated_cuda.c: the Julia set with pragmas, on CUDA GPUs. Each slice of rows is a task
 * (the kernel of julia.cu, declared below); the runtime spreads the tasks over the GPUs and
 * copies each slice home at the taskwait. */
#include <nanort/nanort.h>

#include "app.h"
#include "julia.h"

#pragma omp target device(cuda) ndrange(2, width, rows, 32, 4) copy_deps
#pragma omp task out([rows * width]slice)
__global__ void julia(int width, int rows, int row0, float x0, float y0, float step, float cre,
                      float cim, int iters, unsigned int *slice);

int main(int argc, char **argv) {
  julia_problem p = julia_setup(argc, argv, 0);
  int devices = nanort_device_count(NANORT_DEVICE_CUDA);
  if (devices == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  size_t bytes = (size_t)p.width * p.height * sizeof(unsigned int);
  unsigned int *image = malloc(bytes);
  double *times = malloc(p.reps * sizeof *times);
  for (int rep = -1; rep < p.reps; ++rep) { /* rep -1: the warm-up */
    memset(image, 0, bytes);
    double start = app_now();
    for (int row0 = 0; row0 < p.height; row0 += p.slice) {
      int rows = p.height - row0 < p.slice ? p.height - row0 : p.slice;
      julia(p.width, rows, row0, p.x0, p.y0, p.step, JULIA_CRE, JULIA_CIM, p.iters,
            image + (size_t)row0 * p.width);
    }
    #pragma omp taskwait
    app_record(times, rep, app_now() - start);
  }
  int ok = julia_check(&p, image);
  app_report("julia", "annotated_cuda", devices, p.size, times, p.reps, ok);
  free(image);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
