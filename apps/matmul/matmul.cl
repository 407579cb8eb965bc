/* The tile kernel of the OpenCL matmul versions (native_opencl.c builds this file at run time,
 * annotated_opencl.c declares the kernel as a task): c += a * b on nb x nb row-major float
 * tiles, nb a multiple of 64. The algorithm of matmul.cu: each work-group of 16 x 16 work-items
 * computes a 64 x 64 block of c, each work-item 4 x 4 of its elements (rows ty + 16 r, columns
 * tx + 16 s); the blocks of a and b pass through local memory 16 columns (rows) at a time, a's
 * block transposed, one column of padding avoiding bank conflicts. */
#define MATMUL_BLOCK 64 /* c block per work-group */
#define MATMUL_STEP 16  /* k per pass through local memory */

__kernel void matmul_tile(int nb, __global const float *a, __global const float *b,
                          __global float *c) {
  __local float as[MATMUL_STEP][MATMUL_BLOCK + 1]; /* as[k][row] */
  __local float bs[MATMUL_STEP][MATMUL_BLOCK];     /* bs[k][column] */
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * MATMUL_BLOCK, column = get_group_id(0) * MATMUL_BLOCK;
  float sum[4][4] = {{0}};
  for (int k0 = 0; k0 < nb; k0 += MATMUL_STEP) {
    for (int r = 0; r < 4; ++r) {
      as[tx][ty + 16 * r] = a[(row + ty + 16 * r) * nb + k0 + tx];
      bs[ty][tx + 16 * r] = b[(k0 + ty) * nb + column + tx + 16 * r];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < MATMUL_STEP; ++k) {
      float av[4], bv[4];
      for (int r = 0; r < 4; ++r) {
        av[r] = as[k][ty + 16 * r];
        bv[r] = bs[k][tx + 16 * r];
      }
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) sum[r][s] += av[r] * bv[s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) c[(row + ty + 16 * r) * nb + column + tx + 16 * s] += sum[r][s];
}
