/* Heat, annotated with the CUDA kernel (heat.cu): a task per block of rows and step, which
 * reads its rows of grid a with the rows next to them and writes its rows of grid b; the host
 * swaps the grids after each step, and the dependences order the steps. The time loop is a
 * taskiter: its tasks are the same every two steps (unroll(2): one step from each grid), so
 * the runtime may record them once and replay them. The taskwait brings the result home. */
#include <nanort/nanort.h>

#include "heat.h"

#pragma oss target device(cuda) ndrange(2, n, rows, HEAT_LOCAL_X, HEAT_LOCAL_Y) copy_deps
#pragma oss task in((src - heat_above(first) * n)[0; (heat_above(first) + rows + \
                                                      heat_below(n, first, rows)) * n]) \
                 out([rows * n]dst)
__global__ void heat_sweep(int n, int first, int rows, const float *src, float *dst);

int main(int argc, char **argv) {
  struct heat_config c = heat_config(argc, argv, 0);
  int devices = nanort_device_count(NANORT_DEVICE_CUDA);
  if (devices == 0) {
    printf("SKIP: no CUDA device\n");
    return APP_SKIP;
  }
  int n = (int)c.n;
  float *grid[2] = {malloc((size_t)n * n * sizeof(float)), malloc((size_t)n * n * sizeof(float))};
  float *a = grid[0], *b = grid[1];

  double *times = malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    a = grid[0];
    b = grid[1];
    heat_init(n, a);
    double start = app_now();
    #pragma oss taskiter unroll(2)
    for (int s = 0; s < c.steps; ++s) {
      for (int k = 0; k < c.blocks; ++k) {
        long at = (long)heat_first(&c, k) * n;
        heat_sweep(n, heat_first(&c, k), heat_rows(&c, k), a + at, b + at);
      }
      float *t = a;
      a = b;
      b = t;
    }
    #pragma oss taskwait
    app_record(times, rep, app_now() - start);
  }

  int ok = heat_check(&c, a);
  app_report("heat", "annotated_cuda", devices, c.size, times, c.reps, ok);
  free(grid[0]);
  free(grid[1]);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
