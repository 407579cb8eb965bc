/* julia.cu: the CUDA kernel of the Julia set application, shared by native_cuda.cu (which
 * includes it) and annotated_cuda.c (which declares it as a task). One thread per pixel of a
 * slice of rows: the escape time of z -> z^2 + c from the pixel's complex number, at most
 * iters iterations, turned into an opaque 0xAARRGGBB colour (julia_colour in julia.h). */
__global__ void julia(int width, int rows, int row0, float x0, float y0, float step, float cre,
                      float cim, int iters, unsigned int *slice) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= width || row >= rows) return; /* the grid is rounded up to whole blocks */
  float x = x0 + (float)col * step, y = y0 - (float)(row0 + row) * step;
  int i = 0;
  for (; i < iters; ++i) {
    float x2 = x * x, y2 = y * y;
    if (x2 + y2 > 4.0f) break;
    y = 2.0f * x * y + cim;
    x = x2 - y2 + cre;
  }
  unsigned int t = (unsigned int)i;
  slice[(size_t)row * width + col] =
      i >= iters ? 0xFF000000u
                 : 0xFF000000u | ((t * 11u & 255u) << 16) | ((t * 5u & 255u) << 8) |
                       (255u - (t * 3u & 255u));
}
