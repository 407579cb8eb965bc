// Kernels that the pragmas of opencl_target_clauses.c name with file(...): embedded from the
// pragma, not given to nanocc. No build options reach this file's program.
#ifdef SCALE
#error "SCALE belongs to the program that nanocc builds from the command line's .cl files"
#endif

__kernel void scale_kernel(int n, float a, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * y[i];
}

__kernel void add_into(int n, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] += x[i];
}

__kernel void square(int n, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = y[i] * y[i];
}
