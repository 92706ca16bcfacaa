// Kernels for cudasim_api_test, compiled by nvcc so that they are registered and launched exactly
// as a user's program does (__cudaRegisterFunction, __cudaLaunchKernel). Test-only.
#include "tests/cudasim/test_kernels.h"

__global__ void tiny_kernel(int* out) {
  if (out != nullptr) out[0] = 1;
}

__global__ void other_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = 0.f;
}

cudaError_t LaunchTiny(dim3 grid, dim3 block, cudaStream_t stream) {
  tiny_kernel<<<grid, block, 0, stream>>>(nullptr);
  return cudaGetLastError();
}

cudaError_t LaunchOther(dim3 grid, dim3 block, cudaStream_t stream) {
  other_kernel<<<grid, block, 0, stream>>>(nullptr, 0);
  return cudaGetLastError();
}

const void* TinyKernelHostFunction() { return reinterpret_cast<const void*>(&tiny_kernel); }
