/* Result checks of the plugin's end-to-end programs: each failure prints FAILED and the
 * program exits with status 1. Writers sleep before writing, so that a missing dependence
 * lets the reader run too early and see the old value (a sound run passes however long they
 * take). */
#ifndef NANORT_PLUGIN_TEST_CHECK_H
#define NANORT_PLUGIN_TEST_CHECK_H
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* usleep under -std=c11 */
#endif
#include <stdio.h>
#include <unistd.h>

static int check_failures;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      printf("FAILED: %s (%s:%d)\n", #cond, __FILE__, __LINE__);         \
      ++check_failures;                                                  \
    }                                                                    \
  } while (0)
#define CHECK_DONE()                                                     \
  do {                                                                   \
    if (check_failures) return 1;                                        \
    printf("all results correct\n");                                     \
    return 0;                                                            \
  } while (0)
#define SLOW() usleep(20000)
/* Returns once *go is set (by the program, after it has looked at what the task must not have
 * done yet), or after 20 s: a task that is certainly still running when the program looks,
 * however loaded the machine. */
static inline void wait_for_go(const int *go) {
  for (int i = 0; i < 200000 && !__atomic_load_n(go, __ATOMIC_ACQUIRE); ++i) usleep(100);
}
#endif
