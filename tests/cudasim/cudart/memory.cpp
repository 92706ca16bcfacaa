// Memory entry points of the stand-in libcudart.so.13: device, pinned, managed and pool
// allocations (all plain host memory), pointer queries. Copies and memsets are in copies.cpp.
// Test-only. Threads: any application thread.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

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

}  // extern "C"
