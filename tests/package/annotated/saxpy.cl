#ifndef SCALE
#error "SCALE comes from OPENCL_BUILD_OPTIONS of nanort_annotate"
#endif

__kernel void saxpy(int n, float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = SCALE * (a * x[i] + y[i]);
}
