/* Included by nanocc / nanocxx before every OmpSs source they lower, as mcc includes its
 * runtime's declarations: the Nanos++ routines OmpSs programs call without an #include. */
#ifndef NANORT_OMPSS_COMPAT_H
#define NANORT_OMPSS_COMPAT_H
#include <nanos.h>
#endif
