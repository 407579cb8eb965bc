/* The SAXPY kernel of the CUDA versions (native_cuda.cu includes this file, annotated_cuda.c
 * declares the kernel as a task): y = a*x + y on n floats, one thread per element. */
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
