/* Task pragmas in a header, laid out as OmpSs GPU programs are: kernel tasks declared with
 * OpenCL's keywords (their bodies in kernels/header_kernels.cl), an smp function task and a
 * plain task declared here and defined in a source file. Every source file that calls a
 * kernel makes its tasks, and the clauses are evaluated at each call: MAX_NUM_THREADS is
 * the calling file's own (128 in header_kernels_main.c, 64 in header_kernels_more.c).
 * Included by the C and the C++ programs. */
#ifndef HEADER_KERNELS_H
#define HEADER_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

#pragma omp target device(opencl) ndrange(1, n, MAX_NUM_THREADS) copy_deps
#pragma omp task in([n]x) inout([n]y)
__kernel void saxpy(int n, float a, __global const float *x, __global float *y);

/* Reverses each block of MAX_NUM_THREADS elements of y, through __local memory. */
#pragma omp target device(opencl) ndrange(1, n, MAX_NUM_THREADS) \
    shmem(MAX_NUM_THREADS * sizeof(float))
#pragma omp task inout(y[0;n])
__kernel void reverse_blocks(int n, __global float *y, __local float *tile);

#pragma omp target device(smp) copy_deps
#pragma omp task in([n]y) out(*sum)
void total(int n, const float *y, double *sum);

#pragma omp task inout([n]y)
void add_one(int n, float *y);

#ifdef __cplusplus
}

/* A kernel task in a namespace (the kernel saxpy under another name). */
namespace blas {
#pragma omp target device(opencl) ndrange(1, n, MAX_NUM_THREADS) name(saxpy)
#pragma omp task in([n]x) inout([n]y)
__kernel void axpy(int n, float a, __global const float *x, __global float *y);
} // namespace blas
#endif

#endif
