// What a CUDA call's own parameters say, read by the API callback at the call's EXIT from
// CUpti_CallbackData::functionParams (the *_params structs of generated_cuda_runtime_api_meta.h and
// generated_cuda_meta.h): the stream it queues work into, whether it begins, joins or ends a
// stream capture, and whether it is a copy or memset that moves nothing on the GPU.
//
// Threads: any application thread, inside the CUPTI API callback (hot path: a switch on the
// callback id and a few loads; no allocation, lock, logging or exception).
#pragma once

#include <cstdint>

namespace gprof::collector {

enum class StreamOp : uint8_t {
  kNone,          // not read here (most calls; some rare copy forms, see CallFacts::stream_known)
  kWork,          // queues work: a launch, graph launch, copy or memset
  kBeginCapture,  // cu/cudaStreamBeginCapture*, ...ToGraph
  kEndCapture,    // cu/cudaStreamEndCapture
  kEventRecord,   // cu/cudaEventRecord*
  kWaitEvent,     // cu/cudaStreamWaitEvent
};

struct CallFacts {
  StreamOp op = StreamOp::kNone;
  // A key for the call's stream: the handle, with the legacy default stream (0 in a non-_ptsz
  // call, cudaStreamLegacy) as 1 and the calling thread's per-thread default stream (0 in a
  // _ptsz/_ptds call, cudaStreamPerThread) as a key of that thread's own. 0: not known.
  uintptr_t stream = 0;
  uintptr_t event = 0;  // kEventRecord, kWaitEvent
  // A copy of 0 bytes, a memset of 0 elements, or a cudaMemcpyHostToHost copy: the GPU does
  // nothing, and whether CUPTI writes a record for it is not documented (tests/cudasim/README.md
  // "Copies that move nothing"). The window wait does not await it.
  bool no_gpu_work = false;
};

// `params`: CUpti_CallbackData::functionParams (nullptr: nothing is read).
CallFacts ReadCallFacts(bool runtime, uint32_t cbid, const void* params) noexcept;

// The ids whose callbacks must stay on whatever the API filter says: the stream capture's
// begin, end, and the event record and wait through which other streams join it.
bool FollowsCaptureStreams(bool runtime, uint32_t cbid);

}  // namespace gprof::collector
