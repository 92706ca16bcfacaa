// WritePerfettoTrace: the trace of trace_json.cpp as Perfetto protobuf (REFERENCE.md §5),
// launcher process only. Same TracePlan (trace_plan.h), so the same events, lanes and flows.
//
// Layout: one trusted packet sequence (id 1) with incremental state. The first packet clears the
// state (SEQ_INCREMENTAL_STATE_CLEARED) and interns the categories and debug annotation names;
// then one TrackDescriptor packet per track; then the events, each packet with
// SEQ_NEEDS_INCREMENTAL_STATE. An event name is interned (InternedData.event_names) in the packet
// that first uses it; later events refer to it by iid.
//
// Tracks: the profiled process is a process track (ProcessDescriptor pid, name) and each OS
// thread a thread track (ThreadDescriptor pid, tid, name); the plan's synthetic host lanes
// (start/end ranges, CUPTI overhead, overlapping work) are named child tracks of the process.
// A GPU is a named top-level track ("GPU 0 <name>"), not a process: Kineto's pid = device would
// make GPU 0 pid 0, which Perfetto reserves for the idle process. Its streams and overflow lanes
// are named child tracks in explicit order, and its memory in use is a counter track under it.
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
#include <algorithm>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/exporters.h"
#include "exporters/json_writer.h"
#include "exporters/names.h"
#include "exporters/perfetto_encoder.h"
#include "exporters/perfetto_trace.h"
#include "exporters/trace_plan.h"
#include "exporters/utf8.h"

namespace gprof {
namespace {

using proto::ProtoEncoder;

// Field numbers (perfetto/protos/perfetto/trace/...; REFERENCE.md §5).
namespace f {
constexpr uint32_t kTracePacket = 1;
// TracePacket
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTrackDescriptor = 60;
// TrackDescriptor
constexpr uint32_t kUuid = 1;
constexpr uint32_t kTrackName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kCounter = 8;
constexpr uint32_t kChildOrdering = 11;
constexpr uint32_t kSiblingOrderRank = 12;
// ProcessDescriptor / ThreadDescriptor
constexpr uint32_t kPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kTid = 2;
constexpr uint32_t kThreadName = 5;
// CounterDescriptor
constexpr uint32_t kCounterUnit = 3;
// TrackEvent
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kCounterValue = 30;
constexpr uint32_t kFlowIds = 47;
constexpr uint32_t kTerminatingFlowIds = 48;
// DebugAnnotation
constexpr uint32_t kAnnotationNameIid = 1;
constexpr uint32_t kBoolValue = 2;
constexpr uint32_t kUintValue = 3;
constexpr uint32_t kStringValue = 6;
constexpr uint32_t kNestedValue = 8;
// DebugAnnotation.NestedValue
constexpr uint32_t kNestedType = 1;
constexpr uint32_t kArrayValues = 4;
constexpr uint32_t kNestedIntValue = 5;
// InternedData and its entries (EventCategory, EventName, DebugAnnotationName: iid=1, name=2)
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kIid = 1;
constexpr uint32_t kInternedName = 2;
}  // namespace f

constexpr uint32_t kSequence = 1;
constexpr uint64_t kIncrementalStateCleared = 1;
constexpr uint64_t kNeedsIncrementalState = 2;
enum EventType : uint64_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounterEvent = 4 };
constexpr uint64_t kUnitSizeBytes = 3;      // CounterDescriptor.Unit
constexpr uint64_t kChildOrderExplicit = 3;  // TrackDescriptor.ChildTracksOrdering
constexpr uint64_t kNestedArray = 2;         // NestedValue.NestedType

// Categories (Kineto's, REFERENCE.md §3), interned in this order: iid = index + 1.
enum Category : uint8_t {
  kCatUserAnnotation, kCatGpuUserAnnotation, kCatCudaRuntime, kCatCudaDriver, kCatKernel,
  kCatMemcpy, kCatMemset, kCatSync, kCatOverhead, kCategoryCount,
};
constexpr std::string_view kCategoryNames[kCategoryCount] = {
    "user_annotation", "gpu_user_annotation", "cuda_runtime", "cuda_driver", "kernel",
    "gpu_memcpy", "gpu_memset", "cuda_sync", "overhead"};

// Debug annotation names, interned in this order: iid = index + 1.
enum ArgName : uint8_t {
  kArgCorrelation, kArgStream, kArgGrid, kArgBlock, kArgBytes, kArgDomain, kArgCategory,
  kArgOpenAtEnd, kArgCount,
};
constexpr std::string_view kArgNames[kArgCount] = {
    "correlation", "stream", "grid", "block", "bytes", "domain", "category", "open at end"};

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
  PerfettoWriter(const Profile& p, JsonWriter* out) : plan_(p), p_(p), names_(p), out_(*out) {}

  TraceStats Write() {
    WriteFirstPacket();
    WriteTracks();
    MarkFlows();
    for (const PlannedEvent& e : plan_.events()) WriteEvent(e);
    CloseSlicesUpTo(UINT64_MAX);
    TraceStats stats;
    stats.events = packets_;
    stats.bytes = out_.Close();
    return stats;
  }

 private:
  // ---- packets ------------------------------------------------------------------------------

  // Starts a packet on our sequence; returns the mark for EndPacket.
  size_t BeginPacket(uint64_t flags) {
    enc_.clear();
    const size_t mark = enc_.BeginNested(f::kTracePacket);
    enc_.AddVarint(f::kSequenceId, kSequence);
    if (flags != 0) enc_.AddVarint(f::kSequenceFlags, flags);
    return mark;
  }
  void EndPacket(size_t mark) {
    enc_.EndNested(mark);
    out_.Raw(enc_.view());
    ++packets_;
  }

  void InternedEntry(uint32_t field, uint64_t iid, std::string_view name) {
    const size_t m = enc_.BeginNested(field);
    enc_.AddVarint(f::kIid, iid);
    enc_.AddBytes(f::kInternedName, name);
    enc_.EndNested(m);
  }

  void WriteFirstPacket() {
    const size_t packet = BeginPacket(kIncrementalStateCleared);
    const size_t interned = enc_.BeginNested(f::kInternedData);
    for (uint8_t c = 0; c < kCategoryCount; ++c) {
      InternedEntry(f::kEventCategories, Iid(static_cast<Category>(c)), kCategoryNames[c]);
    }
    for (uint8_t a = 0; a < kArgCount; ++a) {
      InternedEntry(f::kDebugAnnotationNames, Iid(static_cast<ArgName>(a)), kArgNames[a]);
    }
    enc_.EndNested(interned);
    EndPacket(packet);
  }

  // ---- tracks -------------------------------------------------------------------------------

  static uint64_t TrackKey(uint32_t pid, uint32_t tid) { return uint64_t{pid} << 32 | tid; }

  void TrackPacket(uint64_t uuid, uint64_t parent, std::string_view name, int64_t rank,
                   bool explicit_children) {
    const size_t packet = BeginPacket(0);
    const size_t d = enc_.BeginNested(f::kTrackDescriptor);
    enc_.AddVarint(f::kUuid, uuid);
    if (parent != 0) enc_.AddVarint(f::kParentUuid, parent);
    enc_.AddBytes(f::kTrackName, RepairUtf8(name));
    if (explicit_children) enc_.AddVarint(f::kChildOrdering, kChildOrderExplicit);
    enc_.AddInt(f::kSiblingOrderRank, rank);
    enc_.EndNested(d);
    EndPacket(packet);
  }

  void WriteTracks() {
    const std::vector<TraceProcess> processes = plan_.Processes();
    std::unordered_map<uint32_t, uint64_t> process_uuid;
    for (const TraceProcess& proc : processes) {
      const uint64_t uuid = next_uuid_++;
      process_uuid[proc.pid] = uuid;
      if (!proc.host) {
        TrackPacket(uuid, 0, proc.name, proc.sort_index, true);
        continue;
      }
      const size_t packet = BeginPacket(0);
      const size_t d = enc_.BeginNested(f::kTrackDescriptor);
      enc_.AddVarint(f::kUuid, uuid);
      const size_t pd = enc_.BeginNested(f::kProcess);
      enc_.AddInt(f::kPid, static_cast<int32_t>(proc.pid));
      enc_.AddBytes(f::kProcessName, RepairUtf8(proc.name));
      enc_.EndNested(pd);
      enc_.EndNested(d);
      EndPacket(packet);
    }
    // Lanes in the JSON's thread_sort_index order (a synthetic lane next to its thread/stream).
    std::vector<TraceTrack> tracks = plan_.Tracks();
    std::stable_sort(tracks.begin(), tracks.end(), [](const TraceTrack& a, const TraceTrack& b) {
      if (a.pid != b.pid) return a.pid < b.pid;
      return a.sort_index < b.sort_index;
    });
    int64_t rank = 0;
    for (const TraceTrack& t : tracks) {
      const uint64_t uuid = next_uuid_++;
      track_uuid_[TrackKey(t.pid, t.tid)] = uuid;
      const uint64_t parent = process_uuid.at(t.pid);
      if (t.pid == p_.info.pid && t.tid < kFirstSyntheticTid) {
        const size_t packet = BeginPacket(0);
        const size_t d = enc_.BeginNested(f::kTrackDescriptor);
        enc_.AddVarint(f::kUuid, uuid);
        const size_t td = enc_.BeginNested(f::kThread);
        enc_.AddInt(f::kPid, static_cast<int32_t>(t.pid));
        enc_.AddInt(f::kTid, static_cast<int32_t>(t.tid));
        enc_.AddBytes(f::kThreadName, RepairUtf8(t.name));
        enc_.EndNested(td);
        enc_.EndNested(d);
        EndPacket(packet);
      } else {
        TrackPacket(uuid, parent, t.name, rank, false);
      }
      ++rank;
    }
    // One bytes-in-use counter per device that has memory points.
    for (const PlannedEvent& e : plan_.events()) {
      if (e.kind != TraceEventKind::kMemory || counter_uuid_.count(e.pid)) continue;
      const uint64_t uuid = next_uuid_++;
      counter_uuid_[e.pid] = uuid;
      const size_t packet = BeginPacket(0);
      const size_t d = enc_.BeginNested(f::kTrackDescriptor);
      enc_.AddVarint(f::kUuid, uuid);
      enc_.AddVarint(f::kParentUuid, process_uuid.at(e.pid));
      enc_.AddBytes(f::kTrackName, TracePlan::MemoryCounterName(e.pid));
      enc_.AddInt(f::kSiblingOrderRank, -1);  // above the streams
      const size_t c = enc_.BeginNested(f::kCounter);
      enc_.AddVarint(f::kCounterUnit, kUnitSizeBytes);
      enc_.EndNested(c);
      enc_.EndNested(d);
      EndPacket(packet);
    }
  }

  uint64_t TrackUuid(const PlannedEvent& e) {
    const uint64_t key = TrackKey(e.pid, e.tid);
    // Launches alternate between a thread and a stream: remember the last two tracks.
    if (key == recent_key_[0]) return recent_uuid_[0];
    if (key == recent_key_[1]) return recent_uuid_[1];
    recent_key_[1] = recent_key_[0];
    recent_uuid_[1] = recent_uuid_[0];
    recent_key_[0] = key;
    recent_uuid_[0] = track_uuid_.at(key);
    return recent_uuid_[0];
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
    const size_t packet = BeginPacket(kNeedsIncrementalState);
    enc_.AddVarint(f::kTimestamp, ts);
    if (!new_names_.empty()) {
      const size_t interned = enc_.BeginNested(f::kInternedData);
      for (size_t i = 0; i < new_names_.size(); ++i) {
        InternedEntry(f::kEventNames, new_names_[i], new_name_text_[i]);
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

  // grid and block of a launch configuration as [x, y, z] arrays, encoded once per config.
  const std::string& LaunchArgs(uint32_t config) {
    if (config >= launch_args_.size()) launch_args_.resize(config + 1u);
    std::string& s = launch_args_[config];
    if (!s.empty()) return s;
    static const LaunchConfig kNone{};
    const LaunchConfig& lc = config < p_.launch_configs.size() ? p_.launch_configs[config] : kNone;
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
      EndPacket(packet);
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
    o.track = TrackUuid(e);
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
    EndPacket(o.packet);
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
        const Open o = BeginEvent(e, kSliceBegin, kCatUserAnnotation, RangeIid(r.name));
        RangeArgs(r.domain, r.category, r.flags);
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
        enc_.AddVarint(f::kTrackUuid, counter_uuid_.at(e.pid));
        enc_.AddInt(f::kCounterValue, static_cast<int64_t>(plan_.MemoryInUse(e.index)));
        enc_.EndNested(ev);
        EndPacket(packet);
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
  JsonWriter& out_;
  ProtoEncoder enc_;  // the packet being written
  uint64_t packets_ = 0;
  uint64_t next_uuid_ = 1;
  std::unordered_map<uint64_t, uint64_t> track_uuid_;   // (pid << 32 | tid) -> uuid
  std::unordered_map<uint32_t, uint64_t> counter_uuid_;  // device -> memory counter uuid
  uint64_t recent_key_[2] = {UINT64_MAX, UINT64_MAX};
  uint64_t recent_uuid_[2] = {0, 0};
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
  std::vector<std::string> launch_args_;     // by launch config
};

}  // namespace

TraceStats WritePerfettoTrace(const Profile& profile, const std::string& path) {
  JsonWriter out(path);
  PerfettoWriter w(profile, &out);
  return w.Write();
}

TraceStats FormatPerfettoTrace(const Profile& profile, JsonSink sink) {
  JsonWriter out(sink);
  PerfettoWriter w(profile, &out);
  return w.Write();
}

std::string FormatPerfettoTrace(const Profile& profile) {
  std::string bytes;
  FormatPerfettoTrace(profile, JsonSink{&bytes, [](void* ctx, const char* data, size_t size) {
                                          static_cast<std::string*>(ctx)->append(data, size);
                                        }});
  return bytes;
}

}  // namespace gprof
