/* NBody, annotated with both kernels: the same tasks as annotated_cuda.c and
 * annotated_opencl.c, the even blocks of each step on OpenCL devices (nbody.cl) and the odd
 * blocks on CUDA GPUs (nbody.cu). The two declarations name the same kernel of each file. The
 * runtime moves the blocks between the two kinds of device (through host memory). */
#include <nanort/nanort.h>

#include "nbody.h"

#pragma omp target device(opencl) ndrange(2, count, NBODY_SPLIT, NBODY_GROUP, NBODY_SPLIT) \
    name(nbody_step) copy_deps
#pragma omp task in([n]pos, [count]vel) out([count]new_pos, [count]new_vel)
__kernel void nbody_step_opencl(int n, int first, int count, float dt, float eps2,
                                __global const nbody_vec4 *pos, __global const nbody_vec4 *vel,
                                __global nbody_vec4 *new_pos, __global nbody_vec4 *new_vel);

#pragma omp target device(cuda) ndrange(2, count, NBODY_SPLIT, NBODY_GROUP, NBODY_SPLIT) \
    name(nbody_step) copy_deps
#pragma omp task in([n]pos, [count]vel) out([count]new_pos, [count]new_vel)
__global__ void nbody_step_cuda(int n, int first, int count, float dt, float eps2,
                                const nbody_vec4 *pos, const nbody_vec4 *vel,
                                nbody_vec4 *new_pos, nbody_vec4 *new_vel);

int main(int argc, char **argv) {
  struct nbody_config c = nbody_config(argc, argv, 0);
  int gpus = nanort_device_count(NANORT_DEVICE_CUDA);
  int opencl = nanort_device_count(NANORT_DEVICE_OPENCL);
  if (gpus == 0 || opencl == 0) {
    printf("SKIP: the odd blocks need a CUDA device and the even blocks an OpenCL device; "
           "found %d CUDA and %d OpenCL devices\n", gpus, opencl);
    return APP_SKIP;
  }
  /* The positions and velocities of two steps (step s reads pos[s % 2], writes the other). */
  size_t bytes = c.n * sizeof(nbody_vec4);
  nbody_vec4 *pos[2] = {malloc(bytes), malloc(bytes)}, *vel[2] = {malloc(bytes), malloc(bytes)};

  double *times = malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    nbody_init(c.n, pos[0], vel[0]);
    double start = app_now();
    for (int s = 0; s < c.steps; ++s) {
      int cur = s % 2, nxt = 1 - cur;
      for (long first = 0; first < c.n; first += c.bs) {
        int count = (int)nbody_length(&c, first);
        if (first / c.bs % 2 == 0)
          nbody_step_opencl((int)c.n, (int)first, count, NBODY_DT, NBODY_EPS2, pos[cur],
                            vel[cur] + first, pos[nxt] + first, vel[nxt] + first);
        else
          nbody_step_cuda((int)c.n, (int)first, count, NBODY_DT, NBODY_EPS2, pos[cur],
                          vel[cur] + first, pos[nxt] + first, vel[nxt] + first);
      }
    }
    #pragma omp taskwait
    app_record(times, rep, app_now() - start);
  }

  int ok = nbody_check(&c, pos, vel);
  app_report("nbody", "annotated_mixed", gpus + opencl, c.size, times, c.reps, ok);
  for (int i = 0; i < 2; ++i) {
    free(pos[i]);
    free(vel[i]);
  }
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
