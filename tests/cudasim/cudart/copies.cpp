// Copies and memsets of the stand-in libcudart.so.13: memcpy/memset, sync and async, every copy
// kind, their capture into a graph and their replay by a graph launch (graphs.h). A copy really
// moves the bytes on the host and takes bytes / bandwidth of virtual GPU time. Test-only.
// Threads: any application thread.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>

#include "tests/cudasim/cudart/graphs.h"
#include "tests/cudasim/cudart/sim_state.h"

using namespace gprof::cudasim;

namespace {

bool IsDeviceSide(CUpti_ActivityMemoryKind k) {
  return k == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE || k == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
}

uint64_t TransferNs(size_t bytes, double gbps) {  // 1 GB/s is 1 byte per ns
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / gbps));
}

// What a copy is, from its pointers and its kind: the record's kinds, its bandwidth and the nested
// driver call that carries it.
struct CopyPlan {
  CUpti_ActivityMemcpyKind copy_kind;
  CUpti_ActivityMemoryKind src_kind, dst_kind;
  double gbps;
  bool pageable_host;
  const char* drv_name;
  CUpti_CallbackId drv_cbid;
};

// False for an invalid cudaMemcpyKind.
bool PlanCopy(void* dst, const void* src, cudaMemcpyKind kind, bool async, CopyPlan* plan) {
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
    default: return false;
  }
  if (!src_dev && IsDeviceSide(src_kind)) src_kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  if (!dst_dev && IsDeviceSide(dst_kind)) dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  if (src_dev && !IsDeviceSide(src_kind)) src_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  if (dst_dev && !IsDeviceSide(dst_kind)) dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;

  const CudasimKnobs& knobs = Knobs();
  CopyPlan& p = *plan;
  p.src_kind = src_kind;
  p.dst_kind = dst_kind;
  p.pageable_host = false;
  if (!src_dev && dst_dev) {
    p.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    p.pageable_host = src_kind != CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    p.drv_name = async ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyHtoD_v2";
    p.drv_cbid = async ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2 : CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
  } else if (src_dev && !dst_dev) {
    p.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    p.pageable_host = dst_kind != CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    p.drv_name = async ? "cuMemcpyDtoHAsync_v2" : "cuMemcpyDtoH_v2";
    p.drv_cbid = async ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2 : CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2;
  } else if (src_dev && dst_dev) {
    p.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    p.drv_name = async ? "cuMemcpyDtoDAsync_v2" : "cuMemcpyDtoD_v2";
    p.drv_cbid = async ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2 : CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2;
  } else {
    p.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    p.pageable_host = true;
    p.drv_name = async ? "cuMemcpyAsync" : "cuMemcpy";
    p.drv_cbid = async ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync : CUPTI_DRIVER_TRACE_CBID_cuMemcpy;
  }
  if (p.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) {
    p.gbps = knobs.bw_dtod_gbps;
  } else {
    p.gbps = p.pageable_host ? knobs.bw_pageable_gbps : knobs.bw_pinned_gbps;
  }
  return true;
}

// Queues `duration` on `stream` no earlier than `earliest`; false when the stream is invalid.
bool Enqueue(cudaStream_t stream, uint64_t earliest, uint64_t duration, uint64_t* start,
             uint32_t* stream_id) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, stream);
  if (st == nullptr) return false;
  *start = EnqueueLocked(s, st, earliest, duration);
  *stream_id = st->id;
  return true;
}

void EmitCopyRecord(const CopyPlan& plan, size_t count, uint64_t start, uint64_t duration,
                    uint32_t stream_id, uint32_t correlation, bool async, GraphIds ids) {
  if (!KindEnabled(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
  CUpti_ActivityMemcpy6 rec{};
  rec.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  rec.copyKind = static_cast<uint8_t>(plan.copy_kind);
  rec.srcKind = static_cast<uint8_t>(plan.src_kind);
  rec.dstKind = static_cast<uint8_t>(plan.dst_kind);
  rec.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  rec.bytes = count;
  rec.start = start;
  rec.end = start + duration;
  rec.deviceId = 0;
  rec.contextId = 1;
  rec.streamId = stream_id;
  rec.correlationId = correlation;
  rec.runtimeCorrelationId = correlation;
  rec.copyCount = 1;
  rec.graphNodeId = ids.node_id;
  rec.graphId = ids.graph_id;
  EmitRecord(&rec, sizeof(rec), rec.end);
}

// One memcpy: nested driver call, virtual-GPU scheduling (or capture), the real byte move, the
// record.
cudaError_t Copy(ApiCall& rt, void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                 cudaStream_t stream, bool async) {
  if (count > 0 && (dst == nullptr || src == nullptr)) {
    return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidValue));
  }
  CopyPlan plan;
  if (!PlanCopy(dst, src, kind, async, &plan)) {
    return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidMemcpyDirection));
  }
  // All driver memcpy params structs share this layout: dst, src, byte count, [stream].
  cuMemcpyAsync_params drv_params{reinterpret_cast<CUdeviceptr>(dst),
                                  reinterpret_cast<CUdeviceptr>(src), count,
                                  reinterpret_cast<CUstream>(stream)};
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API, plan.drv_cbid, plan.drv_name, &drv_params, 0, nullptr,
              ApiCall::kNestedDriver);
  GraphWork work;
  work.kind = GraphWork::kMemcpy;
  work.dst = dst;
  work.src = src;
  work.bytes = count;
  work.copy_kind = kind;
  if (async && CaptureWork(stream, work)) {  // captured: no GPU work, no record (graphs.h)
    drv.Finish(CUDA_SUCCESS);
    return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
  }
  uint64_t duration = TransferNs(count, plan.gbps);
  uint64_t start = 0;
  uint32_t stream_id = 0;
  if (!Enqueue(stream, rt.submit_ns() + Knobs().launch_latency_ns, duration, &start, &stream_id)) {
    drv.Finish(CUDA_ERROR_INVALID_HANDLE);
    return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidResourceHandle));
  }
  if (count > 0) std::memmove(dst, src, count);
  // Synchronous copies, and async copies that touch pageable host memory, hold the host until the
  // copy is done (the driver stages pageable memory).
  if (!async || plan.pageable_host) WaitUntil(start + duration);
  drv.Finish(CUDA_SUCCESS);
  const bool moves_nothing = count == 0 || plan.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
  if (!moves_nothing || Knobs().empty_copy_records) {  // CUDASIM_EMPTY_COPY_RECORDS
    EmitCopyRecord(plan, count, start, duration, stream_id, rt.correlation_id(), async, {});
  }
  return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
}

void EmitSetRecord(int value, size_t count, uint64_t start, uint64_t duration, uint32_t stream_id,
                   uint32_t correlation, bool async, CUpti_ActivityMemoryKind mem_kind,
                   GraphIds ids) {
  if (!KindEnabled(CUPTI_ACTIVITY_KIND_MEMSET)) return;
  CUpti_ActivityMemset4 rec{};
  rec.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  rec.value = static_cast<uint32_t>(value);
  rec.bytes = count;
  rec.start = start;
  rec.end = start + duration;
  rec.deviceId = 0;
  rec.contextId = 1;
  rec.streamId = stream_id;
  rec.correlationId = correlation;
  rec.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  rec.memoryKind = static_cast<uint16_t>(mem_kind);
  rec.graphNodeId = ids.node_id;
  rec.graphId = ids.graph_id;
  EmitRecord(&rec, sizeof(rec), rec.end);
}

CUpti_ActivityMemoryKind MemoryKindOf(const void* ptr) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  return MemoryKindLocked(s, ptr);
}

cudaError_t Set(ApiCall& rt, void* ptr, int value, size_t count, cudaStream_t stream, bool async) {
  if (count > 0 && ptr == nullptr) return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidValue));
  cuMemsetD8Async_params drv_params{reinterpret_cast<CUdeviceptr>(ptr),
                                    static_cast<unsigned char>(value), count,
                                    reinterpret_cast<CUstream>(stream)};
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API,
              async ? CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async : CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
              async ? "cuMemsetD8Async" : "cuMemsetD8_v2", &drv_params, 0, nullptr,
              ApiCall::kNestedDriver);
  GraphWork work;
  work.kind = GraphWork::kMemset;
  work.dst = ptr;
  work.bytes = count;
  work.value = value;
  if (async && CaptureWork(stream, work)) {  // captured: no GPU work, no record (graphs.h)
    drv.Finish(CUDA_SUCCESS);
    return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
  }
  uint64_t duration = TransferNs(count, Knobs().bw_dtod_gbps);
  uint64_t start = 0;
  uint32_t stream_id = 0;
  const CUpti_ActivityMemoryKind mem_kind = MemoryKindOf(ptr);
  if (!Enqueue(stream, rt.submit_ns() + Knobs().launch_latency_ns, duration, &start, &stream_id)) {
    drv.Finish(CUDA_ERROR_INVALID_HANDLE);
    return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidResourceHandle));
  }
  if (count > 0) std::memset(ptr, value, count);
  if (!async) WaitUntil(start + duration);
  drv.Finish(CUDA_SUCCESS);
  if (count > 0 || Knobs().empty_copy_records) {  // CUDASIM_EMPTY_COPY_RECORDS
    EmitSetRecord(value, count, start, duration, stream_id, rt.correlation_id(), async, mem_kind,
                  {});
  }
  return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
}

}  // namespace

namespace gprof::cudasim {

bool ReplayCopy(const GraphWork& work, cudaStream_t stream, uint64_t call_start,
                uint32_t correlation, GraphIds ids, bool emit_record, uint64_t* start_out) {
  CopyPlan plan;
  if (!PlanCopy(work.dst, work.src, work.copy_kind, true, &plan)) return false;
  const uint64_t duration = TransferNs(work.bytes, plan.gbps);
  uint32_t stream_id = 0;
  if (!Enqueue(stream, call_start + Knobs().launch_latency_ns, duration, start_out, &stream_id)) {
    return false;
  }
  if (work.bytes > 0) std::memmove(work.dst, work.src, work.bytes);
  if (emit_record) {
    EmitCopyRecord(plan, work.bytes, *start_out, duration, stream_id, correlation, true, ids);
  }
  return true;
}

bool ReplaySet(const GraphWork& work, cudaStream_t stream, uint64_t call_start,
               uint32_t correlation, GraphIds ids, bool emit_record, uint64_t* start_out) {
  const uint64_t duration = TransferNs(work.bytes, Knobs().bw_dtod_gbps);
  uint32_t stream_id = 0;
  if (!Enqueue(stream, call_start + Knobs().launch_latency_ns, duration, start_out, &stream_id)) {
    return false;
  }
  if (work.bytes > 0) std::memset(work.dst, work.value, work.bytes);
  if (emit_record) {
    EmitSetRecord(work.value, work.bytes, *start_out, duration, stream_id, correlation, true,
                  MemoryKindOf(work.dst), ids);
  }
  return true;
}

}  // namespace gprof::cudasim

extern "C" {

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
