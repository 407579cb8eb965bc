/* The Jacobi sweep of the CUDA versions (native_cuda.cu and native_cuda_graph.cu include this
 * file, annotated_cuda.c declares the kernel as a task). Rows [first, first + rows) of the
 * n x n grid, from the source grid into the destination grid: src and dst point at row first
 * of each (src[-n] is row first - 1, read only where first > 0). An interior point becomes the
 * mean of its four neighbours, added in the order of heat.h's reference; a boundary point
 * (first or last row or column) is copied, so that every point of the rows is written and the
 * boundary stays fixed in both grids.
 * Launched as a grid of (n / HEAT_LOCAL_X) x (rows / HEAT_LOCAL_Y) blocks, rounded up. */
#define HEAT_LOCAL_X 32 /* as in heat.h */
#define HEAT_LOCAL_Y 8  /* as in heat.h */

__global__ void heat_sweep(int n, int first, int rows, const float *src, float *dst) {
  int j = blockIdx.x * blockDim.x + threadIdx.x; /* column */
  int r = blockIdx.y * blockDim.y + threadIdx.y; /* row, in the block of rows */
  if (j >= n || r >= rows) return;
  int i = first + r;
  long at = (long)r * n + j;
  if (i == 0 || i == n - 1 || j == 0 || j == n - 1)
    dst[at] = src[at];
  else
    dst[at] = 0.25f * (((src[at - n] + src[at + n]) + src[at - 1]) + src[at + 1]);
}
