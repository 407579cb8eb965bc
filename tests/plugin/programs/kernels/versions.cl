// The OpenCL versions of the tasks of versions_main.c and versions.h (implements).
__kernel void scale_cl(int n, __global float *x, float factor) {
  int i = get_global_id(0);
  if (i < n) x[i] *= factor;
}

__kernel void axpy_cl(int len, float alpha, __global const float *src, __global float *dst) {
  int i = get_global_id(0);
  if (i < len) dst[i] += alpha * src[i];
}
