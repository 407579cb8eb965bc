/* Golden test: the lowered text of a CUDA kernel task and of a task with CUDA and smp
 * versions. */
#pragma omp target device(cuda) ndrange(1, n, 128) shmem(128 * sizeof(float))
#pragma omp task in([n]x) inout([n]y)
__global__ void saxpy(int n, float a, const float *x, float *y);

#pragma omp target device(cuda, smp) ndrange(1, n) name(square_kernel)
#pragma omp task inout([n]y)
void square(int n, float *y) {
  for (int i = 0; i < n; ++i) y[i] *= y[i];
}

void run(int n, float *x, float *y) {
  saxpy(n, 2.0f, x, y);
  square(n, y);
}
