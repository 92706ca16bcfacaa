// The Perfetto trace writer (WritePerfettoTrace, perfetto_trace.h): the trace of trace_json.cpp
// as Perfetto protobuf (REFERENCE.md §5), launcher process only; its events are written in
// perfetto_events.cpp, the rest in perfetto_trace.cpp. Same TracePlan (trace_plan.h), so the same events, lanes and flows.
//
// Layout: one trusted packet sequence (id 1) with incremental state. The first packet clears the
// state (SEQ_INCREMENTAL_STATE_CLEARED) and interns the categories and debug annotation names;
// then one TrackDescriptor packet per track; then the events, each packet with
// SEQ_NEEDS_INCREMENTAL_STATE. An event name is interned (InternedData.event_names) in the packet
// that first uses it; later events refer to it by iid.
//
// Tracks: perfetto_tracks.h (one descriptor packet per process, lane and counter); field numbers
// and the packet sequence: perfetto_packets.h. This file interns names and writes the events.
//
// Events: slices are SLICE_BEGIN / SLICE_END pairs. The plan lists begins sorted by (ts, longest
// first); ends wait in a min-heap by (end, latest begin first) and are written before any later
// begin, so the file is in time order and ends on one track come innermost first. Flows ride on
// the slices: the launching API call's begin carries flow_ids = [correlation], the GPU record's
// begin terminating_flow_ids = [correlation]. Timestamps are absolute CLOCK_REALTIME ns in the
// packet's default clock (no ClockSnapshot: every event has the same clock).
//
// Streaming: each packet is encoded into one small buffer and handed to the writer; only the
// plan, the open slices and the intern tables stay in memory.
//
// Sampled Python stacks (python_slices.h): the JSON trace's python_function slices, with the
// same names, times and args, on the same tracks (PythonTraceTracks: a named child track of the
// process per sampled thread). They are merged into the plan's time order by start, so they go
// through the same begin/end heap and nest the same way.
//
// Native stacks (--backtrace, docs/STACKS.md): an API call with a stack carries it as the debug
// annotation "stack", an array of frame strings innermost first, as args.stack in the JSON. Not
// Perfetto's callstack packets (PerfSample / StreamingProfilePacket with interned frames and
// callstacks): those describe timer samples of a thread, which the UI aggregates into a flame
// graph of where time went; a stack here is the call path of one CUDA call, captured because of
// the call, not of a timer, and its place is on that call's slice, next to its correlation id,
// where the UI shows it when the slice is selected. It keeps the two traces alike, too. Each
// distinct stack is encoded once and copied into every call that has it.
//
// --cpu-sampling's samples (docs/CPU_SAMPLING.md) are timer samples of a thread, so they are
// Perfetto's: a PerfSample packet each (pid, tid, CPU mode user, callstack_iid), with the stack
// interned in the packet that first uses it (InternedData: function_names, mappings with their
// paths and build ids, frames by PC, callstacks by the profile's stack index + 1, frames outermost
// first), as traced_perf writes them. trace_processor puts them in its perf_sample table and the
// UI shows them on each sampled thread's track, with a flame graph of a selection. The same
// samples as the JSON trace's cpu_sample instants (those at or after its base time), merged into
// the time order like the Python slices (perfetto_cpu_samples.cpp).
#pragma once

#include <algorithm>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/attribution/names.h"
#include "analysis/samples/cpu_samples.h"
#include "analysis/samples/native_symbols.h"
#include "analysis/samples/python_slices.h"
#include "analysis/timeline/trace_plan.h"
#include "outputs/perfetto/perfetto_packets.h"
#include "outputs/perfetto/perfetto_trace.h"
#include "outputs/perfetto/perfetto_tracks.h"
#include "outputs/trace/python_slice_events.h"
#include "outputs/trace/trace_json.h"
#include "text/format.h"
#include "text/json_writer.h"
#include "text/utf8.h"

namespace gprof::perfetto {

using proto::ProtoEncoder;

// Categories (Kineto's, REFERENCE.md §3), interned in this order: iid = index + 1.
enum Category : uint8_t {
  kCatUserAnnotation, kCatGpuUserAnnotation, kCatCudaRuntime, kCatCudaDriver, kCatKernel,
  kCatMemcpy, kCatMemset, kCatSync, kCatOverhead, kCatCpuOp, kCatGpuMemory, kCatPythonFunction,
  kCategoryCount,
};
constexpr std::string_view kCategoryNames[kCategoryCount] = {
    "user_annotation", "gpu_user_annotation", "cuda_runtime", "cuda_driver", "kernel",
    "gpu_memcpy", "gpu_memset", "cuda_sync", "overhead", "cpu_op", "gpu_memory",
    "python_function"};

// Debug annotation names, interned in this order: iid = index + 1.
enum ArgName : uint8_t {
  kArgCorrelation, kArgStream, kArgGrid, kArgBlock, kArgBytes, kArgDomain, kArgCategory,
  kArgOpenAtEnd, kArgRecordFunctionId, kArgSequenceNumber, kArgInputDims, kArgStack,
  kArgPythonId, kArgPythonParentId, kArgPythonThread, kArgSampled, kArgSamples,
  kArgCutAtWindowEnd, kArgCount,
};
constexpr std::string_view kArgNames[kArgCount] = {
    "correlation", "stream", "grid", "block", "bytes", "domain", "category", "open at end",
    "Record function id", "Sequence number", "Input Dims", "stack", "Python id",
    "Python parent id", "Python thread", "sampled", "samples", "cut at window end"};

inline uint64_t Iid(Category c) { return uint64_t{c} + 1; }
inline uint64_t Iid(ArgName a) { return uint64_t{a} + 1; }

// A slice whose end is still to be written.
struct OpenSlice {
  uint64_t end;
  uint64_t seq;  // begin order: at equal ends the later begin (the inner slice) ends first
  uint64_t track;
};
struct EndsLater {
  bool operator()(const OpenSlice& a, const OpenSlice& b) const {
    if (a.end != b.end) return a.end > b.end;
    return a.seq < b.seq;
  }
};

class PerfettoWriter {
 public:
  // `python` (may be nullptr): sampled Python stacks; `stacks` (may be nullptr): the profile's
  // native stacks symbolized, else symbolized here when it has any.
  // `cpu` (may be nullptr): --cpu-sampling's samples named.
  PerfettoWriter(const Profile& p, JsonWriter* out, const PythonSliceSet* python,
                 const SymbolizedStacks* stacks, const CpuSampleNames* cpu = nullptr)
      : plan_(p), p_(p), names_(p), packets_(out), enc_(packets_.enc()),
        tracks_(plan_, &packets_), launch_args_(p.launch_configs.size() + 1), python_(python),
        stacks_(stacks), stack_index_(p), cpu_(cpu) {}

  // `close`: closes the output after the last packet (a segment of SegmentedPerfettoTrace leaves
  // it open for the next one).
  TraceStats Write(bool close = true) {
    WriteFirstPacket();
    std::vector<TraceTrack> python_tracks;
    if (python_ != nullptr) {
      python_tid_ = python_first_tid_ != 0 ? python_first_tid_ : PythonFirstTid(plan_);
      python_tracks = PythonTraceTracks(*python_, plan_, python_tid_);
      OrderPythonSlices();
    }
    tracks_.Write(python_tracks);
    MarkFlows();
    PrepareStacks();
    OrderCpuSamples();
    for (const PlannedEvent& e : plan_.events()) {
      WritePythonSlicesUpTo(e.ts);
      WriteCpuSamplesUpTo(e.ts);
      WriteEvent(e);
    }
    WritePythonSlicesUpTo(UINT64_MAX);
    WriteCpuSamplesUpTo(UINT64_MAX);
    CloseSlicesUpTo(UINT64_MAX);
    TraceStats stats;
    stats.events = packets_.packets();
    if (close) stats.bytes = packets_.Close();
    return stats;
  }

 private:
  // ---- the first packet: clears the incremental state, interns categories and arg names ----

  void WriteFirstPacket();

  // ---- flows --------------------------------------------------------------------------------

  void MarkFlows();

  // ---- sampled Python stacks -----------------------------------------------------------------

  // The slices shown (PythonSliceShown, as in the JSON), by start; a stable sort keeps each
  // track's order (by start, parents before children), so a parent begins before its child.
  void OrderPythonSlices();

  // Writes the begins of the Python slices that start at or before `ts` (their ends go on the
  // heap with the plan's).
  void WritePythonSlicesUpTo(uint64_t ts);

  // ---- --cpu-sampling's samples (perfetto_cpu_samples.cpp) ----------------------------------

  // The samples written (at or after the base time, with a named stack), by time.
  void OrderCpuSamples();
  // Writes a PerfSample packet for each sample taken at or before `ts`.
  void WriteCpuSamplesUpTo(uint64_t ts);
  // Interns stack `stack` (its frames, their functions and mappings) in the open packet.
  void InternCallstack(uint32_t stack);
  uint64_t FunctionIid(const std::string& name);
  // The mapping (module) of `pc`, interned with its path and build id; `rel_pc` set.
  uint64_t MappingIid(uint64_t pc, uint64_t* rel_pc);
  // An InternedString entry (function name, path component, build id) in the open InternedData.
  void InternedString(uint32_t field, uint64_t iid, std::string_view text);

  // ---- native stacks ------------------------------------------------------------------------

  void PrepareStacks();

  // The "stack" annotation of stack `index` (an array of frame strings, innermost first), encoded
  // once per stack.
  const std::string& StackArg(uint32_t index);

  // ---- names --------------------------------------------------------------------------------

  // The iid of `name`; a new name is queued for the packet being written.
  uint64_t NameIid(std::string_view name);

  uint64_t KernelIid(StringId name);

  uint64_t RangeIid(StringId name);

  uint64_t ApiIid(const ApiCall& c);

  // ---- events -------------------------------------------------------------------------------

  // Starts an event packet at `ts`, interning any names queued since the last packet.
  size_t BeginEventPacket(uint64_t ts);

  void UintArg(ArgName name, uint64_t v);
  void StringArg(ArgName name, std::string_view v);
  void BoolArg(ArgName name, bool v);

  // grid and block of a launch configuration as [x, y, z] arrays, encoded once per config. A
  // configuration past the table (a damaged dump) is the empty one, as in the JSON trace; it has
  // the last slot (sizing the cache by such an index overflowed at UINT32_MAX).
  const std::string& LaunchArgs(uint32_t config);

  void RangeArgs(uint16_t domain, uint32_t category, uint16_t flags);
  // A torch op's details, as Kineto names them (the shapes as torch prints them, a string).
  void TorchArgs(const HostRange& r);

  // Writes the ends of every open slice that ends at or before `ts`.
  void CloseSlicesUpTo(uint64_t ts);

  // Opens a TrackEvent of `type` at e.ts on e's track; the caller adds args and calls EndEvent.
  struct Open {
    size_t packet;
    size_t event;
    uint64_t track;
  };
  Open BeginEvent(const PlannedEvent& e, EventType type, Category cat, uint64_t name_iid);
  void EndEvent(const Open& o, const PlannedEvent& e, EventType type);

  void WriteEvent(const PlannedEvent& e);

  const TracePlan plan_;
  const Profile& p_;
  NameCache names_;
  PacketSequence packets_;
  ProtoEncoder& enc_;  // packets_.enc(): the packet being written
  PerfettoTracks tracks_;
  std::vector<bool> api_flow_;      // api call starts a flow
  std::vector<bool> gpu_flow_[3];   // GPU record (kernel, memcpy, memset) ends a flow
  std::priority_queue<OpenSlice, std::vector<OpenSlice>, EndsLater> open_;
  uint64_t seq_ = 0;
  // Interning: iids from 1 (0 means unset); per-source caches in front of the string map.
  std::unordered_map<std::string, uint64_t> name_iids_;
  uint64_t next_name_iid_ = 1;
  std::vector<uint64_t> new_names_;          // interned since the last packet, not yet written
  std::vector<std::string> new_name_text_;
  std::vector<uint64_t> kernel_iid_;         // by StringId
  std::vector<uint64_t> range_iid_;          // by StringId
  std::unordered_map<uint32_t, uint64_t> api_iid_;  // (domain << 16 | cbid)
  uint32_t last_api_key_ = 0;
  uint64_t last_api_iid_ = 0;
  std::vector<std::string> launch_args_;     // by launch config; the last: the empty one
  // Sampled Python stacks: the slices shown in start order, the next one to begin, the tid of
  // the first Python track.
  const PythonSliceSet* python_;
  std::vector<uint32_t> python_order_;
  size_t next_python_ = 0;
  uint32_t python_tid_ = 0;
 public:
  // The Python tracks' first tid instead of the plan's first free one (a trace written in
  // segments: tids no segment's lanes reach).
  void SetPythonFirstTid(uint32_t tid) { python_first_tid_ = tid; }

 private:
  uint32_t python_first_tid_ = 0;
  // Native stacks: the symbolized frames (the caller's or own_stacks_), the call -> stack index,
  // and each stack's encoded annotation (empty until first used; no stacks: no entries).
  const SymbolizedStacks* stacks_;
  SymbolizedStacks own_stacks_;
  ApiStackIndex stack_index_;
  std::vector<std::string> stack_args_;
  // --cpu-sampling: the names, the samples in time order and the next one, and the intern
  // tables of their stacks (iids from 1; a callstack's iid is its stack index + 1).
  const CpuSampleNames* cpu_;
  std::vector<uint32_t> cpu_order_;
  size_t next_cpu_ = 0;
  std::vector<bool> callstack_interned_;  // by stack index
  std::unordered_map<uint64_t, uint64_t> frame_iids_;  // pc -> frame iid
  std::unordered_map<std::string, uint64_t> function_iids_;
  std::unordered_map<std::string, uint64_t> path_iids_;  // path components
  std::vector<uint64_t> mapping_iids_;  // by module index; the last: PCs in no module
  uint64_t mappings_interned_ = 0;     // and their build ids, one each (same iid)
};

}  // namespace gprof::perfetto
