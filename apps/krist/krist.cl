/* krist.cl: the OpenCL kernel of the Krist application, shared by native_opencl.c (which
 * builds it at run time) and annotated_opencl.c (which declares it as a task). One work-item
 * per reflection of a block: F = sum over all atoms of f * exp(2 pi i t), t = h x + k y + l z,
 * written as f[2 i] = Re F, f[2 i + 1] = Im F. atoms holds x, y, z, f per atom (16 bytes). */
__kernel void krist(int natoms, __global const float *atoms, int n, __global const int *hkl,
                    __global float *f) {
  int i = get_global_id(0);
  if (i >= n) return; /* the index space is rounded up to whole groups */
  float h = (float)hkl[3 * i], k = (float)hkl[3 * i + 1], l = (float)hkl[3 * i + 2];
  float re = 0.0f, im = 0.0f;
  for (int j = 0; j < natoms; ++j) {
    float4 atom = vload4(j, atoms); /* the same atom for all work-items of a group */
    float t = h * atom.x + k * atom.y + l * atom.z;
    t -= rint(t); /* whole turns away (exactly): the angle stays within [-pi, pi] */
    float c;
    float s = sincos(6.28318531f * t, &c);
    re += atom.w * c;
    im += atom.w * s;
  }
  f[2 * i] = re;
  f[2 * i + 1] = im;
}
