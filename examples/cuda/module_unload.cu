// A module loaded at run time (as Triton, TVM and torch.compile load theirs), its kernel launched
// through the driver API, and the module unloaded right after the work finished: before a
// profiler parses the activity buffer that holds the kernel records. A profiler that keeps a
// pointer into the module for the kernel's name would read freed memory. Then a few ordinary
// <<<>>> launches, so the buffer has more to hold. Usage: module_unload [launches]
#include <cuda.h>

#include <cstdio>
#include <cstdlib>

#include "check.h"

#define DRIVER_CHECK(call)                                                                   \
  do {                                                                                       \
    CUresult driver_err_ = (call);                                                           \
    if (driver_err_ != CUDA_SUCCESS) {                                                       \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call,              \
                   static_cast<int>(driver_err_));                                           \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// extern "C" __global__ void unload_kernel(float* x) { x[threadIdx.x] += 1.0f; }, as
// `nvcc --ptx -arch=compute_75` writes it (PTX ISA 8.0: any CUDA 12 or 13 driver JITs it).
const char kPtx[] = R"(.version 8.0
.target sm_75
.address_size 64
.visible .entry unload_kernel(.param .u64 unload_kernel_param_0)
{
  .reg .f32 %f<3>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [unload_kernel_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd4], %f2;
  ret;
}
)";

__global__ void after_unload_kernel(float* x) { x[threadIdx.x] *= 0.5f; }

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 10;
  if (launches <= 0) {
    std::fprintf(stderr, "usage: %s [launches > 0]\n", argv[0]);
    return 2;
  }
  float* x = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&x, 32 * sizeof(float)));  // the runtime makes the context current
  CUmodule module;
  CUfunction fn;
  DRIVER_CHECK(cuModuleLoadData(&module, kPtx));
  DRIVER_CHECK(cuModuleGetFunction(&fn, module, "unload_kernel"));
  void* args[] = {&x};
  for (int i = 0; i < launches; ++i) {
    DRIVER_CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
  }
  DRIVER_CHECK(cuCtxSynchronize());
  DRIVER_CHECK(cuModuleUnload(module));
  for (int i = 0; i < 3; ++i) after_unload_kernel<<<1, 32>>>(x);
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  EXAMPLE_CHECK(cudaFree(x));
  // What the program asked the GPU to do, for checkers (scripts/gpu-check).
  std::printf("kernels=%d unloaded_module_kernels=%d copies=0 memsets=0\n", launches + 3, launches);
  std::printf("GPROF_EXAMPLE_DONE module_unload\n");
  return 0;
}
