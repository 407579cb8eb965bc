/* Included by nanocc / nanocxx before every OmpSs source they lower, as mcc includes its
 * runtime's declarations: the Nanos++ routines OmpSs programs call without an #include. */
#ifndef NANORT_OMPSS_COMPAT_H
#define NANORT_OMPSS_COMPAT_H
#include <nanos.h>
/* What the plugin makes of omp_in_final() calls (nanort/nanort.h declares it too; that header
 * is not included here: before the program's own feature macros, libc's headers would miss
 * them). */
#ifdef __cplusplus
extern "C" int nanort_in_final(void);
#else
int nanort_in_final(void);
#endif
#endif
