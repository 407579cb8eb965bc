#ifndef SCALE
#error "SCALE comes from nanocc --opencl-build-opts=-DSCALE=2.0f"
#endif

__kernel void saxpy(int n, float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}

__kernel void scale_local(int n, __global float *y, __local float *tmp) {
  int i = get_global_id(0), l = get_local_id(0);
  if (i < n) tmp[l] = y[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n) y[i] = SCALE * tmp[l];
}

__kernel void add_block(__global float *m, int cols, float v, int rows) {
  (void)rows;
  m[get_global_id(0) * cols + get_global_id(1)] += v;
}

__kernel void scaled_copy(int n, float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i];
}
