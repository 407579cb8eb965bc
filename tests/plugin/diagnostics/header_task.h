/* A task pragma on a function defined in a header: not lowered yet. */
#pragma omp task inout(*x)
static inline void in_header(int *x) { *x = 1; }
