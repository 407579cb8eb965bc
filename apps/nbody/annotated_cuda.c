/* NBody, annotated with the CUDA kernel (nbody.cu): each time step is a task per block of bs
 * bodies, which reads all positions of the previous step and writes its block of the next
 * step's positions and velocities. The runtime spreads the tasks over the GPUs and moves the
 * blocks between them; the taskwait brings the results home. */
#include <nanort/nanort.h>

#include "nbody.h"

#pragma omp target device(cuda) ndrange(2, count, NBODY_SPLIT, NBODY_GROUP, NBODY_SPLIT) copy_deps
#pragma omp task in([n]pos, [count]vel) out([count]new_pos, [count]new_vel)
__global__ void nbody_step(int n, int first, int count, float dt, float eps2,
                           const nbody_vec4 *pos, const nbody_vec4 *vel, nbody_vec4 *new_pos,
                           nbody_vec4 *new_vel);

int main(int argc, char **argv) {
  struct nbody_config c = nbody_config(argc, argv, 0);
  int devices = nanort_device_count(NANORT_DEVICE_CUDA);
  if (devices == 0) {
    printf("SKIP: no CUDA device\n");
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
      for (long first = 0; first < c.n; first += c.bs)
        nbody_step((int)c.n, (int)first, (int)nbody_length(&c, first), NBODY_DT, NBODY_EPS2,
                   pos[cur], vel[cur] + first, pos[nxt] + first, vel[nxt] + first);
    }
    #pragma omp taskwait
    app_record(times, rep, app_now() - start);
  }

  int ok = nbody_check(&c, pos, vel);
  app_report("nbody", "annotated_cuda", devices, c.size, times, c.reps, ok);
  for (int i = 0; i < 2; ++i) {
    free(pos[i]);
    free(vel[i]);
  }
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
