// Device queries of the stand-in libcudart.so.13: one H200-like device, its properties and
// attributes, function attributes and occupancy, versions, profiler start/stop, error state and
// strings; and the DEVICE activity record libcupti asks for. Test-only. Threads: any.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tests/cudasim/cudart/sim_state.h"

using namespace gprof::cudasim;

namespace {

constexpr const char* kDeviceName = "NVIDIA H200 (cudasim stand-in)";
constexpr size_t kGlobalMem = size_t{143771533312};
constexpr int kSms = 132;

cudaError_t Ok(ApiCall& call) { return static_cast<cudaError_t>(call.Finish(cudaSuccess)); }
cudaError_t Fail(ApiCall& call, cudaError_t e) { return static_cast<cudaError_t>(call.Finish(e)); }

void FillProps(cudaDeviceProp* p) {
  std::memset(p, 0, sizeof(*p));
  std::snprintf(p->name, sizeof(p->name), "%s", kDeviceName);
  for (int i = 0; i < 16; ++i) p->uuid.bytes[i] = static_cast<char>(0xC0 + i);
  p->totalGlobalMem = kGlobalMem;
  p->sharedMemPerBlock = 49152;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = 9;
  p->minor = 0;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->multiProcessorCount = kSms;
  p->canMapHostMemory = 1;
  p->concurrentKernels = 1;
  p->ECCEnabled = 1;
  p->pciBusID = 0x19;
  p->asyncEngineCount = 3;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = 6144;
  p->l2CacheSize = 52428800;
  p->maxThreadsPerMultiProcessor = 2048;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = 233472;
  p->regsPerMultiprocessor = 65536;
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = 232448;
  p->maxBlocksPerMultiProcessor = 32;
  p->reservedSharedMemPerBlock = 1024;
  p->hostRegisterSupported = 1;
  p->memoryPoolsSupported = 1;
  p->clusterLaunch = 1;
}

}  // namespace

extern "C" {

bool cudasim_fill_device_record(CUpti_ActivityDevice5* r) {
  // The device exists from driver initialization on; by default the stand-in plays that at the
  // context creation (CUDASIM_DEVICE_RECORD_BEFORE_INJECTION: before InitializeInjection).
  const bool driver_initialized = cudasim_current_context() != nullptr ||
                                  (Knobs().device_record_before_injection && cudasim_injection_started());
  if (!driver_initialized) return false;
  cudaDeviceProp p;
  FillProps(&p);
  *r = CUpti_ActivityDevice5{};
  r->kind = CUPTI_ACTIVITY_KIND_DEVICE;
  r->globalMemoryBandwidth = 4800000000ull;  // kB/s
  r->globalMemorySize = p.totalGlobalMem;
  r->constantMemorySize = static_cast<uint32_t>(p.totalConstMem);
  r->l2CacheSize = static_cast<uint32_t>(p.l2CacheSize);
  r->numThreadsPerWarp = 32;
  r->coreClockRate = 1980000;  // kHz
  r->numMemcpyEngines = static_cast<uint32_t>(p.asyncEngineCount);
  r->numMultiprocessors = static_cast<uint32_t>(p.multiProcessorCount);
  r->maxIPC = 4;
  r->maxWarpsPerMultiprocessor = 64;
  r->maxBlocksPerMultiprocessor = 32;
  r->maxSharedMemoryPerMultiprocessor = static_cast<uint32_t>(p.sharedMemPerMultiprocessor);
  r->maxRegistersPerMultiprocessor = 65536;
  r->maxRegistersPerBlock = 65536;
  r->maxSharedMemoryPerBlock = static_cast<uint32_t>(p.sharedMemPerBlock);
  r->maxThreadsPerBlock = 1024;
  r->maxBlockDimX = 1024; r->maxBlockDimY = 1024; r->maxBlockDimZ = 64;
  r->maxGridDimX = 2147483647; r->maxGridDimY = 65535; r->maxGridDimZ = 65535;
  r->computeCapabilityMajor = 9;
  r->computeCapabilityMinor = 0;
  r->id = 0;
  r->eccEnabled = 1;
  std::memcpy(&r->uuid, &p.uuid, sizeof(r->uuid));
  r->name = kDeviceName;
  r->isCudaVisible = 1;
  return true;
}

cudaError_t cudaGetDeviceCount(int* count) {
  cudaGetDeviceCount_v3020_params p{count};
  CUDASIM_RUNTIME_CALL(call, cudaGetDeviceCount_v3020, "cudaGetDeviceCount", &p);
  if (count == nullptr) return Fail(call, cudaErrorInvalidValue);
  *count = 1;
  return Ok(call);
}

cudaError_t cudaGetDevice(int* device) {
  cudaGetDevice_v3020_params p{device};
  CUDASIM_RUNTIME_CALL(call, cudaGetDevice_v3020, "cudaGetDevice", &p);
  if (device == nullptr) return Fail(call, cudaErrorInvalidValue);
  *device = 0;
  return Ok(call);
}

cudaError_t cudaSetDevice(int device) {
  cudaSetDevice_v3020_params p{device};
  CUDASIM_RUNTIME_CALL(call, cudaSetDevice_v3020, "cudaSetDevice", &p);
  return device == 0 ? Ok(call) : Fail(call, cudaErrorInvalidDevice);
}

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
  cudaInitDevice_v12000_params p{device, deviceFlags, flags};
  CUDASIM_RUNTIME_CALL(call, cudaInitDevice_v12000, "cudaInitDevice", &p);
  return device == 0 ? Ok(call) : Fail(call, cudaErrorInvalidDevice);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  cudaSetDeviceFlags_v3020_params p{flags};
  CUDASIM_RUNTIME_CALL(call, cudaSetDeviceFlags_v3020, "cudaSetDeviceFlags", &p);
  return Ok(call);
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  cudaGetDeviceFlags_v7000_params p{flags};
  CUDASIM_RUNTIME_CALL(call, cudaGetDeviceFlags_v7000, "cudaGetDeviceFlags", &p);
  if (flags == nullptr) return Fail(call, cudaErrorInvalidValue);
  *flags = cudaDeviceScheduleAuto;
  return Ok(call);
}

cudaError_t cudaDeviceReset(void) {
  CUDASIM_RUNTIME_CALL(call, cudaDeviceReset_v3020, "cudaDeviceReset", nullptr);
  uint64_t tail;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    tail = DeviceTailLocked(s);
  }
  WaitUntil(tail);
  return Ok(call);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  cudaGetDeviceProperties_v12000_params p{prop, device};
  CUDASIM_RUNTIME_CALL(call, cudaGetDeviceProperties_v12000, "cudaGetDeviceProperties", &p);
  if (prop == nullptr) return Fail(call, cudaErrorInvalidValue);
  if (device != 0) return Fail(call, cudaErrorInvalidDevice);
  FillProps(prop);
  return Ok(call);
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  cudaDeviceGetAttribute_v5000_params p{value, attr, device};
  CUDASIM_RUNTIME_CALL(call, cudaDeviceGetAttribute_v5000, "cudaDeviceGetAttribute", &p);
  if (value == nullptr) return Fail(call, cudaErrorInvalidValue);
  if (device != 0) return Fail(call, cudaErrorInvalidDevice);
  cudaDeviceProp d;
  FillProps(&d);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = d.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = d.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = d.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = d.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = d.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = d.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = d.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(d.sharedMemPerBlock); break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(d.sharedMemPerBlockOptin); break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = static_cast<int>(d.sharedMemPerMultiprocessor); break;
    case cudaDevAttrTotalConstantMemory: *value = static_cast<int>(d.totalConstMem); break;
    case cudaDevAttrWarpSize: *value = d.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = d.regsPerBlock; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = d.regsPerMultiprocessor; break;
    case cudaDevAttrClockRate: *value = 1980000; break;
    case cudaDevAttrMemoryClockRate: *value = 2619000; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = d.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = d.l2CacheSize; break;
    case cudaDevAttrMultiProcessorCount: *value = d.multiProcessorCount; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = d.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = d.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *value = d.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = d.minor; break;
    case cudaDevAttrConcurrentKernels: *value = 1; break;
    case cudaDevAttrAsyncEngineCount: *value = d.asyncEngineCount; break;
    case cudaDevAttrUnifiedAddressing: *value = 1; break;
    case cudaDevAttrManagedMemory: *value = 1; break;
    case cudaDevAttrConcurrentManagedAccess: *value = 1; break;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
    case cudaDevAttrIntegrated: *value = 0; break;
    case cudaDevAttrCanMapHostMemory: *value = 1; break;
    case cudaDevAttrEccEnabled: *value = 1; break;
    case cudaDevAttrPciBusId: *value = d.pciBusID; break;
    case cudaDevAttrPciDeviceId: *value = 0; break;
    case cudaDevAttrPciDomainId: *value = 0; break;
    case cudaDevAttrComputeMode: *value = cudaComputeModeDefault; break;
    case cudaDevAttrCooperativeLaunch: *value = 1; break;
    case cudaDevAttrStreamPrioritiesSupported: *value = 1; break;
    default:
      std::fprintf(stderr, "cudasim: cudaDeviceGetAttribute(%d) is not implemented\n",
                   static_cast<int>(attr));
      return Fail(call, cudaErrorInvalidValue);
  }
  return Ok(call);
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
  cudaDriverGetVersion_v3020_params p{driverVersion};
  CUDASIM_RUNTIME_CALL(call, cudaDriverGetVersion_v3020, "cudaDriverGetVersion", &p);
  if (driverVersion == nullptr) return Fail(call, cudaErrorInvalidValue);
  *driverVersion = 13000;
  return Ok(call);
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  cudaRuntimeGetVersion_v3020_params p{runtimeVersion};
  CUDASIM_RUNTIME_CALL(call, cudaRuntimeGetVersion_v3020, "cudaRuntimeGetVersion", &p);
  if (runtimeVersion == nullptr) return Fail(call, cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return Ok(call);
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  cudaFuncGetAttributes_v3020_params p{attr, func};
  CUDASIM_RUNTIME_CALL(call, cudaFuncGetAttributes_v3020, "cudaFuncGetAttributes", &p);
  if (attr == nullptr) return Fail(call, cudaErrorInvalidValue);
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.kernel_by_host_fun.count(func) == 0) return Fail(call, cudaErrorInvalidDeviceFunction);
  }
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = 1024;
  attr->numRegs = 32;
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes = 49152;
  return Ok(call);
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  cudaFuncGetName_v12030_params p{name, func};
  CUDASIM_RUNTIME_CALL(call, cudaFuncGetName_v12030, "cudaFuncGetName", &p);
  if (name == nullptr) return Fail(call, cudaErrorInvalidValue);
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.kernel_by_host_fun.find(func);
  if (it == s.kernel_by_host_fun.end()) return Fail(call, cudaErrorInvalidDeviceFunction);
  *name = it->second->name.c_str();
  return Ok(call);
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  cudaFuncSetAttribute_v9000_params p{func, attr, value};
  CUDASIM_RUNTIME_CALL(call, cudaFuncSetAttribute_v9000, "cudaFuncSetAttribute", &p);
  return Ok(call);
}

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig) {
  cudaFuncSetCacheConfig_v3020_params p{func, cacheConfig};
  CUDASIM_RUNTIME_CALL(call, cudaFuncSetCacheConfig_v3020, "cudaFuncSetCacheConfig", &p);
  return Ok(call);
}

static int ActiveBlocks(int block_size) {
  if (block_size <= 0) return 0;
  int warps = (block_size + 31) / 32;
  return std::min(32, 64 / warps);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                          int blockSize, size_t dynamicSMemSize) {
  cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050_params p{numBlocks, func, blockSize,
                                                               dynamicSMemSize};
  CUDASIM_RUNTIME_CALL(call, cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050,
                       "cudaOccupancyMaxActiveBlocksPerMultiprocessor", &p);
  if (numBlocks == nullptr) return Fail(call, cudaErrorInvalidValue);
  *numBlocks = ActiveBlocks(blockSize);
  return Ok(call);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                   int blockSize,
                                                                   size_t dynamicSMemSize,
                                                                   unsigned int flags) {
  cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000_params p{
      numBlocks, func, blockSize, dynamicSMemSize, flags};
  CUDASIM_RUNTIME_CALL(call, cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000,
                       "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", &p);
  if (numBlocks == nullptr) return Fail(call, cudaErrorInvalidValue);
  *numBlocks = ActiveBlocks(blockSize);
  return Ok(call);
}

cudaError_t cudaProfilerStart(void) {
  CUDASIM_RUNTIME_CALL(call, cudaProfilerStart_v4000, "cudaProfilerStart", nullptr);
  return Ok(call);
}

cudaError_t cudaProfilerStop(void) {
  CUDASIM_RUNTIME_CALL(call, cudaProfilerStop_v4000, "cudaProfilerStop", nullptr);
  return Ok(call);
}

cudaError_t cudaGetLastError(void) {
  CUDASIM_RUNTIME_CALL(call, cudaGetLastError_v3020, "cudaGetLastError", nullptr);
  return static_cast<cudaError_t>(call.Finish(TakeLastError(true), false));
}

cudaError_t cudaPeekAtLastError(void) {
  CUDASIM_RUNTIME_CALL(call, cudaPeekAtLastError_v3020, "cudaPeekAtLastError", nullptr);
  return static_cast<cudaError_t>(call.Finish(TakeLastError(false), false));
}

#define CUDASIM_ERRORS(X)                                                                     \
  X(cudaSuccess, "no error")                                                                  \
  X(cudaErrorInvalidValue, "invalid argument")                                                \
  X(cudaErrorMemoryAllocation, "out of memory")                                               \
  X(cudaErrorInitializationError, "initialization error")                                     \
  X(cudaErrorInvalidConfiguration, "invalid configuration argument")                          \
  X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                     \
  X(cudaErrorMissingConfiguration, "__global__ function call is not configured")              \
  X(cudaErrorInvalidDevice, "invalid device ordinal")                                         \
  X(cudaErrorInvalidDeviceFunction, "invalid device function")                                \
  X(cudaErrorInvalidResourceHandle, "invalid resource handle")                                \
  X(cudaErrorNotReady, "device not ready")                                                    \
  X(cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region") \
  X(cudaErrorNoDevice, "no CUDA-capable device is detected")                                  \
  X(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version") \
  X(cudaErrorNotSupported, "operation not supported")                                         \
  X(cudaErrorUnknown, "unknown error")

const char* cudaGetErrorString(cudaError_t error) {
#define CUDASIM_CASE(code, text) \
  case code:                     \
    return text;
  switch (error) { CUDASIM_ERRORS(CUDASIM_CASE) default: return "unrecognized error code"; }
#undef CUDASIM_CASE
}

const char* cudaGetErrorName(cudaError_t error) {
#define CUDASIM_CASE(code, text) \
  case code:                     \
    return #code;
  switch (error) { CUDASIM_ERRORS(CUDASIM_CASE) default: return "cudaErrorUnknown"; }
#undef CUDASIM_CASE
}

}  // extern "C"
