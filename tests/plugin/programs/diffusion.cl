/* One step of an integer diffusion over a block [lo, lo + len) of a grid of n points: each
 * point becomes the rounded-down mean of itself (twice) and its neighbours, the ends stay,
 * and the middle point gains q. */
__kernel void smooth(int n, int lo, int q, __global const int *a, __global int *b) {
  int i = lo + get_global_id(0);
  int v = (i == 0 || i == n - 1) ? a[i] : (a[i - 1] + 2 * a[i] + a[i + 1]) / 4;
  if (i == n / 2) v += q;
  b[i - lo] = v;
}
