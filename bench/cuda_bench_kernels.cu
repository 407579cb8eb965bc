// Kernels of cuda_bench, built into a fatbin that the benchmark embeds.
extern "C" __global__ void inc(int *x) { x[threadIdx.x] += 1; }

// Reads the first and last byte of x (so that a task that names x moves it) into out.
extern "C" __global__ void probe(const unsigned char *x, unsigned long long last, unsigned char *out) {
  out[0] = x[0];
  out[1] = x[last];
}

// Writes the first and last byte of x.
extern "C" __global__ void touch(unsigned char *x, unsigned long long last, unsigned char v) {
  x[0] = v;
  x[last] = v;
}

// Compute-bound work on x[0..n): 'rounds' dependent multiply-adds per element.
extern "C" __global__ void crunch(float *x, int n, int rounds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.5f;
  x[i] = v;
}

// C += A * B on n x n row-major tiles (n a multiple of 16), in 16 x 16 blocks of shared memory.
extern "C" __global__ void gemm_tile(const float *a, const float *b, float *c, int n) {
  __shared__ float as[16][16], bs[16][16];
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  float sum = 0;
  for (int k0 = 0; k0 < n; k0 += 16) {
    as[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < 16; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] += sum;
}

// One pipeline stage: out[i] = the mean of in[i-1..i+1] (the ends repeated).
extern "C" __global__ void smooth(const float *in, float *out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float left = in[i > 0 ? i - 1 : 0], right = in[i + 1 < n ? i + 1 : n - 1];
  out[i] = (left + in[i] + right) * (1.0f / 3.0f);
}
