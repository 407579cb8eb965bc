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
