/* Golden test: the lowered text of a task with versions (implements): an OpenCL one under
 * other parameter names and without data clauses, a CUDA one, and an smp one declared after
 * the task and its calls (the task's code follows it). */
#pragma omp target device(smp)
#pragma omp task in([n]x) inout([n]y)
void axpy(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
}

#pragma omp target device(opencl) ndrange(1, len, 64) implements(axpy)
#pragma omp task
__kernel void axpy_cl(int len, float alpha, __global const float *src, __global float *dst);

#pragma omp target device(cuda) ndrange(1, n, 64) implements(axpy)
#pragma omp task in([n]x) inout([n]y)
__global__ void axpy_cuda(int n, float a, const float *x, float *y);

void run(int n, float *x, float *y) { axpy(n, 2.0f, x, y); }

#pragma omp target device(smp) implements(axpy)
#pragma omp task
void axpy_host(int n, float a, const float *x, float *y) {
  for (int i = n - 1; i >= 0; --i) y[i] += a * x[i];
}
