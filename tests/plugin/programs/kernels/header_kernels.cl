/* The kernels declared in header_kernels.h (reverse_blocks also in clause_scope.c). */
__kernel void saxpy(int n, float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}

__kernel void reverse_blocks(int n, __global float *y, __local float *tile) {
  int i = get_global_id(0), l = get_local_id(0), b = get_local_size(0);
  if (i < n) tile[l] = y[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n) y[i] = tile[b - 1 - l];
}
