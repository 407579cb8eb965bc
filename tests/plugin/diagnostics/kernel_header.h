/* A kernel task declared in a header, as OmpSs programs do: its clauses name MAX_NUM_THREADS,
 * which each calling file declares. */
#pragma omp target device(opencl) ndrange(1, n, MAX_NUM_THREADS) copy_deps
#pragma omp task in([n]x) inout([n]y)
__kernel void saxpy(int n, float a, __global const float *x, __global float *y);
