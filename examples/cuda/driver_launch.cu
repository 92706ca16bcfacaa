// Kernels launched through the CUDA driver API, as cuBLASLt (cuLaunchKernelEx) and Triton
// (cuLaunchKernel) launch theirs: no runtime launch call around them, so a profiler sees only a
// driver-API callback and a kernel record carrying the driver call's correlation id. The CUfunction
// comes from the runtime (cudaGetFuncBySymbol), so the program links libcudart and libcuda.so.1
// (the driver's, or the stand-in's under tests/cudasim). Usage: driver_launch [launches per API]
#include <cuda.h>

#include <cstdio>
#include <cstdlib>

#include "check.h"

#define DRIVER_CHECK(call)                                                                   \
  do {                                                                                       \
    CUresult driver_err_ = (call);                                                           \
    if (driver_err_ != CUDA_SUCCESS) {                                                       \
      const char* driver_name_ = nullptr;                                                    \
      cuGetErrorName(driver_err_, &driver_name_);                                            \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,         \
                   driver_name_ != nullptr ? driver_name_ : "?", static_cast<int>(driver_err_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

__global__ void scale_kernel(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

int main(int argc, char** argv) {
  const int per_api = argc > 1 ? std::atoi(argv[1]) : 3;
  if (per_api <= 0) {
    std::fprintf(stderr, "usage: %s [launches per API > 0]\n", argv[0]);
    return 2;
  }
  int n = 1 << 16;
  float* data = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&data, n * sizeof(float)));
  EXAMPLE_CHECK(cudaMemset(data, 0, n * sizeof(float)));  // also makes the primary context current
  cudaStream_t stream;
  EXAMPLE_CHECK(cudaStreamCreate(&stream));
  CUfunction fn = nullptr;
  EXAMPLE_CHECK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&scale_kernel)));

  float factor = 2.0f;
  void* args[] = {&data, &factor, &n};
  const unsigned block = 256, grid = (n + block - 1) / block;
  for (int i = 0; i < per_api; ++i) {  // Triton's way
    DRIVER_CHECK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, reinterpret_cast<CUstream>(stream),
                                args, nullptr));
  }
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = block;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = 0;
  config.hStream = reinterpret_cast<CUstream>(stream);
  for (int i = 0; i < per_api; ++i) {  // cuBLASLt's way
    DRIVER_CHECK(cuLaunchKernelEx(&config, fn, args, nullptr));
  }
  scale_kernel<<<grid, block, 0, stream>>>(data, factor, n);  // and one runtime launch
  EXAMPLE_CHECK(cudaGetLastError());
  EXAMPLE_CHECK(cudaStreamSynchronize(stream));
  float first = -1.0f;
  EXAMPLE_CHECK(cudaMemcpy(&first, data, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("driver_launch: first=%g (0 on a real GPU: the data started at 0)\n", first);
  EXAMPLE_CHECK(cudaStreamDestroy(stream));
  EXAMPLE_CHECK(cudaFree(data));
  // What the program asked the GPU to do, for checkers (scripts/gpu-check) to compare with.
  std::printf("kernels=%d driver_launches=%d copies=1 memsets=1\n", 2 * per_api + 1, 2 * per_api);
  std::printf("GPROF_EXAMPLE_DONE driver_launch\n");
  return 0;
}
