// Stream capture and CUDA graphs of the stand-in libcudart.so.13: cudaStreamBeginCapture,
// cudaStreamEndCapture, cudaStreamIsCapturing, cudaStreamGetCaptureInfo, cudaGraphInstantiate
// (WithFlags), cudaGraphLaunch, cudaGraphExecDestroy, cudaGraphDestroy. See graphs.h for what a
// capture and a replay do; README.md ("Stream capture and graphs") for what is not modelled.
// Test-only. Threads: any application thread; State::mu guards every table here.
#include "tests/cudasim/cudart/graphs.h"

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

using namespace gprof::cudasim;

namespace gprof::cudasim {

struct GraphNode {
  GraphWork work;
  uint64_t id = 0;  // CUPTI's graphNodeId
};

// A graph made by stream capture (cudaGraph_t). Its nodes run in capture order: captured work on
// one stream depends on the work before it.
struct Graph {
  uint32_t id = 0;
  std::vector<GraphNode> nodes;
};

struct Capture {
  Graph* graph = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
  unsigned long long id = 0;  // cudaStreamGetCaptureInfo's id_out: unique per capture sequence
  bool invalidated = false;   // a rule of capture was broken: EndCapture returns no graph
};

// An instantiated graph (cudaGraphExec_t). Instantiation clones the nodes: the executable graph has
// an id of its own and so do its nodes (CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED in cupti_callbacks.h:
// "Graph node is cloned"; CUDA 13.5's records add sourceGraphId/sourceGraphNodeId, "the graph and
// node a cloned graph's node came from"), and every launch of it reports the same ids.
struct GraphExec {
  uint32_t id = 0;
  std::vector<GraphNode> nodes;
};

}  // namespace gprof::cudasim

namespace {

// Graphs and executable graphs share one id space, as graphId names either in CUPTI's records;
// nodes have their own. State::mu guards all of these.
uint32_t g_next_graph_id = 1;
uint64_t g_next_node_id = 1;
unsigned long long g_next_capture_id = 1;
std::set<Graph*> g_graphs;
std::set<GraphExec*> g_execs;

// cudaStreamBeginCapture: "Capture may not be initiated if stream is cudaStreamLegacy" (the legacy
// stream, its aliases 0 and cudaStreamPerThread here, cannot capture).
Stream* CapturableStreamLocked(State& s, cudaStream_t stream) {
  Stream* st = ResolveStreamLocked(s, stream);
  return st == &s.legacy ? nullptr : st;
}

cudaError_t BeginCapture(ApiCall& call, cudaStream_t stream, cudaStreamCaptureMode mode) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, stream);
  if (st == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  if (CapturableStreamLocked(s, stream) == nullptr) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorStreamCaptureUnsupported));
  }
  if (st->capture != nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorIllegalState));
  auto* g = new Graph();
  g->id = g_next_graph_id++;
  g_graphs.insert(g);
  st->capture = new Capture{g, mode, std::this_thread::get_id(), g_next_capture_id++, false};
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

// cudaStreamEndCapture: "If capture was invalidated, due to a violation of the rules of stream
// capture, then a NULL graph will be returned"; with a mode other than Relaxed it "must be called
// from the same thread" (cudaErrorStreamCaptureWrongThread).
cudaError_t EndCapture(ApiCall& call, cudaStream_t stream, cudaGraph_t* out) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, stream);
  if (st == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  if (out == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  Capture* c = st->capture;
  if (c == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorIllegalState));
  if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != std::this_thread::get_id()) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorStreamCaptureWrongThread));
  }
  st->capture = nullptr;
  cudaError_t result = cudaSuccess;
  if (c->invalidated) {
    g_graphs.erase(c->graph);
    delete c->graph;
    *out = nullptr;
    result = cudaErrorStreamCaptureInvalidated;
  } else {
    *out = reinterpret_cast<cudaGraph_t>(c->graph);
  }
  delete c;
  return static_cast<cudaError_t>(call.Finish(result));
}

cudaError_t CaptureStatus(ApiCall& call, cudaStream_t stream, cudaStreamCaptureStatus* status,
                          unsigned long long* id, cudaGraph_t* graph) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, stream);
  if (st == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidResourceHandle));
  if (status == nullptr) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  const Capture* c = st->capture;
  *status = c == nullptr ? cudaStreamCaptureStatusNone
            : c->invalidated ? cudaStreamCaptureStatusInvalidated
                             : cudaStreamCaptureStatusActive;
  if (id != nullptr && c != nullptr) *id = c->id;
  if (graph != nullptr) *graph = c != nullptr ? reinterpret_cast<cudaGraph_t>(c->graph) : nullptr;
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t Instantiate(ApiCall& call, cudaGraphExec_t* out, cudaGraph_t graph) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  auto* g = reinterpret_cast<Graph*>(graph);
  if (out == nullptr || g_graphs.count(g) == 0) {
    return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  }
  auto* e = new GraphExec();
  e->id = g_next_graph_id++;
  for (const GraphNode& n : g->nodes) e->nodes.push_back({n.work, g_next_node_id++});
  g_execs.insert(e);
  *out = reinterpret_cast<cudaGraphExec_t>(e);
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

// The host time of a graph launch is that of a kernel launch; the nested driver call is
// cuGraphLaunch (cupti_driver_cbid.h 514). With CUPTI_ACTIVITY_KIND_GRAPH_TRACE enabled the launch
// makes one CUpti_ActivityGraphTrace2 record and none for its nodes (cupti_activity.h: "execution
// for a graph without giving visibility about the execution of its nodes. This is intended to
// reduce overheads in tracing each node").
cudaError_t LaunchGraph(CUpti_CallbackId cbid, const char* name, cudaGraphExec_t exec,
                        cudaStream_t stream) {
  cudaGraphLaunch_v10000_params p{exec, stream};
  const bool inside = Knobs().inject_in_first_call;
  if (!inside) EnsureInitialized();
  ApiCall rt(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, name, &p, Knobs().launch_api_ns);
  if (inside) EnsureInitialized();
  std::vector<GraphNode> nodes;
  uint32_t graph_id = 0;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    auto* e = reinterpret_cast<GraphExec*>(exec);
    Stream* st = ResolveStreamLocked(s, stream);
    if (g_execs.count(e) == 0) return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidValue));
    if (st == nullptr) return static_cast<cudaError_t>(rt.Finish(cudaErrorInvalidResourceHandle));
    if (st->capture != nullptr) cudasim_unimplemented("cudaGraphLaunch into a capturing stream");
    nodes = e->nodes;
    graph_id = e->id;
  }
  cuGraphLaunch_params drv_params{reinterpret_cast<CUgraphExec>(exec),
                                  reinterpret_cast<CUstream>(stream)};
  ApiCall drv(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch",
              &drv_params, 0, nullptr, ApiCall::kNestedDriver);
  const bool graph_trace = KindEnabled(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  // Node records are emitted only when the tool wants them; the GPU time is spent either way.
  uint64_t first_start = 0, last_end = 0;
  uint32_t stream_id = 0;
  for (const GraphNode& n : nodes) {
    const GraphIds ids{graph_id, n.id};
    const uint64_t submit = rt.submit_ns();
    const uint32_t corr = rt.correlation_id();
    uint64_t start = 0;
    bool ok = false;
    switch (n.work.kind) {
      case GraphWork::kKernel:
        ok = ScheduleKernel(*n.work.kernel, n.work.grid, n.work.block, n.work.shared_mem, stream,
                            submit, corr, ids, !graph_trace, &start);
        break;
      case GraphWork::kMemcpy:
        ok = ReplayCopy(n.work, stream, submit, corr, ids, !graph_trace, &start);
        break;
      case GraphWork::kMemset:
        ok = ReplaySet(n.work, stream, submit, corr, ids, !graph_trace, &start);
        break;
    }
    if (!ok) cudasim_unimplemented("cudaGraphLaunch of a node whose replay fails");
    if (first_start == 0) first_start = start;
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    Stream* st = ResolveStreamLocked(s, stream);
    last_end = st->tail_ns;
    stream_id = st->id;
  }
  drv.Finish(CUDA_SUCCESS);
  if (graph_trace && !nodes.empty()) {
    CUpti_ActivityGraphTrace2 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    // "identical to the correlation ID in the driver API activity record that launched the
    // graph": with nested driver calls off there is none, and the runtime call's id is used.
    rec.correlationId = drv.correlation_id() != 0 ? drv.correlation_id() : rt.correlation_id();
    rec.start = first_start;
    rec.end = last_end;
    rec.deviceId = 0;
    rec.graphId = graph_id;
    rec.contextId = 1;
    rec.streamId = stream_id;
    rec.endDeviceId = 0;
    rec.endContextId = 1;
    EmitRecord(&rec, sizeof(rec), rec.end);
  }
  return static_cast<cudaError_t>(rt.Finish(cudaSuccess));
}

}  // namespace

namespace gprof::cudasim {

bool CaptureWork(cudaStream_t stream, const GraphWork& work) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, stream);
  if (st == nullptr || st->capture == nullptr) return false;
  st->capture->graph->nodes.push_back({work, g_next_node_id++});
  return true;
}

bool InvalidateCapture(cudaStream_t stream) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, stream);
  if (st == nullptr || st->capture == nullptr) return false;
  st->capture->invalidated = true;
  return true;
}

void AbortIfCapturing(cudaStream_t stream, const char* what) {
  bool capturing = false;
  {
    State& s = GetState();
    std::lock_guard<std::mutex> lock(s.mu);
    Stream* st = ResolveStreamLocked(s, stream);
    capturing = st != nullptr && st->capture != nullptr;
  }
  if (capturing) cudasim_unimplemented(what);
}

}  // namespace gprof::cudasim

extern "C" {

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  cudaStreamBeginCapture_v10000_params p{stream, mode};
  CUDASIM_RUNTIME_CALL(call, cudaStreamBeginCapture_v10000, "cudaStreamBeginCapture", &p);
  return BeginCapture(call, stream, mode);
}

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  cudaStreamBeginCapture_ptsz_v10000_params p{stream, mode};
  CUDASIM_RUNTIME_CALL(call, cudaStreamBeginCapture_ptsz_v10000, "cudaStreamBeginCapture_ptsz", &p);
  return BeginCapture(call, stream, mode);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  cudaStreamEndCapture_v10000_params p{stream, pGraph};
  CUDASIM_RUNTIME_CALL(call, cudaStreamEndCapture_v10000, "cudaStreamEndCapture", &p);
  return EndCapture(call, stream, pGraph);
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* pGraph) {
  cudaStreamEndCapture_ptsz_v10000_params p{stream, pGraph};
  CUDASIM_RUNTIME_CALL(call, cudaStreamEndCapture_ptsz_v10000, "cudaStreamEndCapture_ptsz", &p);
  return EndCapture(call, stream, pGraph);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* pCaptureStatus) {
  cudaStreamIsCapturing_v10000_params p{stream, pCaptureStatus};
  CUDASIM_RUNTIME_CALL(call, cudaStreamIsCapturing_v10000, "cudaStreamIsCapturing", &p);
  return CaptureStatus(call, stream, pCaptureStatus, nullptr, nullptr);
}

cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                       enum cudaStreamCaptureStatus* pCaptureStatus) {
  cudaStreamIsCapturing_ptsz_v10000_params p{stream, pCaptureStatus};
  CUDASIM_RUNTIME_CALL(call, cudaStreamIsCapturing_ptsz_v10000, "cudaStreamIsCapturing_ptsz", &p);
  return CaptureStatus(call, stream, pCaptureStatus, nullptr, nullptr);
}

// The dependency outputs are not modelled (the captured nodes form one chain): a caller asking for
// them gets a loud abort rather than a wrong answer.
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                     enum cudaStreamCaptureStatus* captureStatus_out,
                                     unsigned long long* id_out, cudaGraph_t* graph_out,
                                     const cudaGraphNode_t** dependencies_out,
                                     const cudaGraphEdgeData** edgeData_out,
                                     size_t* numDependencies_out) {
  cudaStreamGetCaptureInfo_v12030_params p{stream, captureStatus_out, id_out, graph_out,
                                           dependencies_out, edgeData_out, numDependencies_out};
  CUDASIM_RUNTIME_CALL(call, cudaStreamGetCaptureInfo_v12030, "cudaStreamGetCaptureInfo", &p);
  if (dependencies_out != nullptr || edgeData_out != nullptr || numDependencies_out != nullptr) {
    cudasim_unimplemented("cudaStreamGetCaptureInfo (dependency outputs)");
  }
  return CaptureStatus(call, stream, captureStatus_out, id_out, graph_out);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags) {
  cudaGraphInstantiate_v12000_params p{pGraphExec, graph, flags};
  CUDASIM_RUNTIME_CALL(call, cudaGraphInstantiate_v12000, "cudaGraphInstantiate", &p);
  return Instantiate(call, pGraphExec, graph);
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                          unsigned long long flags) {
  cudaGraphInstantiateWithFlags_v11040_params p{pGraphExec, graph, flags};
  CUDASIM_RUNTIME_CALL(call, cudaGraphInstantiateWithFlags_v11040, "cudaGraphInstantiateWithFlags",
                       &p);
  return Instantiate(call, pGraphExec, graph);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return LaunchGraph(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch", graphExec,
                     stream);
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return LaunchGraph(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, "cudaGraphLaunch_ptsz",
                     graphExec, stream == nullptr ? cudaStreamPerThread : stream);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  cudaGraphExecDestroy_v10000_params p{graphExec};
  CUDASIM_RUNTIME_CALL(call, cudaGraphExecDestroy_v10000, "cudaGraphExecDestroy", &p);
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  auto* e = reinterpret_cast<GraphExec*>(graphExec);
  if (g_execs.erase(e) == 0) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  delete e;  // work already queued keeps running, as on a real GPU
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  cudaGraphDestroy_v10000_params p{graph};
  CUDASIM_RUNTIME_CALL(call, cudaGraphDestroy_v10000, "cudaGraphDestroy", &p);
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  auto* g = reinterpret_cast<Graph*>(graph);
  if (g_graphs.erase(g) == 0) return static_cast<cudaError_t>(call.Finish(cudaErrorInvalidValue));
  delete g;  // executable graphs made from it keep their own copy of the nodes
  return static_cast<cudaError_t>(call.Finish(cudaSuccess));
}

}  // extern "C"
