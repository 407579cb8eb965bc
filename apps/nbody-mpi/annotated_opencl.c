/* NBody across MPI ranks, annotated with the OpenCL kernel (../nbody/nbody.cl): each rank owns
 * an equal part of the bodies; each time step is a task per block of bs of its bodies, which
 * reads all positions of the previous step and writes its block of the next step's positions
 * and velocities, then a CPU task that exchanges the new positions with MPI_Allgather: it
 * reads the rank's part (the kernels' results, which the runtime brings home for it) and
 * writes the other ranks' positions (which the next step's kernels wait for). The runtime's
 * MPI layer (nanort::mpi) lets the exchange wait for the other ranks without holding a CPU
 * worker; the taskwait brings the results home. */
#include <nanort/nanort.h>

#include "nbody_mpi.h"

#pragma omp target device(opencl) ndrange(2, count, NBODY_SPLIT, NBODY_GROUP, NBODY_SPLIT) copy_deps
#pragma omp task in([n]pos, [count]vel) out([count]new_pos, [count]new_vel)
__kernel void nbody_step(int n, int first, int count, float dt, float eps2,
                         __global const nbody_vec4 *pos, __global const nbody_vec4 *vel,
                         __global nbody_vec4 *new_pos, __global nbody_vec4 *new_vel);

/* all: every rank's positions, where the other ranks' parts arrive around this rank's part,
 * mine (in place): the task reads mine and writes the rest, before it and after it (so the
 * device keeps its copy of mine). n and after are there for the dependences. */
#pragma omp task in([own]mine) out([first]all, [n - first - own]after)
void exchange(long n, long first, long own, const nbody_vec4 *mine, nbody_vec4 *all,
              nbody_vec4 *after) {
  (void)n, (void)first, (void)mine, (void)after;
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, (int)(4 * own), MPI_FLOAT,
                MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  /* Tasks call MPI from several threads. */
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE)
    fprintf(stderr, "error: the MPI library gives thread level %d, not MPI_THREAD_MULTIPLE (%d), "
                    "which MPI calls inside tasks need\n", provided, MPI_THREAD_MULTIPLE);
  struct nbody_mpi m;
  int ok;
  struct nbody_config c = nbody_mpi_config(argc, argv, 0, &m, &ok);
  if (!nbody_mpi_all(ok && provided == MPI_THREAD_MULTIPLE)) {
    MPI_Finalize();
    return APP_FAILED;
  }
  int devices = nanort_device_count(NANORT_DEVICE_OPENCL);
  if (!nbody_mpi_all(devices > 0)) { /* every rank skips if one has no device */
    if (m.rank == 0) printf("SKIP: no OpenCL device on some rank\n");
    MPI_Finalize();
    return APP_SKIP;
  }
  /* The positions and velocities of two steps (step s reads pos[s % 2], writes the other). */
  size_t bytes = c.n * sizeof(nbody_vec4);
  nbody_vec4 *pos[2] = {malloc(bytes), malloc(bytes)}, *vel[2] = {malloc(bytes), malloc(bytes)};

  double *times = malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    nbody_init(c.n, pos[0], vel[0]);
    MPI_Barrier(MPI_COMM_WORLD); /* the ranks start together */
    double start = app_now();
    for (int s = 0; s < c.steps; ++s) {
      int cur = s % 2, nxt = 1 - cur;
      for (long first = m.first; first < m.first + m.own; first += c.bs)
        nbody_step((int)c.n, (int)first, (int)nbody_mpi_length(&c, &m, first), NBODY_DT,
                   NBODY_EPS2, pos[cur], vel[cur] + first, pos[nxt] + first, vel[nxt] + first);
      exchange(c.n, m.first, m.own, pos[nxt] + m.first, pos[nxt], pos[nxt] + m.first + m.own);
    }
    #pragma omp taskwait
    app_record(times, rep, app_now() - start);
  }

  int status = nbody_mpi_finish(&c, &m, "annotated_opencl", devices, pos, vel, times);
  for (int i = 0; i < 2; ++i) {
    free(pos[i]);
    free(vel[i]);
  }
  free(times);
  MPI_Finalize();
  return status;
}
