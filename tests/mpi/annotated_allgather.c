/* The OmpSs paper's NBody MPI pattern with pragmas: per step, a task computes this rank's
 * block from all blocks, and an smp task with dependences wraps MPI_Allgather. Built two ways
 * (tests/mpi/tests.cmake): nanocc with mpicc as its host compiler (NANORT_CC=mpicc), and
 * mpicc with nanocc as its compiler (OMPI_CC=nanocc); linked with -lnanort-mpi. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BLOCK = 512, STEPS = 4 };

#pragma omp task in([ranks * BLOCK]all) out([BLOCK]mine)
static void compute(int rank, int ranks, const double *all, double *mine) {
  double total = 0;
  for (int r = 0; r < ranks; ++r) total += all[r * BLOCK];
  for (int i = 0; i < BLOCK; ++i) mine[i] = total + rank + i;
}

#pragma omp task in([BLOCK]mine) out([ranks * BLOCK]all)
static void exchange(int ranks, const double *mine, double *all) {
  MPI_Allgather(mine, BLOCK, MPI_DOUBLE, all, BLOCK, MPI_DOUBLE, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  int provided = 0, rank = 0, ranks = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  double *all = calloc((size_t)ranks * BLOCK, sizeof *all), mine[BLOCK];
  for (int step = 0; step < STEPS; ++step) {
    compute(rank, ranks, all, mine);
    exchange(ranks, mine, all);
  }
  #pragma omp taskwait
  /* The same recurrence, sequentially: first elements total(step) = sum_r (total + r). */
  double total = 0, expected;
  for (int step = 0; step < STEPS - 1; ++step) total = ranks * total + ranks * (ranks - 1) / 2.0;
  int bad = provided != MPI_THREAD_MULTIPLE;
  for (int r = 0; r < ranks; ++r)
    for (int i = 0; i < BLOCK; i += 31) {
      expected = total + r + i;
      if (all[r * BLOCK + i] != expected) ++bad;
    }
  int all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(all_bad ? "FAILED: %d wrong values\n" : "all results correct (%d)\n", all_bad);
  free(all);
  MPI_Finalize();
  return all_bad != 0;
}
