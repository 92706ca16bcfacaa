// The stand-in libcuda.so.1: just enough of the CUDA driver API for programs that launch kernels
// through it directly, as Triton (cuLaunchKernel) and cuBLASLt (cuLaunchKernelEx) do. Every other
// function the toolkit's stubs/libcuda.so exports is a loud stub (gen_stubs.cmake). The virtual GPU
// lives in the stand-in libcudart.so.13, which this library links (the real dependency runs the
// other way: libcudart loads libcuda). Test-only; the product never links or ships it.
//
// Threads: any application thread. No state of its own.
#include <cuda.h>
#include <cupti.h>

#include "tests/cudasim/sim_api.h"

namespace {

CUresult Launch(CUpti_CallbackId cbid, const char* name, CUfunction f, unsigned gx, unsigned gy,
                unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared_mem,
                CUstream stream, void** args, const void* params) {
  return static_cast<CUresult>(cudasim_driver_launch(cbid, name, f, gx, gy, gz, bx, by, bz,
                                                     shared_mem, stream, args, params));
}

}  // namespace

extern "C" {

// The driver runs CUDA_INJECTION64_PATH's InitializeInjection at cuInit (REFERENCE.md section 1);
// the stand-in does it at the first runtime or driver call, whichever comes first.
CUresult cuInit(unsigned int /*flags*/) {
  cudasim_initialize();
  return CUDA_SUCCESS;
}

// One device once the driver is initialized; before cuInit the real driver answers
// CUDA_ERROR_NOT_INITIALIZED (cuda.h: "This indicates that the CUDA driver has not been
// initialized with cuInit() or that initialization has failed").
CUresult cuDeviceGetCount(int* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!cudasim_injection_started()) return CUDA_ERROR_NOT_INITIALIZED;
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS: *pStr = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE: *pStr = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_HANDLE: *pStr = "CUDA_ERROR_INVALID_HANDLE"; return CUDA_SUCCESS;
    default: *pStr = nullptr; return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (error) {
    case CUDA_SUCCESS: *pStr = "no error"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE: *pStr = "invalid argument"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_HANDLE: *pStr = "invalid resource handle"; return CUDA_SUCCESS;
    default: *pStr = nullptr; return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void** kernelParams, void** extra) {
  cuLaunchKernel_params p{f,         gridDimX,       gridDimY, gridDimZ,     blockDimX, blockDimY,
                          blockDimZ, sharedMemBytes, hStream,  kernelParams, extra};
  return Launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", f, gridDimX, gridDimY,
                gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, &p);
}

// Per-thread default stream variant (CUDA_API_PER_THREAD_DEFAULT_STREAM): stream 0 means the
// calling thread's stream, which the stand-in maps to the legacy stream (README "Timeline").
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                             unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                             unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                             void** kernelParams, void** extra) {
  cuLaunchKernel_ptsz_params p{f,         gridDimX,       gridDimY, gridDimZ,     blockDimX, blockDimY,
                               blockDimZ, sharedMemBytes, hStream,  kernelParams, extra};
  return Launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz", f, gridDimX,
                gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                hStream != nullptr ? hStream : CU_STREAM_PER_THREAD, kernelParams, &p);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                          void** extra) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuLaunchKernelEx_params p{config, f, kernelParams, extra};
  return Launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx", f, config->gridDimX,
                config->gridDimY, config->gridDimZ, config->blockDimX, config->blockDimY,
                config->blockDimZ, config->sharedMemBytes, config->hStream, kernelParams, &p);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                               void** extra) {
  if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuLaunchKernelEx_ptsz_params p{config, f, kernelParams, extra};
  return Launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz", f,
                config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                config->blockDimY, config->blockDimZ, config->sharedMemBytes,
                config->hStream != nullptr ? config->hStream : CU_STREAM_PER_THREAD, kernelParams,
                &p);
}

}  // extern "C"
