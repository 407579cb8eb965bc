/* Found through the quoted include of annotated.c: the lowered source must still see it. */
#ifndef NANORT_PACKAGE_ANNOTATED_H
#define NANORT_PACKAGE_ANNOTATED_H
#include <stdio.h>
static int failures;
#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      printf("FAILED: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      ++failures;                                                \
    }                                                            \
  } while (0)
#endif
