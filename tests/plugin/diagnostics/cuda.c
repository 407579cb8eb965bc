// device(cuda): kernels declared in host code (their bodies are in .cu files), CUDA's
// specifiers defined away, and the errors of kernels that CUDA cannot run.

// Accepted: '__global__' and without it, device(cuda, smp), and several kernel devices.
#pragma omp target device(cuda) ndrange(1, n, 128) shmem(128 * sizeof(float)) copy_deps
#pragma omp task in([n]x) inout([n]y)
__global__ void ok1(int n, float a, const float *x, float *y);

#pragma omp target device(cuda) ndrange(2, n, n) name(other) no_copy_deps copy_inout([n]y)
#pragma omp task inout([n]y)
void ok2(int n, float *y);

#pragma omp target device(cuda, smp) ndrange(1, n)
#pragma omp task inout([n]y)
void ok3(int n, float *y) { y[0] = (float)n; }

#pragma omp target device(opencl, cuda) ndrange(1, n)
#pragma omp task inout([n]y)
void ok4(int n, float *y);

#pragma omp target device(cuda) ndrange(1, n, 256)
#pragma omp task inout([n]y)
__launch_bounds__(256) __global__ void ok5(int n, float *y);

__host__ __device__ static inline float helper(float v) { return v; }
__shared__ int not_shared_in_host_code;
__constant__ int not_constant_in_host_code;
__device__ __managed__ int managed;

// expected-error@+1 {{a device(cuda) kernel needs an 'ndrange' clause}}
#pragma omp target device(cuda)
#pragma omp task inout([n]y)
__global__ void e1(int n, float *y);

// expected-error@+2 {{a device(cuda) task must be a kernel declaration without a body}}
#pragma omp target device(cuda) ndrange(1, n)
#pragma omp task inout([n]y)
void e2(int n, float *y) { y[0] = (float)n; }

// A pointer that no clause names: OpenCL's __local memory has no CUDA parameter.
#pragma omp target device(cuda) ndrange(1, n) shmem(64)
#pragma omp task inout([n]y)
// expected-error@+1 {{pointer parameter 'tmp' of a device(cuda) kernel must be named in a dependence or copy clause}}
__global__ void e3(int n, float *y, float *tmp);

#pragma omp target device(opencl, cuda) ndrange(1, n) shmem(64)
#pragma omp task inout([n]y)
// expected-error@+1 {{pointer parameter 'tmp' of a device(cuda) kernel must be named}}
void e4(int n, float *y, __local float *tmp);

// expected-error@+1 {{clause 'file' needs device(opencl) (CUDA kernels come from the .cu files given to nanocc or nanocxx)}}
#pragma omp target device(cuda) ndrange(1, n) file(k.cu)
#pragma omp task inout([n]y)
void e5(int n, float *y);

// expected-error@+2 {{device(smp) needs the body of 'e6' in this file (its smp version)}}
#pragma omp target device(smp, cuda) ndrange(1, n)
#pragma omp task inout([n]y)
void e6(int n, float *y);

// expected-error@+1 {{device 'cuda' appears twice in 'device'}}
#pragma omp target device(cuda, cuda) ndrange(1, n)
#pragma omp task inout([n]y)
void e7(int n, float *y);

// expected-error@+1 {{clause 'shmem' needs device(opencl) or device(cuda)}}
#pragma omp target device(smp) shmem(64)
#pragma omp task inout([n]y)
void e8(int n, float *y) { y[0] = (float)n; }

// expected-error@+1 {{the first argument of 'ndrange' is the number of dimensions: 1, 2 or 3}}
#pragma omp target device(cuda) ndrange(4, n, n, n, n)
#pragma omp task inout([n]y)
void e9(int n, float *y);

#pragma omp target device(cuda) ndrange(1, n)
#pragma omp task inout([n]y)
// expected-error@+1 {{pointer parameter of a device(cuda) kernel must be named}}
void e10(int n, float *y, float *);

// expected-error@+1 {{expected one of smp,opencl,cuda in 'device'}}
#pragma omp target device(hip) ndrange(1, n)
#pragma omp task inout([n]y)
void e11(int n, float *y);

void user(float *y, int n) {
  ok1(n, 2.0f, y, y);
  ok2(n, y);
  ok3(n, y);
  ok4(n, y);
  ok5(n, y);
  (void)helper;
}
