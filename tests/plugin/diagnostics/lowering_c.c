// Errors found when lowering tasks in C.
#include <stddef.h>

// expected-error@+1 {{function task 'vararg' cannot be variadic}}
#pragma omp task
void vararg(int n, ...) { (void)n; }

// expected-error@+1 {{'main' cannot be a task}}
#pragma omp task
int main(void);

// expected-error@+1 {{function task 'elsewhere' must be defined in this file}}
#pragma omp task
void elsewhere(int *x);
void call_elsewhere(int *x) { elsewhere(x); }

// expected-error@+1 {{data-sharing clauses apply to inline tasks only}}
#pragma omp task shared(x)
void sharing(int *x) { *x = 1; }

#pragma omp task inout(*x)
void twice(int *x);
// expected-error@+1 {{function 'twice' already has a task pragma}}
#pragma omp task inout(*x)
void twice(int *x) { *x *= 2; }

// A CUDA kernel (tests of device(cuda): cuda.c).
#pragma omp target device(cuda) ndrange(1, n, 1)
#pragma omp task
void k1(int n);

// expected-error@+2 {{device(smp) needs the body of 'k2' in this file (its smp version)}}
#pragma omp target device(opencl, smp) ndrange(1, n, 1)
#pragma omp task
void k2(int n);

// expected-error@+1 {{device 'opencl' appears twice in 'device'}}
#pragma omp target device(opencl, smp, opencl) ndrange(1, n, 1)
#pragma omp task
void k2b(int n) { (void)n; }

// expected-error@+1 {{a device(cuda) kernel needs an 'ndrange' clause}}
#pragma omp target device(smp, cuda)
#pragma omp task
void k2c(int n) { (void)n; }

// expected-error@+1 {{clause 'name' needs device(opencl)}}
#pragma omp target device(smp) name(other)
#pragma omp task
void k2d(int n) { (void)n; }

// expected-error@+1 {{clause 'file' needs device(opencl)}}
#pragma omp target file(k.cl)
#pragma omp task
void k2e(int n) { (void)n; }

// expected-error@+1 {{cannot read the kernel file}}
#pragma omp target device(opencl) ndrange(1, n) file(no_such_kernels.cl)
#pragma omp task
void k2f(int n);

// expected-error@+2 {{a device(opencl) task must be a kernel declaration without a body}}
#pragma omp target device(opencl) ndrange(1, n) name(k2g_kernel)
#pragma omp task
void k2g(int n) { (void)n; }

// expected-error@+1 {{a device(opencl) kernel needs an 'ndrange' clause}}
#pragma omp target device(opencl)
#pragma omp task
void k3(int n);

// expected-error@+1 {{ndrange(2, ...) takes 2 global sizes and optionally 2 local sizes; got 3 arguments after the dimensions}}
#pragma omp target device(opencl) ndrange(2, n, n, 8)
#pragma omp task
void k4(int n);

// expected-error@+1 {{the first argument of 'ndrange' is the number of dimensions: 1, 2 or 3}}
#pragma omp target device(opencl) ndrange(n, n)
#pragma omp task
void k5(int n);

// expected-error@+1 {{clause 'shmem' needs device(opencl)}}
#pragma omp target shmem(64)
#pragma omp task
void k6(int n) { (void)n; }

// expected-error@+1 {{clause 'ndrange' needs device(opencl)}}
#pragma omp target device(smp) ndrange(1, n, 1)
#pragma omp task
void k7(int n) { (void)n; }

// expected-error@+2 {{a device(opencl) task must be a kernel declaration without a body}}
#pragma omp target device(opencl) ndrange(1, n)
#pragma omp task
void k8(int n) { (void)n; }

void user(int *x, int n) {
  // expected-error@+1 {{'noflush' cannot be combined with 'on'}}
  #pragma omp taskwait noflush on(*x)
  // expected-error@+1 {{a task cannot apply to a declaration}}
  #pragma omp task
  int y = n;
  (void)y;
}
