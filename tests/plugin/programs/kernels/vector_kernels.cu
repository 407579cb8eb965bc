// CUDA kernels on CUDA's vector types, for cuda_vector_types.c (whose host code uses the same
// float4 / float2 through nanocc --cuda).
__global__ void advance(int n, float4 *bodies, const float2 *pushes) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 b = bodies[i];
  bodies[i] = make_float4(b.x + pushes[i].x, b.y + pushes[i].y, b.z, b.w * 2.0f);
}
