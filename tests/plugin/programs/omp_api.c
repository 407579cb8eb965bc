/* The OpenMP routines of <omp.h> (libnanort-omp), outside and inside tasks, answered by
 * nanort: one team of TEAM threads (the CPU workers), whatever NANORT_CPU_WORKERS says, because
 * omp_set_num_threads(TEAM) comes before the runtime starts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_COUNT */
#endif
#include "check.h"

#include <nanort/nanort.h>
#include <omp.h>
#include <sched.h>

#define TEAM 3
#define LOOKERS (2 * TEAM)
#define LOCKERS 6
#define ADDS 1000

static int procs(void) {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

struct seen {
  int num_threads, max_threads, thread_limit, thread_num, worker, in_parallel, level,
      active_level, in_final, num_procs, dynamic, nested;
  double elapsed, tick;
};

static void look(struct seen *s) {
  s->num_threads = omp_get_num_threads();
  s->max_threads = omp_get_max_threads();
  s->thread_limit = omp_get_thread_limit();
  s->thread_num = omp_get_thread_num();
  s->worker = nanort_current_worker();
  s->in_parallel = omp_in_parallel();
  s->level = omp_get_level();
  s->active_level = omp_get_active_level();
  s->in_final = omp_in_final();
  s->num_procs = omp_get_num_procs();
  s->dynamic = omp_get_dynamic();
  s->nested = omp_get_nested();
  double start = omp_get_wtime();
  usleep(20000);
  s->elapsed = omp_get_wtime() - start;
  s->tick = omp_get_wtick();
}

/* What every look sees, in a task or not. */
static void check_team(const struct seen *s) {
  CHECK(s->num_threads == TEAM);
  CHECK(s->max_threads == TEAM);
  CHECK(s->thread_limit == TEAM);
  CHECK(s->thread_num >= 0 && s->thread_num < TEAM);
  CHECK(s->in_parallel == 1);
  CHECK(s->level == 0);
  CHECK(s->active_level == 0);
  CHECK(s->num_procs == procs());
  CHECK(s->dynamic == 0);
  CHECK(s->nested == 0);
  CHECK(s->elapsed >= 0.019 && s->elapsed < 10.0);
  CHECK(s->tick > 0.0 && s->tick <= 1e-3);
}

#pragma omp task out(*s)
static void look_task(struct seen *s) { look(s); }

/* A final task, and a task created inside it (final too). */
#pragma omp task out(*s, *inner) final(1)
static void look_final(struct seen *s, struct seen *inner) {
  look(s);
  #pragma omp task out(*inner)
  look(inner);
  #pragma omp taskwait
}

static omp_lock_t lock;
static long counter;

#pragma omp task
static void add_locked(void) {
  for (int i = 0; i < ADDS; ++i) {
    omp_set_lock(&lock);
    long v = counter;
    counter = v + 1;
    omp_unset_lock(&lock);
  }
}

#pragma omp task out(*got)
static void try_lock(int *got) {
  *got = omp_test_lock(&lock);
  if (*got) omp_unset_lock(&lock);
}

#pragma omp task
static void mark(int *done) { __atomic_store_n(done, 1, __ATOMIC_RELEASE); }

static omp_nest_lock_t nest;

#pragma omp task out(*got)
static void try_nest(int *got, int *done) {
  *got = omp_test_nest_lock(&nest);
  if (*got) omp_unset_nest_lock(&nest);
  __atomic_store_n(done, 1, __ATOMIC_RELEASE);
}

#pragma omp task out(*counts)
static void nest_task(int *counts) {
  omp_set_nest_lock(&nest);
  omp_set_nest_lock(&nest);
  counts[0] = omp_test_nest_lock(&nest); /* the new nesting count: 3 */
  omp_unset_nest_lock(&nest);
  omp_unset_nest_lock(&nest);
  omp_unset_nest_lock(&nest);
  counts[1] = omp_test_nest_lock(&nest); /* free again: 1 */
  omp_unset_nest_lock(&nest);
}

int main(void) {
  /* Before the runtime starts: the team's size. */
  omp_set_num_threads(TEAM);
  omp_set_dynamic(1); /* no effect */
  omp_set_nested(1);  /* no effect */

  /* Outside tasks: the program's thread has index TEAM - 1. */
  struct seen out;
  look(&out);
  check_team(&out);
  CHECK(out.thread_num == TEAM - 1);
  CHECK(out.worker == -1);
  CHECK(out.in_final == 0);
  CHECK(nanort_device_count(NANORT_DEVICE_SMP) == TEAM);
  /* The runtime runs: the number of workers stays. */
  omp_set_num_threads(TEAM + 2);
  CHECK(omp_get_max_threads() == TEAM);
  CHECK(omp_get_num_threads() == TEAM);

  /* Inside tasks: the worker running each. */
  struct seen in[LOOKERS];
  for (int i = 0; i < LOOKERS; ++i) look_task(&in[i]);
  struct seen fin, inner;
  look_final(&fin, &inner);
  #pragma omp taskwait
  for (int i = 0; i < LOOKERS; ++i) {
    check_team(&in[i]);
    CHECK(in[i].thread_num == in[i].worker);
    CHECK(in[i].in_final == 0);
  }
  check_team(&fin);
  CHECK(fin.in_final == 1);
  check_team(&inner);
  CHECK(inner.in_final == 1);

  /* A lock: held by the program, the tasks that want it wait, and leave their workers to
   * other tasks meanwhile; then they take it in turn. */
  omp_init_lock(&lock);
  omp_set_lock(&lock);
  int got = -1, done = 0;
  try_lock(&got);
  for (int i = 0; i < LOCKERS; ++i) add_locked();
  mark(&done);
  wait_for_go(&done);
  CHECK(__atomic_load_n(&done, __ATOMIC_ACQUIRE) == 1);
  CHECK(__atomic_load_n(&counter, __ATOMIC_RELAXED) == 0);
  omp_unset_lock(&lock);
  #pragma omp taskwait
  CHECK(got == 0);
  CHECK(counter == (long)LOCKERS * ADDS);
  CHECK(omp_test_lock(&lock) == 1);
  omp_unset_lock(&lock);
  omp_destroy_lock(&lock);

  /* A nest lock: its owner (a thread) sets it again, others cannot. The task that tries runs
   * on a worker: the program waits for it outside a taskwait. */
  omp_init_nest_lock(&nest);
  omp_set_nest_lock(&nest);
  omp_set_nest_lock(&nest);
  CHECK(omp_test_nest_lock(&nest) == 3);
  int nest_got = -1, probed = 0;
  try_nest(&nest_got, &probed);
  wait_for_go(&probed);
  CHECK(__atomic_load_n(&probed, __ATOMIC_ACQUIRE) == 1);
  CHECK(nest_got == 0);
  omp_unset_nest_lock(&nest);
  omp_unset_nest_lock(&nest);
  omp_unset_nest_lock(&nest);
  #pragma omp taskwait
  int counts[2] = {0, 0};
  nest_task(counts);
  #pragma omp taskwait
  CHECK(counts[0] == 3);
  CHECK(counts[1] == 1);
  omp_destroy_nest_lock(&nest);
  CHECK_DONE();
}
