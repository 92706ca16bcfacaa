// Fat-binary and kernel registration, launch configuration push/pop, and every kernel launch
// entry point of the stand-in libcudart.so.13. Kernels do not execute: a launch queues virtual
// GPU time on its stream and emits a CUpti_ActivityKernel10 record. Test-only.
// Threads: registration runs from the program's static constructors; launches from any thread.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "tests/cudasim/cudart/graphs.h"
#include "tests/cudasim/cudart/sim_state.h"

using namespace gprof::cudasim;

namespace {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  size_t shared_mem;
  cudaStream_t stream;
};
thread_local std::vector<LaunchConfig> t_launch_configs;  // __cudaPushCallConfiguration stack
std::atomic<int64_t> g_grid_id{0};

// __cudaLaunchKernel has no params struct in generated_cuda_runtime_api_meta.h; this one has the
// argument order of the call (documented in README.md for tools that read functionParams).
struct LaunchKernelInternalParams {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

Kernel* FindKernel(const void* func) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.kernel_by_host_fun.find(func);
  if (it != s.kernel_by_host_fun.end()) return it->second;
  for (Kernel& k : s.kernels) {  // a cudaKernel_t from __cudaGetKernel / cudaGetKernel
    if (static_cast<const void*>(&k) == func) return &k;
  }
  return nullptr;
}

uint64_t KernelDurationNs(const Kernel& k, dim3 grid, dim3 block) {
  if (k.duration_override_ns != 0) return k.duration_override_ns;
  const CudasimKnobs& knobs = Knobs();
  uint64_t threads = uint64_t{grid.x} * grid.y * grid.z * block.x * block.y * block.z;
  return knobs.kernel_base_ns + threads * knobs.kernel_ps_per_thread / 1000;
}

bool ValidConfig(dim3 grid, dim3 block) {
  return grid.x != 0 && grid.y != 0 && grid.z != 0 && block.x != 0 && block.y != 0 &&
         block.z != 0 && uint64_t{block.x} * block.y * block.z <= 1024;
}

}  // namespace

namespace gprof::cudasim {

// The record's `correlation` is the id of the API call that launched the kernel (cupti_activity.h,
// CUpti_ActivityKernel10::correlationId, "identical to the correlation ID in the driver or runtime
// API activity record that launched the kernel"): for a graph's node, the cudaGraphLaunch.
bool ScheduleKernel(const Kernel& kernel, dim3 grid, dim3 block, size_t shared_mem,
                    cudaStream_t stream, uint64_t call_start, uint32_t correlation, GraphIds ids,
                    bool emit_record, uint64_t* start_out) {
  uint64_t duration = KernelDurationNs(kernel, grid, block);
  uint64_t start = 0;
  uint32_t stream_id = 0;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    Stream* st = ResolveStreamLocked(s, stream);
    if (st == nullptr) return false;
    start = EnqueueLocked(s, st, call_start + Knobs().launch_latency_ns, duration);
    stream_id = st->id;
  }
  if (start_out != nullptr) *start_out = start;
  if (emit_record && KindEnabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
    CUpti_ActivityKernel10 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    rec.registersPerThread = 32;
    rec.start = start;
    rec.end = start + duration;
    rec.completed = rec.end;
    rec.deviceId = 0;
    rec.contextId = 1;
    rec.streamId = stream_id;
    rec.gridX = static_cast<int32_t>(grid.x);
    rec.gridY = static_cast<int32_t>(grid.y);
    rec.gridZ = static_cast<int32_t>(grid.z);
    rec.blockX = static_cast<int32_t>(block.x);
    rec.blockY = static_cast<int32_t>(block.y);
    rec.blockZ = static_cast<int32_t>(block.z);
    rec.dynamicSharedMemory = static_cast<int32_t>(shared_mem);
    rec.correlationId = correlation;
    rec.gridId = g_grid_id.fetch_add(1) + 1;
    rec.name = kernel.name.c_str();
    rec.queued = CUPTI_TIMESTAMP_UNKNOWN;
    rec.submitted = CUPTI_TIMESTAMP_UNKNOWN;
    rec.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
    rec.graphId = ids.graph_id;
    rec.graphNodeId = ids.node_id;
    EmitRecord(&rec, sizeof(rec), rec.end);
  }
  return true;
}

}  // namespace gprof::cudasim

namespace {

// The common body of all runtime launch entry points: runtime call, nested cuLaunchKernel(Ex)
// driver call, virtual-GPU scheduling, kernel record.
cudaError_t Launch(CUpti_CallbackId cbid, const char* api_name, const void* params, Kernel* kernel,
                   dim3 grid, dim3 block, size_t shared_mem, cudaStream_t stream, void** args,
                   bool extended) {
  const bool inside = Knobs().inject_in_first_call;  // CUDASIM_INJECT_IN_FIRST_CALL
  if (!inside) EnsureInitialized();
  const char* symbol = kernel != nullptr ? kernel->name.c_str() : nullptr;
  ApiCall rt(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, api_name, params, Knobs().launch_api_ns, symbol);
  if (inside) EnsureInitialized();
  if (kernel == nullptr) return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidDeviceFunction));
  if (!ValidConfig(grid, block)) return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidConfiguration));
  CUlaunchConfig drv_config{};
  cuLaunchKernel_params drv_params{reinterpret_cast<CUfunction>(kernel),
                                   grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                   static_cast<unsigned>(shared_mem),
                                   reinterpret_cast<CUstream>(stream), args, nullptr};
  cuLaunchKernelEx_params drv_ex_params{&drv_config, reinterpret_cast<CUfunction>(kernel), args,
                                        nullptr};
  drv_config.gridDimX = grid.x;
  drv_config.gridDimY = grid.y;
  drv_config.gridDimZ = grid.z;
  drv_config.blockDimX = block.x;
  drv_config.blockDimY = block.y;
  drv_config.blockDimZ = block.z;
  drv_config.sharedMemBytes = static_cast<unsigned>(shared_mem);
  drv_config.hStream = reinterpret_cast<CUstream>(stream);
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API,
              extended ? CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx : CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
              extended ? "cuLaunchKernelEx" : "cuLaunchKernel",
              extended ? static_cast<const void*>(&drv_ex_params) : &drv_params, 0, symbol,
              ApiCall::kNestedDriver);
  GraphWork work;
  work.kernel = kernel;
  work.grid = grid;
  work.block = block;
  work.shared_mem = shared_mem;
  if (CaptureWork(stream, work)) {  // captured: no GPU work, no kernel record (graphs.h)
    drv.Finish(CUDA_SUCCESS);
    return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
  }
  if (!ScheduleKernel(*kernel, grid, block, shared_mem, stream, rt.submit_ns(), rt.correlation_id())) {
    drv.Finish(CUDA_ERROR_INVALID_HANDLE);
    return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidResourceHandle));
  }
  drv.Finish(CUDA_SUCCESS);
  return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
}

}  // namespace

extern "C" {

void** __cudaRegisterFatBinary(void* fatCubin) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.fatbins;
  return new void*(fatCubin);  // the handle lives as long as the process
}

void __cudaRegisterFatBinaryEnd(void** /*fatCubinHandle*/) {}

void __cudaUnregisterFatBinary(void** /*fatCubinHandle*/) {}

void __cudaRegisterFunction(void** /*fatCubinHandle*/, const char* hostFun, char* /*deviceFun*/,
                            const char* deviceName, int /*thread_limit*/, uint3* /*tid*/,
                            uint3* /*bid*/, dim3* /*bDim*/, dim3* /*gDim*/, int* /*wSize*/) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Kernel& k = s.kernels.emplace_back();
  k.host_fun = hostFun;
  k.name = deviceName;
  for (const auto& [pattern, ns] : s.kernel_overrides) {
    if (k.name.find(pattern) != std::string::npos) {
      k.duration_override_ns = ns;
      break;
    }
  }
  s.kernel_by_host_fun[hostFun] = &k;
}

// Device variables live in host memory: the host shadow is the storage. Nothing to record.
void __cudaRegisterVar(void** /*fatCubinHandle*/, char* /*hostVar*/, char* /*deviceAddress*/,
                       const char* /*deviceName*/, int /*ext*/, size_t /*size*/, int /*constant*/,
                       int /*global*/) {}

char __cudaInitModule(void** /*fatCubinHandle*/) { return 1; }

// A CUfunction for a registered kernel (what cuBLASLt-style code passes to cuLaunchKernel). The
// stand-in's CUfunction, cudaFunction_t and cudaKernel_t are all the Kernel* of the registration.
cudaError_t cudaGetFuncBySymbol(cudaFunction_t* functionPtr, const void* symbolPtr) {
  cudaGetFuncBySymbol_v11000_params p{functionPtr, symbolPtr};
  CUDASIM_RUNTIME_CALL(call, cudaGetFuncBySymbol_v11000, "cudaGetFuncBySymbol", &p);
  if (functionPtr == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  Kernel* k = FindKernel(symbolPtr);
  *functionPtr = reinterpret_cast<cudaFunction_t>(k);
  return static_cast<cudaError_t>(call.Finish(k != nullptr ? cudaSuccess : cudaErrorInvalidDeviceFunction));
}

// cuLaunchKernel / cuLaunchKernelEx called by the program itself (the stand-in libcuda.so.1): a
// top-level driver-domain call, as Triton's and cuBLASLt's launches are. The kernel record carries
// the driver call's correlation id.
int cudasim_driver_launch(CUpti_CallbackId cbid, const char* name, CUfunction f, unsigned grid_x,
                          unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
                          unsigned block_z, unsigned shared_mem, CUstream stream, void** /*args*/,
                          const void* params) {
  EnsureInitialized();
  Kernel* kernel = FindKernel(reinterpret_cast<const void*>(f));
  const char* symbol = kernel != nullptr ? kernel->name.c_str() : nullptr;
  // cupti_callbacks.h, CUpti_CallbackData::symbolName: "valid only for driver and runtime launch
  // callbacks, where it returns the name of the kernel".
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, params, Knobs().launch_api_ns, symbol);
  if (kernel == nullptr) return drv.Finish(CUDA_ERROR_INVALID_HANDLE);
  dim3 grid(grid_x, grid_y, grid_z), block(block_x, block_y, block_z);
  if (!ValidConfig(grid, block)) return drv.Finish(CUDA_ERROR_INVALID_VALUE);
  GraphWork work;
  work.kernel = kernel;
  work.grid = grid;
  work.block = block;
  work.shared_mem = shared_mem;
  if (CaptureWork(reinterpret_cast<cudaStream_t>(stream), work)) return drv.Finish(CUDA_SUCCESS);
  if (!ScheduleKernel(*kernel, grid, block, shared_mem, reinterpret_cast<cudaStream_t>(stream),
                      drv.submit_ns(), drv.correlation_id())) {
    return drv.Finish(CUDA_ERROR_INVALID_HANDLE);
  }
  return drv.Finish(CUDA_SUCCESS);
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* func) {
  EnsureInitialized();
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaGetKernel_v13000,
               "__cudaGetKernel", nullptr, 0);
  Kernel* k = FindKernel(func);
  if (kernel != nullptr) *kernel = reinterpret_cast<cudaKernel_t>(k);
  return static_cast<cudaError_t>(call.Finish(k != nullptr ? cudaSuccess : cudaErrorInvalidDeviceFunction));
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream) {
  t_launch_configs.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream) {
  if (t_launch_configs.empty()) return cudaErrorMissingConfiguration;
  LaunchConfig c = t_launch_configs.back();
  t_launch_configs.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream) {
  LaunchKernelInternalParams p{kernel, gridDim, blockDim, args, sharedMem, stream};
  return Launch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel", &p,
                FindKernel(kernel), gridDim, blockDim, sharedMem, stream, args, false);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream) {
  LaunchKernelInternalParams p{kernel, gridDim, blockDim, args, sharedMem, stream};
  return Launch(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, "__cudaLaunchKernel_ptsz",
                &p, FindKernel(kernel), gridDim, blockDim, sharedMem,
                stream == nullptr ? cudaStreamPerThread : stream, args, false);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                             size_t sharedMem, cudaStream_t stream) {
  cudaLaunchKernel_v7000_params p{func, gridDim, blockDim, args, sharedMem, stream};
  return Launch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", &p,
                FindKernel(func), gridDim, blockDim, sharedMem, stream, args, false);
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                  size_t sharedMem, cudaStream_t stream) {
  cudaLaunchKernel_ptsz_v7000_params p{func, gridDim, blockDim, args, sharedMem, stream};
  return Launch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, "cudaLaunchKernel_ptsz", &p,
                FindKernel(func), gridDim, blockDim, sharedMem,
                stream == nullptr ? cudaStreamPerThread : stream, args, false);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  cudaLaunchKernelExC_v11060_params p{config, func, args};
  if (config == nullptr) return cudaErrorInvalidValue;
  return Launch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, "cudaLaunchKernelExC", &p,
                FindKernel(func), config->gridDim, config->blockDim, config->dynamicSmemBytes,
                config->stream, args, true);
}

}  // extern "C"
