// Single-source OpenCL kernels: errors are reported on the pragmas, and the kernels' bodies
// (OpenCL C) are never compiled as host code, also when the file has errors.

// expected-error@+1 {{a kernel defined in this file takes no 'file' clause}}
#pragma omp target device(opencl) ndrange(1, n) file(k.cl)
#pragma omp task inout([n]y)
__kernel void k1(int n, __global float *y) {
  y[get_global_id(0)] = 0;
}

#pragma omp target device(opencl) ndrange(1, n)
// expected-error@+1 {{expected ')' to close 'inout('}}
#pragma omp task inout([n]y
__kernel void k2(int n, __global float *y) {
  barrier(CLK_LOCAL_MEM_FENCE);
  y[get_global_id(0)] = 0;
}

// expected-error@+1 {{clause 'shmem' needs device(opencl)}}
#pragma omp target device(smp) shmem(4)
#pragma omp task
void k3(int n) { (void)n; }

// A kernel with the OpenCL version and the smp version cannot share one body.
// expected-error@+2 {{device(smp) needs the body of 'k4' in this file (its smp version)}}
#pragma omp target device(opencl, smp) ndrange(1, n)
#pragma omp task inout([n]y)
void k4(int n, float *y);

// Without '__kernel', a body after target device(opencl) is host code, and wrong there.
// expected-error@+2 {{a device(opencl) task must be a kernel declaration without a body, or a '__kernel' function defined in this file (its body is OpenCL C)}}
#pragma omp target device(opencl) ndrange(1, n)
#pragma omp task
void k5(int n) { (void)n; }
