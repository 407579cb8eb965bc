// Kernels compiled with plain `nvcc -c` and linked into cuda_linked: found by the runtime in
// the images the objects register at start-up (nanort_cuda_objects).
extern "C" __global__ void linked_add(int *x, int v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}

// C++ linkage: registered as _Z12linked_scalePfif, declared from C code as 'linked_scale'.
__global__ void linked_scale(float *x, int n, float f) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= f;
}
