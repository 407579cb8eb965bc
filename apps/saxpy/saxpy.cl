/* The SAXPY kernel of the OpenCL versions (native_opencl.c builds this file at run time,
 * annotated_opencl.c declares the kernel as a task): y = a*x + y on n floats, one work-item
 * per element. */
__kernel void saxpy(int n, float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
