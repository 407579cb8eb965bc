/* A failure planted on purpose: rank 0 prints the success line, then rank 1 exits with status 1
 * after MPI_Finalize. The test checker must fail the run (mpiexec reports the rank's status). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    printf("all results correct\n");
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return rank == 1 ? 1 : 0;
}
