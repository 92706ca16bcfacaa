// See call_params.h. Rules: runs inside the CUPTI API callback (no allocation, lock, logging,
// exception or I/O). Each case reads the named *_params struct of the CUDA 13.0 headers; the
// _ptsz/_ptds forms have the same fields in the same order.
#include "collector/cupti/call_params.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>  // with the *_params structs (generated_cuda_*meta.h)

#include <cstring>

namespace gprof::collector {
namespace {

// The calling thread's per-thread default stream: an address no stream handle can have.
thread_local char t_per_thread_stream __attribute__((tls_model("initial-exec")));
constexpr uintptr_t kLegacyStream = 1;

uintptr_t StreamKey(const void* handle, bool per_thread_api) noexcept {
  const auto h = reinterpret_cast<uintptr_t>(handle);
  if (h == reinterpret_cast<uintptr_t>(cudaStreamLegacy)) return kLegacyStream;
  if (h == reinterpret_cast<uintptr_t>(cudaStreamPerThread) || (h == 0 && per_thread_api)) {
    return reinterpret_cast<uintptr_t>(&t_per_thread_stream);
  }
  return h == 0 ? kLegacyStream : h;
}

template <class P>
P Load(const void* params) noexcept {
  P p;
  std::memcpy(&p, params, sizeof p);
  return p;
}

// A call that queues work into the stream `P::*stream`.
template <class P, class S>
CallFacts Work(const void* params, S P::*stream, bool pt) noexcept {
  const P p = Load<P>(params);
  return {StreamOp::kWork, StreamKey(p.*stream, pt), 0, false};
}

CallFacts Copy(uintptr_t stream, size_t bytes, cudaMemcpyKind kind) noexcept {
  return {StreamOp::kWork, stream, 0, bytes == 0 || kind == cudaMemcpyHostToHost};
}

// Synchronous copies and memsets run in the default stream of their API form.
uintptr_t DefaultStream(bool pt) noexcept { return StreamKey(nullptr, pt); }

template <class P>
CallFacts RuntimeCopy(const void* params, bool pt) noexcept {
  const P p = Load<P>(params);
  if constexpr (requires { p.stream; }) return Copy(StreamKey(p.stream, pt), p.count, p.kind);
  else return Copy(DefaultStream(pt), p.count, p.kind);
}

template <class P>
CallFacts Memset(const void* params, bool pt) noexcept {
  const P p = Load<P>(params);
  constexpr cudaMemcpyKind kOnDevice = cudaMemcpyDeviceToDevice;
  if constexpr (requires { p.stream; }) return Copy(StreamKey(p.stream, pt), p.count, kOnDevice);
  else if constexpr (requires { p.hStream; }) return Copy(StreamKey(p.hStream, pt), p.N, kOnDevice);
  else if constexpr (requires { p.N; }) return Copy(DefaultStream(pt), p.N, kOnDevice);
  else return Copy(DefaultStream(pt), p.count, kOnDevice);
}

template <class P>
CallFacts Copy2D(const void* params, bool pt) noexcept {
  const P p = Load<P>(params);
  const size_t bytes = p.width * p.height;
  if constexpr (requires { p.stream; }) return Copy(StreamKey(p.stream, pt), bytes, p.kind);
  else return Copy(DefaultStream(pt), bytes, p.kind);
}

// Driver copies (cuMemcpy*, cuMemcpyPeer*: no kind; a host-to-host one is not told apart).
template <class P>
CallFacts DriverCopy(const void* params, bool pt) noexcept {
  const P p = Load<P>(params);
  if constexpr (requires { p.hStream; }) {
    return Copy(StreamKey(p.hStream, pt), p.ByteCount, cudaMemcpyDefault);
  } else {
    return Copy(DefaultStream(pt), p.ByteCount, cudaMemcpyDefault);
  }
}

template <class P>
CallFacts Capture(const void* params, StreamOp op, bool pt) noexcept {
  const P p = Load<P>(params);
  if constexpr (requires { p.stream; }) return {op, StreamKey(p.stream, pt), 0, false};
  else return {op, StreamKey(p.hStream, pt), 0, false};
}

template <class P>
CallFacts Event(const void* params, StreamOp op, bool pt) noexcept {
  const P p = Load<P>(params);
  if constexpr (requires { p.stream; }) {
    return {op, StreamKey(p.stream, pt), reinterpret_cast<uintptr_t>(p.event), false};
  } else {
    return {op, StreamKey(p.hStream, pt), reinterpret_cast<uintptr_t>(p.hEvent), false};
  }
}

// One case per callback id: C(id, call) for the plain form, P(id, call) for its _ptsz/_ptds form
// (`pt` true: stream 0 is the calling thread's per-thread stream).
#define C(id, ...) \
  case id: {       \
    const bool pt = false;  \
    return __VA_ARGS__;     \
  }
#define P(id, ...) \
  case id: {       \
    const bool pt = true;   \
    return __VA_ARGS__;     \
  }
#define RT(id) CUPTI_RUNTIME_TRACE_CBID_##id
#define DRV(id) CUPTI_DRIVER_TRACE_CBID_##id

constexpr StreamOp kBegin = StreamOp::kBeginCapture, kEnd = StreamOp::kEndCapture,
                   kRecord = StreamOp::kEventRecord, kWait = StreamOp::kWaitEvent;

CallFacts LaunchEx(const cudaLaunchConfig_t* config, bool pt) noexcept {
  if (config == nullptr) return {};
  return {StreamOp::kWork, StreamKey(config->stream, pt), 0, false};
}

CallFacts LaunchEx(const CUlaunchConfig* config, bool pt) noexcept {
  if (config == nullptr) return {};
  return {StreamOp::kWork, StreamKey(config->hStream, pt), 0, false};
}

CallFacts Runtime(uint32_t cbid, const void* a) noexcept {
  using Launch = cudaLaunchKernel_v7000_params;
  using Coop = cudaLaunchCooperativeKernel_v9000_params;
  using LaunchExC = cudaLaunchKernelExC_v11060_params;
  using Graph = cudaGraphLaunch_v10000_params;
  using Begin = cudaStreamBeginCapture_v10000_params;
  using BeginToGraph = cudaStreamBeginCaptureToGraph_v12030_params;
  using End = cudaStreamEndCapture_v10000_params;
  using Record = cudaEventRecord_v3020_params;
  using RecordFlags = cudaEventRecordWithFlags_v11010_params;
  using Wait = cudaStreamWaitEvent_v3020_params;
  switch (cbid) {
    C(RT(cudaLaunchKernel_v7000), Work(a, &Launch::stream, pt))
    P(RT(cudaLaunchKernel_ptsz_v7000), Work(a, &Launch::stream, pt))
    C(RT(cudaLaunchCooperativeKernel_v9000), Work(a, &Coop::stream, pt))
    P(RT(cudaLaunchCooperativeKernel_ptsz_v9000), Work(a, &Coop::stream, pt))
    // __cudaLaunchKernel has no params struct in the headers; its arguments are cudaLaunchKernel's
    // with a cudaKernel_t first (cuda_runtime_api.h's declaration), the stream last.
    C(RT(__cudaLaunchKernel_v13000), Work(a, &Launch::stream, pt))
    P(RT(__cudaLaunchKernel_ptsz_v13000), Work(a, &Launch::stream, pt))
    C(RT(cudaLaunchKernelExC_v11060), LaunchEx(Load<LaunchExC>(a).config, pt))
    P(RT(cudaLaunchKernelExC_ptsz_v11060), LaunchEx(Load<LaunchExC>(a).config, pt))
    C(RT(cudaGraphLaunch_v10000), Work(a, &Graph::stream, pt))
    P(RT(cudaGraphLaunch_ptsz_v10000), Work(a, &Graph::stream, pt))
    C(RT(cudaMemcpy_v3020), RuntimeCopy<cudaMemcpy_v3020_params>(a, pt))
    P(RT(cudaMemcpy_ptds_v7000), RuntimeCopy<cudaMemcpy_v3020_params>(a, pt))
    C(RT(cudaMemcpyAsync_v3020), RuntimeCopy<cudaMemcpyAsync_v3020_params>(a, pt))
    P(RT(cudaMemcpyAsync_ptsz_v7000), RuntimeCopy<cudaMemcpyAsync_v3020_params>(a, pt))
    C(RT(cudaMemcpy2D_v3020), Copy2D<cudaMemcpy2D_v3020_params>(a, pt))
    P(RT(cudaMemcpy2D_ptds_v7000), Copy2D<cudaMemcpy2D_v3020_params>(a, pt))
    C(RT(cudaMemcpy2DAsync_v3020), Copy2D<cudaMemcpy2DAsync_v3020_params>(a, pt))
    P(RT(cudaMemcpy2DAsync_ptsz_v7000), Copy2D<cudaMemcpy2DAsync_v3020_params>(a, pt))
    C(RT(cudaMemset_v3020), Memset<cudaMemset_v3020_params>(a, pt))
    P(RT(cudaMemset_ptds_v7000), Memset<cudaMemset_v3020_params>(a, pt))
    C(RT(cudaMemsetAsync_v3020), Memset<cudaMemsetAsync_v3020_params>(a, pt))
    P(RT(cudaMemsetAsync_ptsz_v7000), Memset<cudaMemsetAsync_v3020_params>(a, pt))
    C(RT(cudaStreamBeginCapture_v10000), Capture<Begin>(a, kBegin, pt))
    P(RT(cudaStreamBeginCapture_ptsz_v10000), Capture<Begin>(a, kBegin, pt))
    C(RT(cudaStreamBeginCaptureToGraph_v12030), Capture<BeginToGraph>(a, kBegin, pt))
    P(RT(cudaStreamBeginCaptureToGraph_ptsz_v12030), Capture<BeginToGraph>(a, kBegin, pt))
    C(RT(cudaStreamEndCapture_v10000), Capture<End>(a, kEnd, pt))
    P(RT(cudaStreamEndCapture_ptsz_v10000), Capture<End>(a, kEnd, pt))
    C(RT(cudaEventRecord_v3020), Event<Record>(a, kRecord, pt))
    P(RT(cudaEventRecord_ptsz_v7000), Event<Record>(a, kRecord, pt))
    C(RT(cudaEventRecordWithFlags_v11010), Event<RecordFlags>(a, kRecord, pt))
    P(RT(cudaEventRecordWithFlags_ptsz_v11010), Event<RecordFlags>(a, kRecord, pt))
    C(RT(cudaStreamWaitEvent_v3020), Event<Wait>(a, kWait, pt))
    P(RT(cudaStreamWaitEvent_ptsz_v7000), Event<Wait>(a, kWait, pt))
    default:
      return {};
  }
}

CallFacts Driver(uint32_t cbid, const void* a) noexcept {
  using Launch = cuLaunchKernel_params;
  using Coop = cuLaunchCooperativeKernel_params;
  using Graph = cuGraphLaunch_params;
  using Begin = cuStreamBeginCapture_v2_params;
  using BeginToGraph = cuStreamBeginCaptureToGraph_params;
  using End = cuStreamEndCapture_params;
  switch (cbid) {
    C(DRV(cuLaunchKernel), Work(a, &Launch::hStream, pt))
    P(DRV(cuLaunchKernel_ptsz), Work(a, &Launch::hStream, pt))
    C(DRV(cuLaunchCooperativeKernel), Work(a, &Coop::hStream, pt))
    P(DRV(cuLaunchCooperativeKernel_ptsz), Work(a, &Coop::hStream, pt))
    C(DRV(cuLaunchKernelEx), LaunchEx(Load<cuLaunchKernelEx_params>(a).config, pt))
    P(DRV(cuLaunchKernelEx_ptsz), LaunchEx(Load<cuLaunchKernelEx_params>(a).config, pt))
    C(DRV(cuGraphLaunch), Work(a, &Graph::hStream, pt))
    P(DRV(cuGraphLaunch_ptsz), Work(a, &Graph::hStream, pt))
    C(DRV(cuMemcpy), DriverCopy<cuMemcpy_params>(a, pt))
    P(DRV(cuMemcpy_ptds), DriverCopy<cuMemcpy_params>(a, pt))
    C(DRV(cuMemcpyAsync), DriverCopy<cuMemcpyAsync_params>(a, pt))
    P(DRV(cuMemcpyAsync_ptsz), DriverCopy<cuMemcpyAsync_params>(a, pt))
    C(DRV(cuMemcpyHtoD_v2), DriverCopy<cuMemcpyHtoD_v2_params>(a, pt))
    P(DRV(cuMemcpyHtoD_v2_ptds), DriverCopy<cuMemcpyHtoD_v2_params>(a, pt))
    C(DRV(cuMemcpyDtoH_v2), DriverCopy<cuMemcpyDtoH_v2_params>(a, pt))
    P(DRV(cuMemcpyDtoH_v2_ptds), DriverCopy<cuMemcpyDtoH_v2_params>(a, pt))
    C(DRV(cuMemcpyDtoD_v2), DriverCopy<cuMemcpyDtoD_v2_params>(a, pt))
    P(DRV(cuMemcpyDtoD_v2_ptds), DriverCopy<cuMemcpyDtoD_v2_params>(a, pt))
    C(DRV(cuMemcpyHtoDAsync_v2), DriverCopy<cuMemcpyHtoDAsync_v2_params>(a, pt))
    P(DRV(cuMemcpyHtoDAsync_v2_ptsz), DriverCopy<cuMemcpyHtoDAsync_v2_params>(a, pt))
    C(DRV(cuMemcpyDtoHAsync_v2), DriverCopy<cuMemcpyDtoHAsync_v2_params>(a, pt))
    P(DRV(cuMemcpyDtoHAsync_v2_ptsz), DriverCopy<cuMemcpyDtoHAsync_v2_params>(a, pt))
    C(DRV(cuMemcpyDtoDAsync_v2), DriverCopy<cuMemcpyDtoDAsync_v2_params>(a, pt))
    P(DRV(cuMemcpyDtoDAsync_v2_ptsz), DriverCopy<cuMemcpyDtoDAsync_v2_params>(a, pt))
    C(DRV(cuMemsetD8_v2), Memset<cuMemsetD8_v2_params>(a, pt))
    P(DRV(cuMemsetD8_v2_ptds), Memset<cuMemsetD8_v2_params>(a, pt))
    C(DRV(cuMemsetD16_v2), Memset<cuMemsetD16_v2_params>(a, pt))
    P(DRV(cuMemsetD16_v2_ptds), Memset<cuMemsetD16_v2_params>(a, pt))
    C(DRV(cuMemsetD32_v2), Memset<cuMemsetD32_v2_params>(a, pt))
    P(DRV(cuMemsetD32_v2_ptds), Memset<cuMemsetD32_v2_params>(a, pt))
    C(DRV(cuMemsetD8Async), Memset<cuMemsetD8Async_params>(a, pt))
    P(DRV(cuMemsetD8Async_ptsz), Memset<cuMemsetD8Async_params>(a, pt))
    C(DRV(cuMemsetD16Async), Memset<cuMemsetD16Async_params>(a, pt))
    P(DRV(cuMemsetD16Async_ptsz), Memset<cuMemsetD16Async_params>(a, pt))
    C(DRV(cuMemsetD32Async), Memset<cuMemsetD32Async_params>(a, pt))
    P(DRV(cuMemsetD32Async_ptsz), Memset<cuMemsetD32Async_params>(a, pt))
    C(DRV(cuStreamBeginCapture), Capture<Begin>(a, kBegin, pt))
    C(DRV(cuStreamBeginCapture_v2), Capture<Begin>(a, kBegin, pt))
    P(DRV(cuStreamBeginCapture_ptsz), Capture<Begin>(a, kBegin, pt))
    P(DRV(cuStreamBeginCapture_v2_ptsz), Capture<Begin>(a, kBegin, pt))
    C(DRV(cuStreamBeginCaptureToGraph), Capture<BeginToGraph>(a, kBegin, pt))
    P(DRV(cuStreamBeginCaptureToGraph_ptsz), Capture<BeginToGraph>(a, kBegin, pt))
    C(DRV(cuStreamEndCapture), Capture<End>(a, kEnd, pt))
    P(DRV(cuStreamEndCapture_ptsz), Capture<End>(a, kEnd, pt))
    C(DRV(cuEventRecord), Event<cuEventRecord_params>(a, kRecord, pt))
    P(DRV(cuEventRecord_ptsz), Event<cuEventRecord_params>(a, kRecord, pt))
    C(DRV(cuEventRecordWithFlags), Event<cuEventRecordWithFlags_params>(a, kRecord, pt))
    P(DRV(cuEventRecordWithFlags_ptsz), Event<cuEventRecordWithFlags_params>(a, kRecord, pt))
    C(DRV(cuStreamWaitEvent), Event<cuStreamWaitEvent_params>(a, kWait, pt))
    P(DRV(cuStreamWaitEvent_ptsz), Event<cuStreamWaitEvent_params>(a, kWait, pt))
    default:
      return {};
  }
}

#undef C
#undef P
#undef RT
#undef DRV

}  // namespace

CallFacts ReadCallFacts(bool runtime, uint32_t cbid, const void* params) noexcept {
  if (params == nullptr) return {};
  return runtime ? Runtime(cbid, params) : Driver(cbid, params);
}

bool FollowsCaptureStreams(bool runtime, uint32_t cbid) {
  // Only the id decides; with a zeroed parameter block every case reads nothing but zeros.
  alignas(64) static constexpr char kZeros[256] = {};
  const StreamOp op = ReadCallFacts(runtime, cbid, kZeros).op;
  return op == StreamOp::kBeginCapture || op == StreamOp::kEndCapture ||
         op == StreamOp::kEventRecord || op == StreamOp::kWaitEvent;
}

}  // namespace gprof::collector
