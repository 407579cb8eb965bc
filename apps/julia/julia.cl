/* julia.cl: the OpenCL kernel of the Julia set application, shared by native_opencl.c (which
 * builds it at run time) and annotated_opencl.c (which declares it as a task). One work-item
 * per pixel of a slice of rows: the escape time of z -> z^2 + c from the pixel's complex
 * number, at most iters iterations, turned into an opaque 0xAARRGGBB colour (julia_colour in
 * julia.h). */
__kernel void julia(int width, int rows, int row0, float x0, float y0, float step, float cre,
                    float cim, int iters, __global unsigned int *slice) {
  int col = get_global_id(0);
  int row = get_global_id(1);
  if (col >= width || row >= rows) return; /* the index space is rounded up to whole groups */
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
