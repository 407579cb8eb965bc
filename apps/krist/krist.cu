/* krist.cu: the CUDA kernel of the Krist application, shared by native_cuda.cu (which includes
 * it) and annotated_cuda.c (which declares it as a task). One thread per reflection of a block:
 * F = sum over all atoms of f * exp(2 pi i t), t = h x + k y + l z, written as
 * f[2 i] = Re F, f[2 i + 1] = Im F. atoms holds x, y, z, f per atom (16 bytes). */
__global__ void krist(int natoms, const float *atoms, int n, const int *hkl, float *f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return; /* the grid is rounded up to whole blocks */
  float h = (float)hkl[3 * i], k = (float)hkl[3 * i + 1], l = (float)hkl[3 * i + 2];
  const float4 *a = (const float4 *)atoms;
  float re = 0.0f, im = 0.0f;
  for (int j = 0; j < natoms; ++j) {
    float4 atom = a[j]; /* the same atom for all threads: one load, broadcast from the cache */
    float t = h * atom.x + k * atom.y + l * atom.z;
    t -= rintf(t); /* whole turns away (exactly): the angle stays within [-pi, pi] */
    float s, c;
    sincosf(6.28318531f * t, &s, &c);
    re += atom.w * c;
    im += atom.w * s;
  }
  f[2 * i] = re;
  f[2 * i + 1] = im;
}
