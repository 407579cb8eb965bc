// Kernels of the CUDA tests, built into a fatbin that the test program embeds.
#include <cstdint>

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void add(int *x, int v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}

// 'add' again, for the test whose first launch of a site is refused (a site of its own).
extern "C" __global__ void add_once(int *x, int v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += v;
}

// Every point of x gets the launch's extent in y (threads per block times blocks), whatever
// the point: what each launch was given, with no race between its threads.
extern "C" __global__ void extent_y(int *x, int v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<int>(gridDim.y * blockDim.y) + 0 * v;
}

// Reverses each block of x through dynamic shared memory (blockDim.x ints, from shmem).
extern "C" __global__ void reverse_blocks(int *x, int n) {
  extern __shared__ int tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tile[threadIdx.x] = x[i];
  __syncthreads();
  const int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (i < n && j < n) x[i] = tile[blockDim.x - 1 - threadIdx.x];
}

// Compiled as C++: its symbol is mangled (_Z5scalePfif), and C code calls it 'scale'.
__global__ void scale(float *x, int n, float f) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= f;
}

// Writes far outside any allocation: an illegal address, a sticky error.
extern "C" __global__ void write_out_of_bounds(int *x) {
  x[threadIdx.x + (std::int64_t(1) << 36) / sizeof(int)] = 1;
}
