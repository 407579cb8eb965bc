// Versions (implements): errors at the 'implements' clause, or at the clause that is wrong.
#include "versions_task.h"

#pragma omp target device(smp)
#pragma omp task inout([n]x)
void scale(int n, float *x) { for (int i = 0; i < n; ++i) x[i] *= 2; }

void plain(int n, float *x) { (void)n; (void)x; }

// Accepted: an OpenCL version without data clauses (scale's apply), an smp version with the
// same clauses under other parameter names, a CUDA version; declared before and after the
// task and its calls.
#pragma omp target device(opencl) ndrange(1, n, 64) implements(scale)
#pragma omp task
__kernel void scale_cl(int n, __global float *x);

#pragma omp target device(smp) implements(scale)
#pragma omp task inout([len]v)
void scale_other(int len, float *v) { for (int i = 0; i < len; ++i) v[i] += v[i]; }

// Accepted: the clauses compare by parameter position, whatever the names of the first
// declaration.
void first(int, float *);
#pragma omp task inout([n]x)
void first(int n, float *x) { x[0] = (float)n; }
#pragma omp target device(smp) implements(first)
#pragma omp task inout([m]y)
void first_version(int m, float *y);

// expected-error@+1 {{no function 'undeclared' is declared: 'implements' names the function task that 'v1' is a version of}}
#pragma omp target device(smp) implements(undeclared)
#pragma omp task
void v1(int n, float *x);

// expected-error@+1 {{'plain' is not a function task: 'implements' names a function with a '#pragma omp task' of its own}}
#pragma omp target device(smp) implements(plain)
#pragma omp task
void v2(int n, float *x);

// expected-error@+1 {{'v3' cannot implement itself}}
#pragma omp target device(smp) implements(v3)
#pragma omp task
void v3(int n, float *x);

// expected-error@+1 {{'v4' cannot implement 'scale': it has 3 parameters and 'scale' has 2}}
#pragma omp target device(smp) implements(scale)
#pragma omp task
void v4(int n, float *x, int extra);

// expected-error@+1 {{'v5' cannot implement 'scale': parameter 2 has type 'double *' here and 'float *' in 'scale'}}
#pragma omp target device(smp) implements(scale)
#pragma omp task
void v5(int n, double *x);

// expected-error@+1 {{'v6' cannot implement 'scale': a version returns void and takes no variable arguments}}
#pragma omp target device(smp) implements(scale)
#pragma omp task
int v6(int n, float *x);

// expected-error@+1 {{clause 'implements' goes on a '#pragma omp target' line before the task}}
#pragma omp task implements(scale)
void v7(int n, float *x);

// expected-error@+1 {{'scale_other' is itself a version (of 'scale'): name the function task that it implements}}
#pragma omp target device(smp) implements(scale_other)
#pragma omp task
void v8(int n, float *x);

// expected-error@+2 {{the dependences and copies of 'v9' differ from those of 'scale'}}
#pragma omp target device(smp) implements(scale)
#pragma omp task in([n]x)
void v9(int n, float *x);

// expected-error@+2 {{clause 'priority' does not apply to a version: calls of 'scale' make the task, with the clauses of its pragma}}
#pragma omp target device(smp) implements(scale)
#pragma omp task priority(1)
void v10(int n, float *x);

// expected-error@+1 {{clause 'ndrange' of 'v11' differs from that of 'scale_cl': a task has one index space for all its kernels}}
#pragma omp target device(opencl) ndrange(1, n, 32) implements(scale)
#pragma omp task
__kernel void v11(int n, __global float *x);

// expected-error@+1 {{a device(opencl) kernel needs an 'ndrange' clause}}
#pragma omp target device(opencl) implements(scale)
#pragma omp task
__kernel void v12(int n, __global float *x);

// expected-error@+1 {{function task 'elsewhere' is defined in another file, which makes its task: declare this version where that file sees it}}
#pragma omp target device(smp) implements(elsewhere)
#pragma omp task
void v13(int *x);

void use(float *x) {
  scale(4, x);
  // expected-error@+1 {{'scale_cl' is a version of function task 'scale': call 'scale', whose task runs one of its versions}}
  scale_cl(4, x);
  int y = 0;
  // expected-error@+1 {{'implements' applies to a function declaration (a version of a function task), not to an inline task}}
  #pragma omp target device(smp) implements(scale)
  #pragma omp task
  y = 1;
  (void)y;
}

#pragma omp target device(cuda) ndrange(1, n, 64) implements(scale)
#pragma omp task
__global__ void scale_cuda(int n, float *x);

// expected-error@+3 {{pointer parameter 'x' of a device(cuda) kernel must be named in a dependence or copy clause}}
#pragma omp target device(cuda) ndrange(1, n, 128) implements(only_value)
#pragma omp task
__global__ void v14(int n, float *x);
#pragma omp task
void only_value(int n, float *x) { (void)n; (void)x; }
