/* Task pragmas of an included file (header.c). A task pragma on a function defined here: not
 * lowered yet. */
#pragma omp task inout(*x)
static inline void in_header(int *x) { *x = 1; }

/* An inline task in a function of the header. */
static inline void inline_in_header(int *x) {
  #pragma omp task inout(*x)
  *x = 2;
}

/* A kernel task, called from the header itself and from a macro body in header.c: each
 * source file calls a wrapper of its own, which such uses cannot name. */
#pragma omp target device(opencl) ndrange(1, n)
#pragma omp task inout([n]x)
__kernel void scale_header(int n, __global float *x);

static inline void call_in_header(float *x) { scale_header(4, x); }

/* A kernel task with an error in its clauses, reported at this line when a file uses it. */
#pragma omp target device(opencl)
#pragma omp task inout([n]x)
__kernel void no_ndrange(int n, __global float *x);

/* A function task whose definition is in another included file (header_task_def.h). */
#pragma omp task inout(*x)
void defined_in_header(int *x);
