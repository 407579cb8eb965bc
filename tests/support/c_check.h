/* CHECK for the plain C test programs: prints "FAILED: ..." (what ctest looks for) and counts
 * the failure; main returns non-zero when 'failures' is not 0. */
#ifndef NANORT_TESTS_C_CHECK_H
#define NANORT_TESTS_C_CHECK_H

#include <stdio.h>

static int failures = 0;
#define CHECK(cond, ...)              \
  do {                                \
    if (!(cond)) {                    \
      printf("FAILED: " __VA_ARGS__); \
      printf("\n");                   \
      ++failures;                     \
    }                                 \
  } while (0)

#endif
