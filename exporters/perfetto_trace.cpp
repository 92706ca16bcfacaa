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
#include <algorithm>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/exporters.h"
#include "exporters/format.h"
#include "exporters/json_writer.h"
#include "exporters/names.h"
#include "exporters/perfetto_packets.h"
#include "exporters/perfetto_trace.h"
#include "exporters/perfetto_tracks.h"
#include "exporters/trace_plan.h"
#include "exporters/utf8.h"

namespace gprof::perfetto {
namespace {

using proto::ProtoEncoder;

// Categories (Kineto's, REFERENCE.md §3), interned in this order: iid = index + 1.
enum Category : uint8_t {
  kCatUserAnnotation, kCatGpuUserAnnotation, kCatCudaRuntime, kCatCudaDriver, kCatKernel,
  kCatMemcpy, kCatMemset, kCatSync, kCatOverhead, kCatCpuOp, kCatGpuMemory, kCategoryCount,
};
constexpr std::string_view kCategoryNames[kCategoryCount] = {
    "user_annotation", "gpu_user_annotation", "cuda_runtime", "cuda_driver", "kernel",
    "gpu_memcpy", "gpu_memset", "cuda_sync", "overhead", "cpu_op", "gpu_memory"};

// Debug annotation names, interned in this order: iid = index + 1.
enum ArgName : uint8_t {
  kArgCorrelation, kArgStream, kArgGrid, kArgBlock, kArgBytes, kArgDomain, kArgCategory,
  kArgOpenAtEnd, kArgRecordFunctionId, kArgSequenceNumber, kArgInputDims, kArgCount,
};
constexpr std::string_view kArgNames[kArgCount] = {
    "correlation", "stream", "grid", "block", "bytes", "domain", "category", "open at end",
    "Record function id", "Sequence number", "Input Dims"};

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
  PerfettoWriter(const Profile& p, JsonWriter* out)
      : plan_(p), p_(p), names_(p), packets_(out), enc_(packets_.enc()),
        tracks_(plan_, &packets_), launch_args_(p.launch_configs.size() + 1) {}

  TraceStats Write() {
    WriteFirstPacket();
    tracks_.Write();
    MarkFlows();
    for (const PlannedEvent& e : plan_.events()) WriteEvent(e);
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
        enc_.AddVarint(f::kTrackUuid, tracks_.CounterUuid(e.pid));
        enc_.AddInt(f::kCounterValue, static_cast<int64_t>(plan_.MemoryInUse(e.index)));
        enc_.EndNested(ev);
        packets_.End(packet);
        break;
      }
      case K::kMemoryPeak: {
        const uint64_t bytes = plan_.MemoryInUse(e.index);
        const Open o = BeginEvent(
            e, kInstant, kCatGpuMemory,
            NameIid("peak memory in use: " + FormatMemory(static_cast<int64_t>(bytes))));
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
};

}  // namespace
}  // namespace gprof::perfetto

namespace gprof {

TraceStats WritePerfettoTrace(const Profile& profile, const std::string& path) {
  JsonWriter out(path);
  perfetto::PerfettoWriter w(profile, &out);
  return w.Write();
}

TraceStats FormatPerfettoTrace(const Profile& profile, JsonSink sink) {
  JsonWriter out(sink);
  perfetto::PerfettoWriter w(profile, &out);
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
