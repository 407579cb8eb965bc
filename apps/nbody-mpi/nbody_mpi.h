/* NBody across MPI ranks: what every version shares besides driving its devices, on top of
 * ../nbody/nbody.h (sizes, initial bodies, CPU reference, check). The n bodies are split into
 * equal parts, one per rank; a rank computes the next step of its own bodies from all the
 * positions of the previous step, then MPI_Allgather gives every rank all the new positions.
 * Not counted as host code of any version (every version would need the same lines): the
 * options, which part and which devices are a rank's, and the end of a run (velocities
 * gathered for the check, times and results agreed across ranks, the RESULT line). */
#ifndef NBODY_MPI_H
#define NBODY_MPI_H
#include <mpi.h>

#include "../nbody/nbody.h"

struct nbody_mpi {
  int rank, ranks;            /* in MPI_COMM_WORLD */
  int local_rank, local_size; /* among the ranks of this node */
  long first, own;            /* this rank's bodies: [first, first + own) */
};

/* 1 when cond holds on every rank: decisions that all ranks must take together (to skip, to
 * stop, the check's verdict), so that no rank waits in a collective call that others left. */
static inline int nbody_mpi_all(int cond) {
  int all = 0;
  MPI_Allreduce(&cond, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

/* The options of ../nbody (same names, same defaults) and the rank's part. The size in the
 * RESULT line names the ranks. Every rank can take an equal part that starts on a whole
 * group of bodies (MPI_Allgather moves equal parts; OpenCL sub-buffers want aligned starts),
 * else ok is 0, said once by rank 0. */
static inline struct nbody_config nbody_mpi_config(int argc, char **argv, int native,
                                                   struct nbody_mpi *m, int *ok) {
  struct nbody_config c = nbody_config(argc, argv, native);
  MPI_Comm node;
  MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m->ranks);
  /* The ranks that share this node's devices (OMPI_COMM_WORLD_LOCAL_RANK in Open MPI). */
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &m->local_rank);
  MPI_Comm_size(node, &m->local_size);
  MPI_Comm_free(&node);
  m->own = c.n / m->ranks;
  m->first = m->rank * m->own;
  *ok = c.n % m->ranks == 0 && m->own % NBODY_GROUP == 0;
  if (!*ok && m->rank == 0)
    fprintf(stderr, "error: --n=%ld must split into %d equal parts of a multiple of %d bodies "
                    "(one per rank)\n", c.n, m->ranks, NBODY_GROUP);
  size_t used = strlen(c.size);
  snprintf(c.size + used, sizeof c.size - used, ",ranks%d", m->ranks);
  return c;
}

/* The number of bodies of the rank's block that starts at body first. */
static inline long nbody_mpi_length(const struct nbody_config *c, const struct nbody_mpi *m,
                                    long first) {
  long end = m->first + m->own;
  return end - first < c->bs ? end - first : c->bs;
}

/* Which of the count devices of its node a rank uses: when it is alone on the node, the first
 * ones (all, or --gpus), which split its bodies; when ranks share the node, one each, in turn
 * (local rank modulo count). Sets *first_device and returns how many. */
static inline int nbody_mpi_devices(const struct nbody_config *c, const struct nbody_mpi *m,
                                    int count, int *first_device) {
  if (m->local_size > 1) {
    *first_device = m->local_rank % count;
    return 1;
  }
  *first_device = 0;
  long blocks = (m->own + c->bs - 1) / c->bs;
  int devices = c->gpus > 0 && c->gpus < count ? c->gpus : count;
  return devices > blocks ? (int)blocks : devices;
}

/* The end of a run, on every rank after the last repetition (pos[b] hold all positions of the
 * last two steps, from the exchanges; vel[b] the rank's own velocities): rank 0 gathers the
 * velocities, checks the run against the CPU reference of ../nbody and prints the RESULT line
 * with each repetition's time on the slowest rank and the devices of all ranks. Returns the
 * exit status, the same on every rank. */
static inline int nbody_mpi_finish(const struct nbody_config *c, const struct nbody_mpi *m,
                                   const char *version, int devices, nbody_vec4 *const pos[2],
                                   nbody_vec4 *const vel[2], double *times) {
  int count = (int)(4 * m->own), all_devices = 0, ok = 1;
  for (int b = 0; b < 2; ++b)
    MPI_Gather(m->rank == 0 ? MPI_IN_PLACE : (void *)(vel[b] + m->first), count, MPI_FLOAT,
               vel[b], count, MPI_FLOAT, 0, MPI_COMM_WORLD);
  MPI_Reduce(m->rank == 0 ? MPI_IN_PLACE : times, times, c->reps, MPI_DOUBLE, MPI_MAX, 0,
             MPI_COMM_WORLD);
  MPI_Reduce(&devices, &all_devices, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (m->rank == 0) {
    ok = nbody_check(c, pos, vel);
    app_report("nbody-mpi", version, all_devices, c->size, times, c->reps, ok);
    fflush(stdout);
  }
  ok = nbody_mpi_all(ok);
  return ok ? APP_OK : APP_FAILED;
}
#endif
