/* The NBody kernel of the OpenCL versions (native_opencl.c builds this file at run time,
 * annotated_opencl.c and annotated_mixed.c declare the kernel as a task). One time step for the
 * bodies [first, first + count): the acceleration of each from all n bodies of the previous
 * step (pos: x, y, z and the mass in w), then the new velocity and position, written to the
 * block's place in the next step's arrays (vel, new_pos and new_vel point at the block).
 *
 * A work-group holds NBODY_GROUP bodies and NBODY_SPLIT rows of work-items: row r sums over the
 * r-th part of all bodies, tile by tile through local memory (each body read once from global
 * memory per work-group), and the rows' sums meet at the end. Splitting the sum gives a block
 * of bodies NBODY_SPLIT times more work-items, so that the kernel of one block fills the GPU.
 * Launched as a 2-D range of count x NBODY_SPLIT work-items in groups of NBODY_GROUP x
 * NBODY_SPLIT. */
#define NBODY_GROUP 64 /* as in nbody.h */
#define NBODY_SPLIT 8  /* as in nbody.h */

__kernel __attribute__((reqd_work_group_size(NBODY_GROUP, NBODY_SPLIT, 1))) void
nbody_step(int n, int first, int count, float dt, float eps2, __global const float4 *pos,
           __global const float4 *vel, __global float4 *new_pos, __global float4 *new_vel) {
  __local float4 tile[NBODY_SPLIT][NBODY_GROUP];
  int tx = get_local_id(0), ty = get_local_id(1);
  int i = get_group_id(0) * NBODY_GROUP + tx; /* this work-item's body, in the block */
  float4 me = pos[first + (i < count ? i : count - 1)];
  int part = (n + NBODY_SPLIT - 1) / NBODY_SPLIT; /* the bodies of each row */
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int t = 0; t < part; t += NBODY_GROUP) {
    int j = ty * part + t + tx;
    /* Past the end: a body of mass 0, which adds nothing. */
    tile[ty][tx] = t + tx < part && j < n ? pos[j] : (float4)(0.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll 16
    for (int k = 0; k < NBODY_GROUP; ++k) {
      float4 o = tile[ty][k];
      float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
      float d2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)));
      float inv = rsqrt(d2);
      float s = o.w * inv * inv * inv; /* m / (r^2 + eps^2)^(3/2); 0 for the body itself */
      ax = fma(dx, s, ax);
      ay = fma(dy, s, ay);
      az = fma(dz, s, az);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  tile[ty][tx] = (float4)(ax, ay, az, 0.0f);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (ty == 0 && i < count) {
    for (int r = 1; r < NBODY_SPLIT; ++r) {
      ax += tile[r][tx].x;
      ay += tile[r][tx].y;
      az += tile[r][tx].z;
    }
    float4 v = vel[i];
    v.x = fma(ax, dt, v.x);
    v.y = fma(ay, dt, v.y);
    v.z = fma(az, dt, v.z);
    me.x = fma(v.x, dt, me.x);
    me.y = fma(v.y, dt, me.y);
    me.z = fma(v.z, dt, me.z);
    new_vel[i] = v;
    new_pos[i] = me; /* the mass (w) unchanged */
  }
}
