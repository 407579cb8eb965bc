// CUDA kernels of the plugin's CUDA programs (cuda_saxpy.c, cuda_kernels.cpp,
// cuda_multi_device.c, cuda_versions.c, and header_cuda.h's programs), compiled by nanocc /
// nanocxx with nvcc into one fatbin. Their names are C++-mangled: the runtime finds them by
// the names the host code declares.
__global__ void saxpy(int n, float a, const float *x, float *y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Reverses each block of y through dynamic shared memory (shmem: blockDim.x floats).
__global__ void reverse_blocks(int n, float *y) {
  extern __shared__ float tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tile[threadIdx.x] = y[i];
  __syncthreads();
  const int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (i < n && j < n) y[i] = tile[blockDim.x - 1 - threadIdx.x];
}

// A 2-D ndrange: m is rows x cols, row-major.
__global__ void add_block(float *m, int cols, float v, int rows) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) m[r * cols + c] += v;
}

// The CUDA versions of the tasks of cuda_multi_device.c and cuda_versions.c.
__global__ void add_cuda(int n, const float *x, float *y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

__global__ void square(int n, float *y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * y[i];
}
