// Launch helpers for cudasim_api_test (defined in test_kernels.cu, compiled by nvcc). Test-only.
#pragma once

#include <cuda_runtime_api.h>

// Mangled device names, as CUPTI reports them.
inline constexpr const char* kTinyKernelName = "_Z11tiny_kernelPi";
inline constexpr const char* kOtherKernelName = "_Z12other_kernelPfi";

cudaError_t LaunchTiny(dim3 grid, dim3 block, cudaStream_t stream);
cudaError_t LaunchOther(dim3 grid, dim3 block, cudaStream_t stream);
const void* TinyKernelHostFunction();
