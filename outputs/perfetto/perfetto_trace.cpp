// WritePerfettoTrace: the trace of trace_json.cpp as Perfetto protobuf (REFERENCE.md §5),
// launcher process only. Same TracePlan (trace_plan.h), so the same events, lanes and flows.
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
#include <algorithm>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/attribution/names.h"
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
namespace {

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
  kArgPythonId, kArgPythonParentId, kArgPythonThread, kArgSampled, kArgSamples, kArgCount,
};
constexpr std::string_view kArgNames[kArgCount] = {
    "correlation", "stream", "grid", "block", "bytes", "domain", "category", "open at end",
    "Record function id", "Sequence number", "Input Dims", "stack", "Python id",
    "Python parent id", "Python thread", "sampled", "samples"};

uint64_t Iid(Category c) { return uint64_t{c} + 1; }
uint64_t Iid(ArgName a) { return uint64_t{a} + 1; }

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
  PerfettoWriter(const Profile& p, JsonWriter* out, const PythonSliceSet* python,
                 const SymbolizedStacks* stacks)
      : plan_(p), p_(p), names_(p), packets_(out), enc_(packets_.enc()),
        tracks_(plan_, &packets_), launch_args_(p.launch_configs.size() + 1), python_(python),
        stacks_(stacks), stack_index_(p) {}

  TraceStats Write() {
    WriteFirstPacket();
    std::vector<TraceTrack> python_tracks;
    if (python_ != nullptr) {
      python_tid_ = PythonFirstTid(plan_);
      python_tracks = PythonTraceTracks(*python_, plan_, python_tid_);
      OrderPythonSlices();
    }
    tracks_.Write(python_tracks);
    MarkFlows();
    PrepareStacks();
    for (const PlannedEvent& e : plan_.events()) {
      WritePythonSlicesUpTo(e.ts);
      WriteEvent(e);
    }
    WritePythonSlicesUpTo(UINT64_MAX);
    CloseSlicesUpTo(UINT64_MAX);
    TraceStats stats;
    stats.events = packets_.packets();
    stats.bytes = packets_.Close();
    return stats;
  }

 private:
  // ---- the first packet: clears the incremental state, interns categories and arg names ----

  void WriteFirstPacket() {
    const size_t packet = packets_.Begin(kIncrementalStateCleared);
    const size_t interned = enc_.BeginNested(f::kInternedData);
    for (uint8_t c = 0; c < kCategoryCount; ++c) {
      packets_.InternedEntry(f::kEventCategories, Iid(static_cast<Category>(c)), kCategoryNames[c]);
    }
    for (uint8_t a = 0; a < kArgCount; ++a) {
      packets_.InternedEntry(f::kDebugAnnotationNames, Iid(static_cast<ArgName>(a)), kArgNames[a]);
    }
    enc_.EndNested(interned);
    packets_.End(packet);
  }

  // ---- flows --------------------------------------------------------------------------------

  void MarkFlows() {
    api_flow_.assign(p_.api_calls.size(), false);
    for (auto& v : gpu_flow_) v.clear();
    gpu_flow_[0].assign(p_.kernels.size(), false);
    gpu_flow_[1].assign(p_.memcpys.size(), false);
    gpu_flow_[2].assign(p_.memsets.size(), false);
    for (const PlannedFlow& fl : plan_.flows()) {
      api_flow_[fl.api_index] = true;
      gpu_flow_[static_cast<int>(fl.gpu_kind)][fl.gpu_index] = true;
    }
  }

  // ---- sampled Python stacks -----------------------------------------------------------------

  // The slices shown (PythonSliceShown, as in the JSON), by start; a stable sort keeps each
  // track's order (by start, parents before children), so a parent begins before its child.
  void OrderPythonSlices() {
    const uint64_t base = plan_.base_ns();
    for (uint32_t i = 0; i < python_->slices.size(); ++i) {
      if (PythonSliceShown(*python_, python_->slices[i], base)) python_order_.push_back(i);
    }
    std::stable_sort(python_order_.begin(), python_order_.end(), [&](uint32_t a, uint32_t b) {
      return python_->slices[a].ts < python_->slices[b].ts;
    });
  }

  // Writes the begins of the Python slices that start at or before `ts` (their ends go on the
  // heap with the plan's).
  void WritePythonSlicesUpTo(uint64_t ts) {
    if (python_ == nullptr) return;
    const uint32_t host = p_.info.pid;
    while (next_python_ < python_order_.size() &&
           python_->slices[python_order_[next_python_]].ts <= ts) {
      const PythonSlice& s = python_->slices[python_order_[next_python_++]];
      CloseSlicesUpTo(s.ts);
      const uint64_t track = tracks_.TrackUuid(host, python_tid_ + s.track);
      const uint64_t name = NameIid(python_->names[s.name]);
      const size_t packet = BeginEventPacket(s.ts);
      const size_t ev = enc_.BeginNested(f::kTrackEvent);
      enc_.AddVarint(f::kType, kSliceBegin);
      enc_.AddVarint(f::kTrackUuid, track);
      enc_.AddVarint(f::kCategoryIids, Iid(kCatPythonFunction));
      enc_.AddVarint(f::kNameIid, name);
      UintArg(kArgPythonId, s.id);
      if (s.parent != 0) UintArg(kArgPythonParentId, s.parent);
      UintArg(kArgPythonThread, s.track);
      BoolArg(kArgSampled, true);
      UintArg(kArgSamples, s.samples);
      enc_.EndNested(ev);
      packets_.End(packet);
      open_.push({std::max(s.ts, s.end), seq_++, track});
    }
  }

  // ---- native stacks ------------------------------------------------------------------------

  void PrepareStacks() {
    if (p_.api_stacks.empty()) return;
    if (stacks_ == nullptr) {
      own_stacks_ = SymbolizeStacks(p_);
      stacks_ = &own_stacks_;
    }
    stack_args_.resize(stacks_->frames.size());
  }

  // The "stack" annotation of stack `index` (an array of frame strings, innermost first), encoded
  // once per stack.
  const std::string& StackArg(uint32_t index) {
    std::string& s = stack_args_[index];
    if (!s.empty()) return s;
    ProtoEncoder e;
    const size_t a = e.BeginNested(f::kDebugAnnotations);
    e.AddVarint(f::kAnnotationNameIid, Iid(kArgStack));
    const size_t n = e.BeginNested(f::kNestedValue);
    e.AddVarint(f::kNestedType, kNestedArray);
    for (const std::string& frame : stacks_->frames[index]) {
      const size_t v = e.BeginNested(f::kArrayValues);
      e.AddBytes(f::kNestedStringValue, RepairUtf8(frame));
      e.EndNested(v);
    }
    e.EndNested(n);
    e.EndNested(a);
    s = std::string(e.view());
    return s;
  }

  // ---- names --------------------------------------------------------------------------------

  // The iid of `name`; a new name is queued for the packet being written.
  uint64_t NameIid(std::string_view name) {
    auto [it, added] = name_iids_.try_emplace(std::string(name), 0);
    if (added) {
      it->second = next_name_iid_++;
      new_names_.push_back(it->second);
      new_name_text_.push_back(RepairUtf8(name));
    }
    return it->second;
  }

  uint64_t KernelIid(StringId name) {
    if (name >= kernel_iid_.size()) kernel_iid_.resize(name + 1u, 0);
    uint64_t& iid = kernel_iid_[name];
    if (iid == 0) iid = NameIid(names_.KernelName(name));
    return iid;
  }

  uint64_t RangeIid(StringId name) {
    if (name >= range_iid_.size()) range_iid_.resize(name + 1u, 0);
    uint64_t& iid = range_iid_[name];
    if (iid == 0) iid = NameIid(p_.strings.Get(name));
    return iid;
  }

  uint64_t ApiIid(const ApiCall& c) {
    const uint32_t key = static_cast<uint32_t>(c.domain) << 16 | c.cbid;
    if (key == last_api_key_ && last_api_iid_ != 0) return last_api_iid_;
    uint64_t& iid = api_iid_[key];
    if (iid == 0) iid = NameIid(names_.ApiCallName(c));
    last_api_key_ = key;
    last_api_iid_ = iid;
    return iid;
  }

  // ---- events -------------------------------------------------------------------------------

  // Starts an event packet at `ts`, interning any names queued since the last packet.
  size_t BeginEventPacket(uint64_t ts) {
    const size_t packet = packets_.Begin(kNeedsIncrementalState);
    enc_.AddVarint(f::kTimestamp, ts);
    if (!new_names_.empty()) {
      const size_t interned = enc_.BeginNested(f::kInternedData);
      for (size_t i = 0; i < new_names_.size(); ++i) {
        packets_.InternedEntry(f::kEventNames, new_names_[i], new_name_text_[i]);
      }
      enc_.EndNested(interned);
      new_names_.clear();
      new_name_text_.clear();
    }
    return packet;
  }

  void UintArg(ArgName name, uint64_t v) {
    const size_t m = enc_.BeginNested(f::kDebugAnnotations);
    enc_.AddVarint(f::kAnnotationNameIid, Iid(name));
    enc_.AddVarint(f::kUintValue, v);
    enc_.EndNested(m);
  }
  void StringArg(ArgName name, std::string_view v) {
    const size_t m = enc_.BeginNested(f::kDebugAnnotations);
    enc_.AddVarint(f::kAnnotationNameIid, Iid(name));
    enc_.AddBytes(f::kStringValue, RepairUtf8(v));
    enc_.EndNested(m);
  }
  void BoolArg(ArgName name, bool v) {
    const size_t m = enc_.BeginNested(f::kDebugAnnotations);
    enc_.AddVarint(f::kAnnotationNameIid, Iid(name));
    enc_.AddBool(f::kBoolValue, v);
    enc_.EndNested(m);
  }

  // grid and block of a launch configuration as [x, y, z] arrays, encoded once per config. A
  // configuration past the table (a damaged dump) is the empty one, as in the JSON trace; it has
  // the last slot (sizing the cache by such an index overflowed at UINT32_MAX).
  const std::string& LaunchArgs(uint32_t config) {
    static const LaunchConfig kNone{};
    const bool known = config < p_.launch_configs.size();
    std::string& s = launch_args_[known ? config : p_.launch_configs.size()];
    if (!s.empty()) return s;
    const LaunchConfig& lc = known ? p_.launch_configs[config] : kNone;
    ProtoEncoder e;
    for (const auto& [name, xyz] : {std::pair{kArgGrid, lc.grid}, std::pair{kArgBlock, lc.block}}) {
      const size_t a = e.BeginNested(f::kDebugAnnotations);
      e.AddVarint(f::kAnnotationNameIid, Iid(name));
      const size_t n = e.BeginNested(f::kNestedValue);
      e.AddVarint(f::kNestedType, kNestedArray);
      for (int i = 0; i < 3; ++i) {
        const size_t v = e.BeginNested(f::kArrayValues);
        e.AddInt(f::kNestedIntValue, xyz[i]);
        e.EndNested(v);
      }
      e.EndNested(n);
      e.EndNested(a);
    }
    s = std::string(e.view());
    return s;
  }

  void RangeArgs(uint16_t domain, uint32_t category, uint16_t flags) {
    const std::string_view dom =
        domain < p_.domains.size() ? p_.strings.Get(p_.domains[domain]) : std::string_view();
    if (!dom.empty()) StringArg(kArgDomain, dom);
    if (category != 0) UintArg(kArgCategory, category);
    if (flags & kRangeOpenAtEnd) BoolArg(kArgOpenAtEnd, true);
  }
  // A torch op's details, as Kineto names them (the shapes as torch prints them, a string).
  void TorchArgs(const HostRange& r) {
    if (!(r.flags & kRangeTorch)) return;
    if (r.op_id != 0) UintArg(kArgRecordFunctionId, r.op_id);
    if (r.seq >= 0) UintArg(kArgSequenceNumber, static_cast<uint64_t>(r.seq));
    if (r.shapes != kNoString) StringArg(kArgInputDims, p_.strings.Get(r.shapes));
  }

  // Writes the ends of every open slice that ends at or before `ts`.
  void CloseSlicesUpTo(uint64_t ts) {
    while (!open_.empty() && open_.top().end <= ts) {
      const OpenSlice s = open_.top();
      open_.pop();
      const size_t packet = BeginEventPacket(s.end);
      const size_t ev = enc_.BeginNested(f::kTrackEvent);
      enc_.AddVarint(f::kType, kSliceEnd);
      enc_.AddVarint(f::kTrackUuid, s.track);
      enc_.EndNested(ev);
      packets_.End(packet);
    }
  }

  // Opens a TrackEvent of `type` at e.ts on e's track; the caller adds args and calls EndEvent.
  struct Open {
    size_t packet;
    size_t event;
    uint64_t track;
  };
  Open BeginEvent(const PlannedEvent& e, EventType type, Category cat, uint64_t name_iid) {
    Open o;
    o.track = tracks_.TrackUuid(e);
    o.packet = BeginEventPacket(e.ts);
    o.event = enc_.BeginNested(f::kTrackEvent);
    enc_.AddVarint(f::kType, type);
    enc_.AddVarint(f::kTrackUuid, o.track);
    enc_.AddVarint(f::kCategoryIids, Iid(cat));
    enc_.AddVarint(f::kNameIid, name_iid);
    return o;
  }
  void EndEvent(const Open& o, const PlannedEvent& e, EventType type) {
    enc_.EndNested(o.event);
    packets_.End(o.packet);
    if (type == kSliceBegin) open_.push({std::max(e.ts, e.end), seq_++, o.track});
  }

  void WriteEvent(const PlannedEvent& e) {
    using K = TraceEventKind;
    if (e.kind == K::kFlowStart || e.kind == K::kFlowEnd) return;  // carried by the slices
    CloseSlicesUpTo(e.ts);
    switch (e.kind) {
      case K::kStep: {
        const Open o = BeginEvent(e, kSliceBegin, kCatUserAnnotation,
                                  NameIid(TracePlan::StepName(p_.steps[e.index].number)));
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kRange: {
        const HostRange& r = p_.ranges[e.index];
        const Open o = BeginEvent(e, kSliceBegin,
                                  (r.flags & kRangeCpuOp) ? kCatCpuOp : kCatUserAnnotation,
                                  RangeIid(r.name));
        RangeArgs(r.domain, r.category, r.flags);
        TorchArgs(r);
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kMark: {
        const HostMark& m = p_.marks[e.index];
        const Open o = BeginEvent(e, kInstant, kCatUserAnnotation, RangeIid(m.name));
        RangeArgs(m.domain, m.category, 0);
        EndEvent(o, e, kInstant);
        break;
      }
      case K::kApi: {
        const ApiCall& c = p_.api_calls[e.index];
        const Open o = BeginEvent(e, kSliceBegin,
                                  c.domain == ApiDomain::kDriver ? kCatCudaDriver : kCatCudaRuntime,
                                  ApiIid(c));
        UintArg(kArgCorrelation, c.correlation_id);
        if (!stack_args_.empty()) {
          const uint32_t stack = stack_index_.StackOf(c.correlation_id);
          if (stack < stack_args_.size()) enc_.AppendRaw(StackArg(stack));
        }
        if (api_flow_[e.index]) enc_.AddFixed64(f::kFlowIds, c.correlation_id);
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kKernel: {
        const Kernel& k = p_.kernels[e.index];
        const Open o = BeginEvent(e, kSliceBegin, kCatKernel, KernelIid(k.name));
        UintArg(kArgCorrelation, k.correlation_id);
        UintArg(kArgStream, k.stream_id);
        enc_.AppendRaw(LaunchArgs(k.launch_config));
        if (gpu_flow_[0][e.index]) enc_.AddFixed64(f::kTerminatingFlowIds, k.correlation_id);
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kMemcpy: {
        const Memcpy& m = p_.memcpys[e.index];
        const Open o = BeginEvent(e, kSliceBegin, kCatMemcpy, NameIid(MemcpyName(m)));
        UintArg(kArgCorrelation, m.correlation_id);
        UintArg(kArgStream, m.stream_id);
        UintArg(kArgBytes, m.bytes);
        if (gpu_flow_[1][e.index]) enc_.AddFixed64(f::kTerminatingFlowIds, m.correlation_id);
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kMemset: {
        const Memset& m = p_.memsets[e.index];
        const Open o = BeginEvent(e, kSliceBegin, kCatMemset, NameIid(MemsetName(m)));
        UintArg(kArgCorrelation, m.correlation_id);
        UintArg(kArgStream, m.stream_id);
        UintArg(kArgBytes, m.bytes);
        if (gpu_flow_[2][e.index]) enc_.AddFixed64(f::kTerminatingFlowIds, m.correlation_id);
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kSync: {
        const Sync& s = p_.syncs[e.index];
        const Open o = BeginEvent(e, kSliceBegin, kCatSync, NameIid(SyncName(s.kind)));
        UintArg(kArgCorrelation, s.correlation_id);
        if (s.stream_id != kNoStream) UintArg(kArgStream, s.stream_id);
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kOverhead: {
        const Open o = BeginEvent(e, kSliceBegin, kCatOverhead,
                                  NameIid(OverheadName(p_.overheads[e.index].kind)));
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kAnnotation: {
        const GpuAnnotation& a = plan_.annotations()[e.index];
        const uint64_t iid = a.from_step ? NameIid(plan_.AnnotationName(a))
                                         : RangeIid(p_.ranges[a.name_source].name);
        const Open o = BeginEvent(e, kSliceBegin, kCatGpuUserAnnotation, iid);
        EndEvent(o, e, kSliceBegin);
        break;
      }
      case K::kMemory: {
        const size_t packet = BeginEventPacket(e.ts);
        const size_t ev = enc_.BeginNested(f::kTrackEvent);
        enc_.AddVarint(f::kType, kCounterEvent);
        enc_.AddVarint(f::kTrackUuid, tracks_.CounterUuid(e.pid, plan_.MemoryIsTorch(e.index)));
        enc_.AddInt(f::kCounterValue, static_cast<int64_t>(plan_.MemoryInUse(e.index)));
        enc_.EndNested(ev);
        packets_.End(packet);
        break;
      }
      case K::kMemoryPeak: {
        const uint64_t bytes = plan_.MemoryInUse(e.index);
        const Open o = BeginEvent(e, kInstant, kCatGpuMemory, NameIid(plan_.MemoryPeakName(e.index)));
        UintArg(kArgBytes, bytes);
        EndEvent(o, e, kInstant);
        break;
      }
      case K::kFlowStart:
      case K::kFlowEnd:
        break;
    }
  }

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
  // Native stacks: the symbolized frames (the caller's or own_stacks_), the call -> stack index,
  // and each stack's encoded annotation (empty until first used; no stacks: no entries).
  const SymbolizedStacks* stacks_;
  SymbolizedStacks own_stacks_;
  ApiStackIndex stack_index_;
  std::vector<std::string> stack_args_;
};

}  // namespace
}  // namespace gprof::perfetto

namespace gprof {

TraceStats WritePerfettoTrace(const Profile& profile, const std::string& path) {
  return WritePerfettoTrace(profile, path, nullptr, nullptr);
}

TraceStats WritePerfettoTrace(const Profile& profile, const std::string& path,
                              const PythonSliceSet* python, const SymbolizedStacks* stacks) {
  JsonWriter out(path);
  perfetto::PerfettoWriter w(profile, &out, python, stacks);
  return w.Write();
}

TraceStats FormatPerfettoTrace(const Profile& profile, JsonSink sink) {
  JsonWriter out(sink);
  perfetto::PerfettoWriter w(profile, &out, nullptr, nullptr);
  return w.Write();
}

std::string FormatPerfettoTrace(const Profile& profile) {
  return FormatPerfettoTrace(profile, nullptr, nullptr);
}

std::string FormatPerfettoTrace(const Profile& profile, const PythonSliceSet* python,
                                const SymbolizedStacks* stacks) {
  std::string bytes;
  {
    JsonWriter out(JsonSink{&bytes, [](void* ctx, const char* data, size_t size) {
                              static_cast<std::string*>(ctx)->append(data, size);
                            }});
    perfetto::PerfettoWriter w(profile, &out, python, stacks);
    w.Write();
  }
  return bytes;
}

}  // namespace gprof
