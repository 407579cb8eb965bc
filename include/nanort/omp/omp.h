/*
 * omp.h for programs built by nanocc / nanocxx (or nanort_annotate): the OpenMP routines that
 * OmpSs programs call, answered by nanort from libnanort-omp (CMake: nanort::omp). The wrappers
 * put this folder on the include path, so that '#include <omp.h>' finds this file whether or
 * not the system has an OpenMP compiler's omp.h.
 *
 * An OmpSs program runs in one team of threads from start to end, as with Nanos++: the team
 * is nanort's CPU workers (NANORT_CPU_WORKERS, N), inside and outside tasks:
 *
 *   omp_get_num_threads(), omp_get_max_threads(), omp_get_thread_limit()   N
 *   omp_get_thread_num()    inside a task: the CPU worker running it, 0 to N - 1
 *                           (nanort_current_worker); outside tasks: N - 1, the index the
 *                           program's threads have when they run tasks in a taskwait
 *   omp_in_parallel()       N > 1;   omp_get_level(), omp_get_active_level()   0
 *   omp_in_final()          inside a final task (nanort_in_final)
 *   omp_get_num_procs()     the logical CPUs the process may run on
 *   omp_set_num_threads(n)  sets NANORT_CPU_WORKERS=n: it takes effect when called before the
 *                           runtime starts (before the program's first task, taskwait or other
 *                           nanort call); the number of workers of a running runtime stays
 *   omp_get_wtime(), omp_get_wtick()   the monotonic clock, in seconds
 *   locks, nest locks       owned by the thread that sets them (a task that the owner runs
 *                           in a taskwait may set a nest lock that it holds); a task waiting
 *                           for a lock leaves its CPU worker to other tasks
 *   omp_set_dynamic, omp_set_nested   no effect; omp_get_dynamic(), omp_get_nested()   0
 *
 * A program that also has an OpenMP runtime (libgomp, libomp: -fopenmp, or a library built
 * with OpenMP) gets that runtime's answers from every routine: libnanort-omp hands each call
 * to it, so that its parallel regions keep working.
 *
 * The compiler does not define _OPENMP: nanort lowers the OmpSs directives only (parallel
 * regions and worksharing are not supported), and code under '#ifdef _OPENMP' expects them.
 * The types are large enough for libgomp's and libomp's locks.
 */
#ifndef NANORT_OMP_H
#define NANORT_OMP_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct omp_lock_t {
  void *_lk;
} omp_lock_t;

typedef struct omp_nest_lock_t {
  void *_lk[2];
} omp_nest_lock_t;

void omp_set_num_threads(int num_threads);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_thread_num(void);
int omp_get_thread_limit(void);
int omp_get_num_procs(void);
int omp_in_parallel(void);
int omp_in_final(void);
int omp_get_level(void);
int omp_get_active_level(void);
void omp_set_dynamic(int dynamic_threads);
int omp_get_dynamic(void);
void omp_set_nested(int nested);
int omp_get_nested(void);

double omp_get_wtime(void);
double omp_get_wtick(void);

void omp_init_lock(omp_lock_t *lock);
void omp_destroy_lock(omp_lock_t *lock);
void omp_set_lock(omp_lock_t *lock);
void omp_unset_lock(omp_lock_t *lock);
int omp_test_lock(omp_lock_t *lock);

void omp_init_nest_lock(omp_nest_lock_t *lock);
void omp_destroy_nest_lock(omp_nest_lock_t *lock);
void omp_set_nest_lock(omp_nest_lock_t *lock);
void omp_unset_nest_lock(omp_nest_lock_t *lock);
int omp_test_nest_lock(omp_nest_lock_t *lock);

#ifdef __cplusplus
}
#endif

#endif
