/* The NBody kernel of the CUDA versions (native_cuda.cu includes this file, annotated_cuda.c
 * and annotated_mixed.c declare the kernel as a task). One time step for the bodies
 * [first, first + count): the acceleration of each from all n bodies of the previous step
 * (pos: x, y, z and the mass in w), then the new velocity and position, written to the block's
 * place in the next step's arrays (vel, new_pos and new_vel point at the block).
 *
 * A thread block holds NBODY_GROUP bodies and NBODY_SPLIT rows of threads: row r sums over the
 * r-th part of all bodies, tile by tile through shared memory (each body read once from global
 * memory per block), and the rows' sums meet at the end. Splitting the sum gives a block of
 * bodies NBODY_SPLIT times more threads, so that the kernel of one block fills the GPU.
 * Launched as a grid of (count / NBODY_GROUP) blocks of NBODY_GROUP x NBODY_SPLIT threads. */
#define NBODY_GROUP 64 /* as in nbody.h */
#define NBODY_SPLIT 8  /* as in nbody.h */

/* Blocks of NBODY_GROUP x NBODY_SPLIT threads, 2048 threads per multiprocessor (32 registers
 * each): a full GPU even when a block of bodies gives few thread blocks. */
__global__ void __launch_bounds__(NBODY_GROUP * NBODY_SPLIT, 2048 / (NBODY_GROUP * NBODY_SPLIT))
nbody_step(int n, int first, int count, float dt, float eps2, const float4 *pos,
           const float4 *vel, float4 *new_pos, float4 *new_vel) {
  __shared__ float4 tile[NBODY_SPLIT][NBODY_GROUP];
  int tx = threadIdx.x, ty = threadIdx.y;
  int i = blockIdx.x * NBODY_GROUP + tx; /* this thread's body, in the block */
  float4 me = pos[first + (i < count ? i : count - 1)];
  int part = (n + NBODY_SPLIT - 1) / NBODY_SPLIT; /* the bodies of each row */
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int t = 0; t < part; t += NBODY_GROUP) {
    int j = ty * part + t + tx;
    /* Past the end: a body of mass 0, which adds nothing. */
    tile[ty][tx] = t + tx < part && j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
#pragma unroll 16
    for (int k = 0; k < NBODY_GROUP; ++k) {
      float4 o = tile[ty][k];
      float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
      float d2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
      float inv = rsqrtf(d2);
      float s = o.w * inv * inv * inv; /* m / (r^2 + eps^2)^(3/2); 0 for the body itself */
      ax = fmaf(dx, s, ax);
      ay = fmaf(dy, s, ay);
      az = fmaf(dz, s, az);
    }
    __syncthreads();
  }
  tile[ty][tx] = make_float4(ax, ay, az, 0.0f);
  __syncthreads();
  if (ty == 0 && i < count) {
    for (int r = 1; r < NBODY_SPLIT; ++r) {
      ax += tile[r][tx].x;
      ay += tile[r][tx].y;
      az += tile[r][tx].z;
    }
    float4 v = vel[i];
    v.x = fmaf(ax, dt, v.x);
    v.y = fmaf(ay, dt, v.y);
    v.z = fmaf(az, dt, v.z);
    me.x = fmaf(v.x, dt, me.x);
    me.y = fmaf(v.y, dt, me.y);
    me.z = fmaf(v.z, dt, me.z);
    new_vel[i] = v;
    new_pos[i] = me; /* the mass (w) unchanged */
  }
}
