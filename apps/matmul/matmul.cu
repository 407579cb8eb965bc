/* The tile kernel of the CUDA matmul versions (native_cuda.cu includes this file,
 * annotated_cuda.c declares the kernel as a task): c += a * b on nb x nb row-major float tiles,
 * nb a multiple of 64. Each block of 16 x 16 threads computes a 64 x 64 block of c, each thread
 * 4 x 4 of its elements (rows ty + 16 r, columns tx + 16 s, so that neighbouring threads touch
 * neighbouring columns). The blocks of a and b pass through shared memory 16 columns (rows) at
 * a time; a's block is stored transposed, one column of padding avoiding bank conflicts. */
#define MATMUL_BLOCK 64 /* c block per thread block */
#define MATMUL_STEP 16  /* k per pass through shared memory */

__global__ void matmul_tile(int nb, const float *a, const float *b, float *c) {
  __shared__ float as[MATMUL_STEP][MATMUL_BLOCK + 1]; /* as[k][row] */
  __shared__ float bs[MATMUL_STEP][MATMUL_BLOCK];     /* bs[k][column] */
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * MATMUL_BLOCK, column = blockIdx.x * MATMUL_BLOCK;
  float sum[4][4] = {{0}};
  for (int k0 = 0; k0 < nb; k0 += MATMUL_STEP) {
    for (int r = 0; r < 4; ++r) {
      as[tx][ty + 16 * r] = a[(row + ty + 16 * r) * nb + k0 + tx];
      bs[ty][tx + 16 * r] = b[(k0 + ty) * nb + column + tx + 16 * r];
    }
    __syncthreads();
    for (int k = 0; k < MATMUL_STEP; ++k) {
      float av[4], bv[4];
      for (int r = 0; r < 4; ++r) {
        av[r] = as[k][ty + 16 * r];
        bv[r] = bs[k][tx + 16 * r];
      }
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) sum[r][s] += av[r] * bv[s];
    }
    __syncthreads();
  }
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) c[(row + ty + 16 * r) * nb + column + tx + 16 * s] += sum[r][s];
}
