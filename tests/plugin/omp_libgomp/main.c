/* A program built by nanocc that also has libgomp (through a library built with -fopenmp,
 * which links it after libnanort-omp): every OpenMP routine gives libgomp's answers, so the
 * library's parallel regions work, and nanort's tasks run as usual. OMP_NUM_THREADS=3,
 * NANORT_CPU_WORKERS=2. */
#include "check.h"

#include <nanort/nanort.h>
#include <omp.h>

int team_of_region(int threads, int *ids);

#pragma omp task out(*answers)
static void in_task(int *answers) {
  answers[0] = omp_get_thread_num();  /* libgomp, outside its parallel regions: 0 */
  answers[1] = omp_get_num_threads(); /* 1 */
  int ids[4] = {0, 0, 0, 0};
  answers[2] = team_of_region(4, ids); /* a region of 4 threads, inside a task */
  answers[3] = ids[0] + ids[1] + ids[2] + ids[3];
}

int main(void) {
  CHECK(omp_get_max_threads() == 3); /* libgomp's: OMP_NUM_THREADS */
  CHECK(omp_get_thread_num() == 0);
  CHECK(omp_get_num_threads() == 1);
  CHECK(omp_in_parallel() == 0);
  int ids[3] = {0, 0, 0};
  CHECK(team_of_region(3, ids) == 3);
  CHECK(ids[0] == 1 && ids[1] == 1 && ids[2] == 1);
  omp_lock_t lock;
  omp_init_lock(&lock);
  omp_set_lock(&lock);
  omp_unset_lock(&lock);
  CHECK(omp_test_lock(&lock) == 1);
  omp_unset_lock(&lock);
  omp_destroy_lock(&lock);

  int answers[4] = {-1, -1, -1, -1};
  in_task(answers);
  #pragma omp taskwait
  CHECK(answers[0] == 0);
  CHECK(answers[1] == 1);
  CHECK(answers[2] == 4);
  CHECK(answers[3] == 4);
  CHECK(nanort_device_count(NANORT_DEVICE_SMP) == 2);
  CHECK_DONE();
}
