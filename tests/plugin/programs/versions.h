/* A function task with a version, used from several files: the pragmas of scale and of its
 * OpenCL version scale_cl are here. versions_task.c defines scale (its smp version), so its
 * compile makes the task, whose site lists both; versions_main.c only calls scale. */
#pragma omp target device(smp)
#pragma omp task inout([n]x)
void scale(int n, float *x, float factor);

#pragma omp target device(opencl) ndrange(1, n, 16) file(kernels/versions.cl) implements(scale)
#pragma omp task
__kernel void scale_cl(int n, __global float *x, float factor);

extern int scale_smp_runs;
