/* A library built with gcc -fopenmp (libgomp): a parallel region that reports its team. The
 * program that links it is built by nanocc and links libnanort-omp before libgomp. */
#include <omp.h>

int team_of_region(int threads, int *ids) {
  int size = 0;
  #pragma omp parallel num_threads(threads)
  {
    ids[omp_get_thread_num()] = 1;
    #pragma omp single
    size = omp_get_num_threads();
  }
  return size;
}
