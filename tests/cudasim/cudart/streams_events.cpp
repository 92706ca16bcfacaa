// Streams, events and synchronization of the stand-in libcudart.so.13. A synchronize call blocks
// the host (sleeping, then spinning) until the virtual GPU reaches the work it waits for, and
// emits a CUpti_ActivitySynchronization2 record. Test-only. Threads: any application thread.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "tests/cudasim/cudart/graphs.h"
#include "tests/cudasim/cudart/sim_state.h"

using namespace gprof::cudasim;

namespace {

void EmitSync(CUpti_ActivitySynchronizationType type, const ApiCall& call, uint32_t stream_id,
              uint32_t event_id) {
  if (!KindEnabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) return;
  CUpti_ActivitySynchronization2 rec{};
  rec.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  rec.type = type;
  rec.start = call.start_ns();
  rec.end = NowNs();
  rec.correlationId = call.correlation_id();
  rec.contextId = 1;
  rec.streamId = stream_id;
  rec.cudaEventId = event_id;
  rec.cudaEventSyncId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  EmitRecord(&rec, sizeof(rec), rec.end);
}

void FireStreamResource(CUpti_CallbackId cbid, cudaStream_t stream) {
  const CudasimToolHooks* h = Hooks();
  if (h == nullptr || !h->callback_enabled(CUPTI_CB_DOMAIN_RESOURCE, cbid)) return;
  CUpti_ResourceData data{};
  data.context = cudasim_current_context();
  data.resourceHandle.stream = reinterpret_cast<CUstream>(stream);
  h->callback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

cudaError_t CreateStream(ApiCall& call, cudaStream_t* out, unsigned flags, int priority) {
  if (out == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  auto* st = new Stream();
  st->blocking = (flags & cudaStreamNonBlocking) == 0;
  st->priority = std::clamp(priority, -5, 0);
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    st->id = s.next_stream_id++;
    s.streams.insert(st);
  }
  *out = reinterpret_cast<cudaStream_t>(st);
  FireStreamResource(CUPTI_CBID_RESOURCE_STREAM_CREATED, *out);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

Event* ResolveEventLocked(State& s, cudaEvent_t e) {
  auto* ev = reinterpret_cast<Event*>(e);
  return s.events.count(ev) != 0 ? ev : nullptr;
}

}  // namespace

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  cudaStreamCreate_v3020_params p{pStream};
  CUDASIM_RUNTIME_CALL(call, cudaStreamCreate_v3020, "cudaStreamCreate", &p);
  return CreateStream(call, pStream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  cudaStreamCreateWithFlags_v5000_params p{pStream, flags};
  CUDASIM_RUNTIME_CALL(call, cudaStreamCreateWithFlags_v5000, "cudaStreamCreateWithFlags", &p);
  return CreateStream(call, pStream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  cudaStreamCreateWithPriority_v5050_params p{pStream, flags, priority};
  CUDASIM_RUNTIME_CALL(call, cudaStreamCreateWithPriority_v5050, "cudaStreamCreateWithPriority", &p);
  return CreateStream(call, pStream, flags, priority);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  cudaDeviceGetStreamPriorityRange_v5050_params p{leastPriority, greatestPriority};
  CUDASIM_RUNTIME_CALL(call, cudaDeviceGetStreamPriorityRange_v5050,
                       "cudaDeviceGetStreamPriorityRange", &p);
  if (leastPriority != nullptr) *leastPriority = 0;
  if (greatestPriority != nullptr) *greatestPriority = -5;
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  cudaStreamGetPriority_v5050_params p{hStream, priority};
  CUDASIM_RUNTIME_CALL(call, cudaStreamGetPriority_v5050, "cudaStreamGetPriority", &p);
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, hStream);
  if (st == nullptr || priority == nullptr) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  }
  *priority = st->priority;
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long* streamId) {
  cudaStreamGetId_v12000_params p{hStream, streamId};
  CUDASIM_RUNTIME_CALL(call, cudaStreamGetId_v12000, "cudaStreamGetId", &p);
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, hStream);
  if (st == nullptr || streamId == nullptr) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  }
  *streamId = st->id;
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  cudaStreamDestroy_v5050_params p{stream};
  CUDASIM_RUNTIME_CALL(call, cudaStreamDestroy_v5050, "cudaStreamDestroy", &p);
  auto* st = reinterpret_cast<Stream*>(stream);
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.streams.count(st) == 0) {
      return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
    }
  }
  FireStreamResource(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, stream);
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    s.streams.erase(st);
    // Work still queued on it keeps running on a real GPU; the legacy stream inherits its tail so
    // a later device synchronize still waits for it.
    s.legacy.tail_ns = std::max(s.legacy.tail_ns, st->tail_ns);
  }
  delete st;
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  cudaStreamSynchronize_v3020_params p{stream};
  CUDASIM_RUNTIME_CALL(call, cudaStreamSynchronize_v3020, "cudaStreamSynchronize", &p);
  // A capturing stream cannot be synchronized; the attempt invalidates the capture (graphs.h).
  if (InvalidateCapture(stream)) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorStreamCaptureUnsupported));
  }
  uint64_t target = 0;
  uint32_t stream_id = 0;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    Stream* st = ResolveStreamLocked(s, stream);
    if (st == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
    target = st->tail_ns;
    stream_id = st->id;
  }
  cuStreamSynchronize_params dp{reinterpret_cast<CUstream>(stream)};
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
              "cuStreamSynchronize", &dp, 0, nullptr, ApiCall::kNestedDriver);
  WaitUntil(target);
  drv.Finish(CUDA_SUCCESS);
  EmitSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, call, stream_id,
           CUPTI_SYNCHRONIZATION_INVALID_VALUE);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  cudaStreamQuery_v3020_params p{stream};
  CUDASIM_RUNTIME_CALL(call, cudaStreamQuery_v3020, "cudaStreamQuery", &p);
  if (InvalidateCapture(stream)) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorStreamCaptureUnsupported));
  }
  State& s = GetState();
  std::unique_lock<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, stream);
  if (st == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  uint64_t tail = st->tail_ns;
  lock.unlock();
  return static_cast<cudaError_t>(call.Finish(tail <= NowNs() ? cudaSuccess : cudaErrorNotReady));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  cudaStreamWaitEvent_v3020_params p{stream, event, flags};
  CUDASIM_RUNTIME_CALL(call, cudaStreamWaitEvent_v3020, "cudaStreamWaitEvent", &p);
  AbortIfCapturing(stream, "cudaStreamWaitEvent on a capturing stream");
  uint32_t stream_id = 0, event_id = 0;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    Stream* st = ResolveStreamLocked(s, stream);
    Event* ev = ResolveEventLocked(s, event);
    if (st == nullptr || ev == nullptr) {
      return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
    }
    if (ev->recorded) st->tail_ns = std::max(st->tail_ns, ev->time_ns);
    stream_id = st->id;
    event_id = ev->id;
  }
  EmitSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, call, stream_id, event_id);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaDeviceSynchronize(void) {
  CUDASIM_RUNTIME_CALL(call, cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize", nullptr);
  uint64_t target = 0;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    target = DeviceTailLocked(s);
  }
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
              "cuCtxSynchronize", nullptr, 0, nullptr, ApiCall::kNestedDriver);
  WaitUntil(target);
  drv.Finish(CUDA_SUCCESS);
  EmitSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, call,
           CUPTI_SYNCHRONIZATION_INVALID_VALUE, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  cudaEventCreate_v3020_params p{event};
  CUDASIM_RUNTIME_CALL(call, cudaEventCreate_v3020, "cudaEventCreate", &p);
  if (event == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  auto* ev = new Event();
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  ev->id = s.next_event_id++;
  s.events.insert(ev);
  *event = reinterpret_cast<cudaEvent_t>(ev);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  cudaEventCreateWithFlags_v3020_params p{event, flags};
  CUDASIM_RUNTIME_CALL(call, cudaEventCreateWithFlags_v3020, "cudaEventCreateWithFlags", &p);
  if (event == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  auto* ev = new Event();
  ev->flags = flags;
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  ev->id = s.next_event_id++;
  s.events.insert(ev);
  *event = reinterpret_cast<cudaEvent_t>(ev);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  cudaEventDestroy_v3020_params p{event};
  CUDASIM_RUNTIME_CALL(call, cudaEventDestroy_v3020, "cudaEventDestroy", &p);
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Event* ev = ResolveEventLocked(s, event);
  if (ev == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  s.events.erase(ev);
  delete ev;
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

static cudaError_t RecordEvent(ApiCall& call, cudaEvent_t event, cudaStream_t stream) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Event* ev = ResolveEventLocked(s, event);
  Stream* st = ResolveStreamLocked(s, stream);
  if (ev == nullptr || st == nullptr) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  }
  // The event is reached when all work queued before it on the stream is done.
  ev->time_ns = EnqueueLocked(s, st, call.submit_ns() + Knobs().launch_latency_ns, 0);
  ev->recorded = true;
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  cudaEventRecord_v3020_params p{event, stream};
  CUDASIM_RUNTIME_CALL(call, cudaEventRecord_v3020, "cudaEventRecord", &p);
  AbortIfCapturing(stream, "cudaEventRecord on a capturing stream");
  return RecordEvent(call, event, stream);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  cudaEventRecordWithFlags_v11010_params p{event, stream, flags};
  CUDASIM_RUNTIME_CALL(call, cudaEventRecordWithFlags_v11010, "cudaEventRecordWithFlags", &p);
  AbortIfCapturing(stream, "cudaEventRecord on a capturing stream");
  return RecordEvent(call, event, stream);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  cudaEventSynchronize_v3020_params p{event};
  CUDASIM_RUNTIME_CALL(call, cudaEventSynchronize_v3020, "cudaEventSynchronize", &p);
  uint64_t target = 0;
  uint32_t event_id = 0;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    Event* ev = ResolveEventLocked(s, event);
    if (ev == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
    target = ev->recorded ? ev->time_ns : 0;
    event_id = ev->id;
  }
  cuEventSynchronize_params dp{reinterpret_cast<CUevent>(event)};
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
              "cuEventSynchronize", &dp, 0, nullptr, ApiCall::kNestedDriver);
  WaitUntil(target);
  drv.Finish(CUDA_SUCCESS);
  EmitSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, call,
           CUPTI_SYNCHRONIZATION_INVALID_VALUE, event_id);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  cudaEventQuery_v3020_params p{event};
  CUDASIM_RUNTIME_CALL(call, cudaEventQuery_v3020, "cudaEventQuery", &p);
  State& s = GetState();
  std::unique_lock<std::mutex> lock(s.mu);
  Event* ev = ResolveEventLocked(s, event);
  if (ev == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  uint64_t t = ev->recorded ? ev->time_ns : 0;
  lock.unlock();
  return static_cast<cudaError_t>(call.Finish(t <= NowNs() ? cudaSuccess : cudaErrorNotReady));
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  cudaEventElapsedTime_v12080_params p{ms, start, end};
  CUDASIM_RUNTIME_CALL(call, cudaEventElapsedTime_v12080, "cudaEventElapsedTime", &p);
  State& s = GetState();
  std::unique_lock<std::mutex> lock(s.mu);
  Event* a = ResolveEventLocked(s, start);
  Event* b = ResolveEventLocked(s, end);
  if (a == nullptr || b == nullptr || ms == nullptr) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  }
  if ((a->flags & cudaEventDisableTiming) || (b->flags & cudaEventDisableTiming) || !a->recorded ||
      !b->recorded) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  }
  uint64_t ta = a->time_ns, tb = b->time_ns;
  lock.unlock();
  if (std::max(ta, tb) > NowNs()) return static_cast<cudaError_t>(call.Finish(cudaErrorNotReady));
  *ms = static_cast<float>((static_cast<double>(tb) - static_cast<double>(ta)) / 1e6);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

}  // extern "C"
