/* CUDA kernel tasks declared in a header (their bodies in kernels/cuda_kernels.cu), as OmpSs
 * CUDA programs are laid out. Every source file that calls a kernel makes its tasks, and the
 * clauses are evaluated at each call: MAX_NUM_THREADS is the calling file's own (128 in
 * header_cuda_main.c and header_cuda.cpp, 64 in header_cuda_more.c). */
#ifndef HEADER_CUDA_H
#define HEADER_CUDA_H

#pragma omp target device(cuda) ndrange(1, n, MAX_NUM_THREADS) copy_deps
#pragma omp task in([n]x) inout([n]y)
__global__ void saxpy(int n, float a, const float *x, float *y);

/* Reverses each block of MAX_NUM_THREADS elements of y, through dynamic shared memory. */
#pragma omp target device(cuda) ndrange(1, n, MAX_NUM_THREADS) \
    shmem(MAX_NUM_THREADS * sizeof(float))
#pragma omp task inout(y[0;n])
__global__ void reverse_blocks(int n, float *y);

#endif
