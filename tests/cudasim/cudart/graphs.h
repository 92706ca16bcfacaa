// Stream capture and CUDA graphs of the stand-in libcudart.so.13 (graphs.cpp), and the schedulers
// that eager calls and graph replays share (launch.cpp, memory.cpp). Test-only.
//
// While a stream captures, a kernel launch, memcpy or memset queued on it fires its API callbacks
// (runtime and nested driver) and its API record as usual, but runs nothing on the virtual GPU
// and makes no kernel/memcpy/memset record: the work becomes a node of the capture's graph
// (cuda_runtime_api.h, cudaStreamBeginCapture: "Work queued into the stream will not be executed
// but will instead be captured into a graph"). Each cudaGraphLaunch of an instantiated graph runs
// the nodes on the launch stream, in capture order; their records carry the cudaGraphLaunch's
// correlation id (CUpti_ActivityKernel10::correlationId: "identical to the correlation ID in the
// driver or runtime API activity record that launched the kernel") and the graph's and node's ids
// (graphId / graphNodeId: "0 if the kernel is not launched through graph launch APIs").
//
// Threads: any application thread; State::mu guards captures, graphs and executable graphs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tests/cudasim/cudart/sim_state.h"

namespace gprof::cudasim {

// One unit of work as a capture records it and a graph launch replays it.
struct GraphWork {
  enum Kind { kKernel, kMemcpy, kMemset } kind = kKernel;
  const Kernel* kernel = nullptr;  // kKernel
  dim3 grid, block;
  size_t shared_mem = 0;
  void* dst = nullptr;             // kMemcpy, kMemset
  const void* src = nullptr;       // kMemcpy
  size_t bytes = 0;
  cudaMemcpyKind copy_kind = cudaMemcpyDefault;
  int value = 0;                   // kMemset
};

// The graph fields of a record: 0 and 0 for work not launched by a graph.
struct GraphIds {
  uint32_t graph_id = 0;
  uint64_t node_id = 0;
};

// When `stream` is capturing, adds `work` to the capture's graph and returns true; false when it
// is not capturing (the caller runs the work).
bool CaptureWork(cudaStream_t stream, const GraphWork& work);

// A call that breaks a rule of capture on `stream` (a synchronize or query of a capturing stream:
// cudaErrorStreamCaptureUnsupported) invalidates the capture: true when `stream` was capturing.
bool InvalidateCapture(cudaStream_t stream);

// Calls whose capture is not modelled (event record and wait on a capturing stream) abort loudly,
// naming `what`, when `stream` is capturing.
void AbortIfCapturing(cudaStream_t stream, const char* what);

// Queues a kernel on `stream` no earlier than `call_start` + launch latency and, when
// `emit_record`, emits its record with `correlation` and `ids`; its GPU start goes to `start_out`.
// False when the stream is invalid (launch.cpp).
bool ScheduleKernel(const Kernel& kernel, dim3 grid, dim3 block, size_t shared_mem,
                    cudaStream_t stream, uint64_t call_start, uint32_t correlation,
                    GraphIds ids = {}, bool emit_record = true, uint64_t* start_out = nullptr);

// A graph's memcpy and memset nodes, replayed on `stream` (memory.cpp): queued no earlier than
// `call_start` + launch latency, bytes moved, record emitted when `emit_record`. The host does not
// wait (a graph launch is asynchronous). False when the stream or the copy direction is invalid.
bool ReplayCopy(const GraphWork& work, cudaStream_t stream, uint64_t call_start,
                uint32_t correlation, GraphIds ids, bool emit_record, uint64_t* start_out);
bool ReplaySet(const GraphWork& work, cudaStream_t stream, uint64_t call_start,
               uint32_t correlation, GraphIds ids, bool emit_record, uint64_t* start_out);

}  // namespace gprof::cudasim
