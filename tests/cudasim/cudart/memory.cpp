// Memory entry points of the stand-in libcudart.so.13: device, pinned, managed and pool
// allocations (all plain host memory), and memcpy/memset, sync and async, every copy kind. A copy
// really moves the bytes on the host and takes bytes / bandwidth of virtual GPU time. Test-only.
// Threads: any application thread.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tests/cudasim/cudart/sim_state.h"

using namespace gprof::cudasim;

namespace {

void EmitMemoryRecord(CUpti_ActivityMemoryOperationType op, CUpti_ActivityMemoryKind kind,
                      const void* ptr, size_t bytes, uint32_t correlation, uint32_t stream_id,
                      bool async) {
  if (!KindEnabled(CUPTI_ACTIVITY_KIND_MEMORY2)) return;
  CUpti_ActivityMemory4 rec{};
  rec.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  rec.memoryOperationType = op;
  rec.memoryKind = kind;
  rec.correlationId = correlation;
  rec.address = reinterpret_cast<uint64_t>(ptr);
  rec.bytes = bytes;
  rec.timestamp = NowNs();
  rec.processId = static_cast<uint32_t>(getpid());
  rec.deviceId = 0;
  rec.contextId = 1;
  rec.streamId = stream_id;
  rec.isAsync = async ? 1 : 0;
  if (async) rec.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  EmitRecord(&rec, sizeof(rec), rec.timestamp);
}

cudaError_t Allocate(ApiCall& call, void** out, size_t size, CUpti_ActivityMemoryKind kind,
                     cudaStream_t stream, bool async) {
  if (out == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  *out = nullptr;
  uint32_t stream_id = 0;
  if (async) {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    Stream* st = ResolveStreamLocked(s, stream);
    if (st == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
    stream_id = st->id;
  }
  if (size == 0) return static_cast<cudaError_t>(call.Finish(cudaSuccess));
  void* p = std::aligned_alloc(256, (size + 255) / 256 * 256);
  if (p == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorMemoryAllocation));
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    s.allocations[reinterpret_cast<uintptr_t>(p)] = Allocation{size, kind, async};
  }
  *out = p;
  EmitMemoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, kind, p, size,
                   call.correlation_id(), stream_id, async);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

// Frees an allocation made by Allocate whose kind is in `kinds`; waits for the device first when
// `sync` (cudaFree and cudaFreeHost synchronize on real hardware).
cudaError_t Release(ApiCall& call, void* p, std::initializer_list<CUpti_ActivityMemoryKind> kinds,
                    bool sync, cudaStream_t stream) {
  if (p == nullptr) return static_cast<cudaError_t>(call.Finish(cudaSuccess));
  Allocation a;
  uint64_t tail = 0;
  uint32_t stream_id = 0;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.allocations.find(reinterpret_cast<uintptr_t>(p));
    if (it == s.allocations.end() ||
        std::find(kinds.begin(), kinds.end(), it->second.kind) == kinds.end()) {
      return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
    }
    a = it->second;
    s.allocations.erase(it);
    tail = DeviceTailLocked(s);
    if (Stream* st = ResolveStreamLocked(s, stream)) stream_id = stream != nullptr ? st->id : 0;
  }
  if (sync) WaitUntil(tail);
  EmitMemoryRecord(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, a.kind, p, a.size,
                   call.correlation_id(), stream_id, a.async);
  std::free(p);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

bool IsDeviceSide(CUpti_ActivityMemoryKind k) {
  return k == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE || k == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
}

uint64_t TransferNs(size_t bytes, double gbps) {  // 1 GB/s is 1 byte per ns
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / gbps));
}

// One memcpy: nested driver call, virtual-GPU scheduling, the real byte move, the record.
cudaError_t Copy(ApiCall& rt, void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                 cudaStream_t stream, bool async) {
  if (count > 0 && (dst == nullptr || src == nullptr)) {
    return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidValue));
  }
  State& s = GetState();
  CUpti_ActivityMemoryKind src_kind, dst_kind;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    src_kind = MemoryKindLocked(s, src);
    dst_kind = MemoryKindLocked(s, dst);
  }
  bool src_dev = IsDeviceSide(src_kind), dst_dev = IsDeviceSide(dst_kind);
  switch (kind) {  // an explicit kind wins over what the pointers say, as on real hardware
    case cudaMemcpyHostToDevice: src_dev = false; dst_dev = true; break;
    case cudaMemcpyDeviceToHost: src_dev = true; dst_dev = false; break;
    case cudaMemcpyDeviceToDevice: src_dev = dst_dev = true; break;
    case cudaMemcpyHostToHost: src_dev = dst_dev = false; break;
    case cudaMemcpyDefault: break;
    default: return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidMemcpyDirection));
  }
  if (!src_dev && IsDeviceSide(src_kind)) src_kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  if (!dst_dev && IsDeviceSide(dst_kind)) dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  if (src_dev && !IsDeviceSide(src_kind)) src_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  if (dst_dev && !IsDeviceSide(dst_kind)) dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;

  const CudasimKnobs& knobs = Knobs();
  CUpti_ActivityMemcpyKind copy_kind;
  double gbps;
  const char* drv_name;
  CUpti_CallbackId drv_cbid;
  bool pageable_host = false;
  if (!src_dev && dst_dev) {
    copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    pageable_host = src_kind != CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    drv_name = async ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyHtoD_v2";
    drv_cbid = async ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2 : CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
  } else if (src_dev && !dst_dev) {
    copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    pageable_host = dst_kind != CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    drv_name = async ? "cuMemcpyDtoHAsync_v2" : "cuMemcpyDtoH_v2";
    drv_cbid = async ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2 : CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2;
  } else if (src_dev && dst_dev) {
    copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    drv_name = async ? "cuMemcpyDtoDAsync_v2" : "cuMemcpyDtoD_v2";
    drv_cbid = async ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2 : CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2;
  } else {
    copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    pageable_host = true;
    drv_name = async ? "cuMemcpyAsync" : "cuMemcpy";
    drv_cbid = async ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync : CUPTI_DRIVER_TRACE_CBID_cuMemcpy;
  }
  if (copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) {
    gbps = knobs.bw_dtod_gbps;
  } else {
    gbps = pageable_host ? knobs.bw_pageable_gbps : knobs.bw_pinned_gbps;
  }
  // All driver memcpy params structs share this layout: dst, src, byte count, [stream].
  cuMemcpyAsync_params drv_params{reinterpret_cast<CUdeviceptr>(dst),
                                  reinterpret_cast<CUdeviceptr>(src), count,
                                  reinterpret_cast<CUstream>(stream)};
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid, drv_name, &drv_params, 0, nullptr,
              ApiCall::kNestedDriver);
  uint64_t duration = TransferNs(count, gbps);
  uint64_t start = 0;
  uint32_t stream_id = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    Stream* st = ResolveStreamLocked(s, stream);
    if (st != nullptr) {
      start = EnqueueLocked(s, st, rt.submit_ns() + knobs.launch_latency_ns, duration);
      stream_id = st->id;
    }
  }
  if (stream_id == 0) {
    drv.Finish(CUDA_ERROR_INVALID_HANDLE);
    return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidResourceHandle));
  }
  if (count > 0) std::memmove(dst, src, count);
  // Synchronous copies, and async copies that touch pageable host memory, hold the host until the
  // copy is done (the driver stages pageable memory).
  if (!async || pageable_host) WaitUntil(start + duration);
  drv.Finish(CUDA_SUCCESS);
  if (KindEnabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
    CUpti_ActivityMemcpy6 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    rec.copyKind = static_cast<uint8_t>(copy_kind);
    rec.srcKind = static_cast<uint8_t>(src_kind);
    rec.dstKind = static_cast<uint8_t>(dst_kind);
    rec.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    rec.bytes = count;
    rec.start = start;
    rec.end = start + duration;
    rec.deviceId = 0;
    rec.contextId = 1;
    rec.streamId = stream_id;
    rec.correlationId = rt.correlation_id();
    rec.runtimeCorrelationId = rt.correlation_id();
    rec.copyCount = 1;
    EmitRecord(&rec, sizeof(rec), rec.end);
  }
  return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
}

cudaError_t Set(ApiCall& rt, void* ptr, int value, size_t count, cudaStream_t stream, bool async) {
  if (count > 0 && ptr == nullptr) return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidValue));
  State& s = GetState();
  cuMemsetD8Async_params drv_params{reinterpret_cast<CUdeviceptr>(ptr),
                                    static_cast<unsigned char>(value), count,
                                    reinterpret_cast<CUstream>(stream)};
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API,
              async ? CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async : CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
              async ? "cuMemsetD8Async" : "cuMemsetD8_v2", &drv_params, 0, nullptr,
              ApiCall::kNestedDriver);
  uint64_t duration = TransferNs(count, Knobs().bw_dtod_gbps);
  uint64_t start = 0;
  uint32_t stream_id = 0;
  CUpti_ActivityMemoryKind mem_kind;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    mem_kind = MemoryKindLocked(s, ptr);
    Stream* st = ResolveStreamLocked(s, stream);
    if (st != nullptr) {
      start = EnqueueLocked(s, st, rt.submit_ns() + Knobs().launch_latency_ns, duration);
      stream_id = st->id;
    }
  }
  if (stream_id == 0) {
    drv.Finish(CUDA_ERROR_INVALID_HANDLE);
    return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidResourceHandle));
  }
  if (count > 0) std::memset(ptr, value, count);
  if (!async) WaitUntil(start + duration);
  drv.Finish(CUDA_SUCCESS);
  if (KindEnabled(CUPTI_ACTIVITY_KIND_MEMSET)) {
    CUpti_ActivityMemset4 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    rec.value = static_cast<uint32_t>(value);
    rec.bytes = count;
    rec.start = start;
    rec.end = start + duration;
    rec.deviceId = 0;
    rec.contextId = 1;
    rec.streamId = stream_id;
    rec.correlationId = rt.correlation_id();
    rec.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
    rec.memoryKind = static_cast<uint16_t>(mem_kind);
    EmitRecord(&rec, sizeof(rec), rec.end);
  }
  return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  cudaMalloc_v3020_params p{devPtr, size};
  CUDASIM_RUNTIME_CALL(call, cudaMalloc_v3020, "cudaMalloc", &p);
  return Allocate(call, devPtr, size, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, nullptr, false);
}

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  cudaMallocManaged_v6000_params p{devPtr, size, flags};
  CUDASIM_RUNTIME_CALL(call, cudaMallocManaged_v6000, "cudaMallocManaged", &p);
  return Allocate(call, devPtr, size, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, nullptr, false);
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  cudaMallocHost_v3020_params p{ptr, size};
  CUDASIM_RUNTIME_CALL(call, cudaMallocHost_v3020, "cudaMallocHost", &p);
  return Allocate(call, ptr, size, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, nullptr, false);
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  cudaHostAlloc_v3020_params p{pHost, size, flags};
  CUDASIM_RUNTIME_CALL(call, cudaHostAlloc_v3020, "cudaHostAlloc", &p);
  return Allocate(call, pHost, size, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, nullptr, false);
}

cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  cudaMallocAsync_v11020_params p{devPtr, size, hStream};
  CUDASIM_RUNTIME_CALL(call, cudaMallocAsync_v11020, "cudaMallocAsync", &p);
  return Allocate(call, devPtr, size, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, hStream, true);
}

cudaError_t cudaFree(void* devPtr) {
  cudaFree_v3020_params p{devPtr};
  CUDASIM_RUNTIME_CALL(call, cudaFree_v3020, "cudaFree", &p);
  return Release(call, devPtr, {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED},
                 true, nullptr);
}

cudaError_t cudaFreeHost(void* ptr) {
  cudaFreeHost_v3020_params p{ptr};
  CUDASIM_RUNTIME_CALL(call, cudaFreeHost_v3020, "cudaFreeHost", &p);
  return Release(call, ptr, {CUPTI_ACTIVITY_MEMORY_KIND_PINNED}, true, nullptr);
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  cudaFreeAsync_v11020_params p{devPtr, hStream};
  CUDASIM_RUNTIME_CALL(call, cudaFreeAsync_v11020, "cudaFreeAsync", &p);
  return Release(call, devPtr, {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE}, false, hStream);
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  cudaHostRegister_v4000_params p{ptr, size, flags};
  CUDASIM_RUNTIME_CALL(call, cudaHostRegister_v4000, "cudaHostRegister", &p);
  if (ptr == nullptr || size == 0) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  State& s = GetState();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.allocations[reinterpret_cast<uintptr_t>(ptr)] =
        Allocation{size, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, false};
  }
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaHostUnregister(void* ptr) {
  cudaHostUnregister_v4000_params p{ptr};
  CUDASIM_RUNTIME_CALL(call, cudaHostUnregister_v4000, "cudaHostUnregister", &p);
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  size_t erased = s.allocations.erase(reinterpret_cast<uintptr_t>(ptr));
  return static_cast<cudaError_t>(call.Finish(erased != 0 ? cudaSuccess : cudaErrorHostMemoryNotRegistered));
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  cudaMemGetInfo_v3020_params p{free_bytes, total_bytes};
  CUDASIM_RUNTIME_CALL(call, cudaMemGetInfo_v3020, "cudaMemGetInfo", &p);
  size_t used = 0;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    for (const auto& [addr, a] : s.allocations) {
      if (a.kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) used += a.size;
    }
  }
  const size_t total = size_t{143771533312};
  if (total_bytes != nullptr) *total_bytes = total;
  if (free_bytes != nullptr) *free_bytes = total - std::min(used, total);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  cudaPointerGetAttributes_v4000_params p{attributes, ptr};
  CUDASIM_RUNTIME_CALL(call, cudaPointerGetAttributes_v4000, "cudaPointerGetAttributes", &p);
  if (attributes == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  CUpti_ActivityMemoryKind kind;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    kind = MemoryKindLocked(s, ptr);
  }
  *attributes = cudaPointerAttributes{};
  attributes->device = 0;
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: attributes->type = cudaMemoryTypeDevice; break;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: attributes->type = cudaMemoryTypeManaged; break;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: attributes->type = cudaMemoryTypeHost; break;
    default: attributes->type = cudaMemoryTypeUnregistered; break;
  }
  if (attributes->type != cudaMemoryTypeUnregistered) {
    attributes->devicePointer = const_cast<void*>(ptr);
    attributes->hostPointer = const_cast<void*>(ptr);
  }
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  cudaMemcpy_v3020_params p{dst, src, count, kind};
  CUDASIM_RUNTIME_CALL(call, cudaMemcpy_v3020, "cudaMemcpy", &p);
  return Copy(call, dst, src, count, kind, nullptr, false);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  cudaMemcpyAsync_v3020_params p{dst, src, count, kind, stream};
  CUDASIM_RUNTIME_CALL(call, cudaMemcpyAsync_v3020, "cudaMemcpyAsync", &p);
  return Copy(call, dst, src, count, kind, stream, true);
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  cudaMemset_v3020_params p{devPtr, value, count};
  CUDASIM_RUNTIME_CALL(call, cudaMemset_v3020, "cudaMemset", &p);
  return Set(call, devPtr, value, count, nullptr, false);
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  cudaMemsetAsync_v3020_params p{devPtr, value, count, stream};
  CUDASIM_RUNTIME_CALL(call, cudaMemsetAsync_v3020, "cudaMemsetAsync", &p);
  return Set(call, devPtr, value, count, stream, true);
}

}  // extern "C"
