// The wire vocabulary of the Perfetto protobuf trace (perfetto_trace.cpp, perfetto_tracks.cpp):
// field numbers and enum values of Perfetto's trace protos (REFERENCE.md §5), and PacketSequence,
// which encodes packets on our one trusted packet sequence and hands each to the writer.
// Launcher process only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "outputs/perfetto/perfetto_encoder.h"
#include "text/json_writer.h"

namespace gprof::perfetto {

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
constexpr uint32_t kPerfSample = 66;
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
constexpr uint32_t kNestedStringValue = 8;
// InternedData and its entries (EventCategory, EventName, DebugAnnotationName: iid=1, name=2)
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kIid = 1;
constexpr uint32_t kInternedName = 2;
// InternedData's profiling tables (profile_common.proto: InternedString, Mapping, Frame,
// Callstack; each entry's iid is field 1)
constexpr uint32_t kFunctionNames = 5;
constexpr uint32_t kFrames = 6;
constexpr uint32_t kCallstacks = 7;
constexpr uint32_t kBuildIds = 16;
constexpr uint32_t kMappingPaths = 17;
constexpr uint32_t kMappings = 19;
constexpr uint32_t kInternedString = 2;  // InternedString.str
constexpr uint32_t kMappingBuildId = 2;
constexpr uint32_t kMappingStart = 4;
constexpr uint32_t kMappingEnd = 5;
constexpr uint32_t kMappingPathIds = 7;
constexpr uint32_t kFrameFunctionName = 2;
constexpr uint32_t kFrameMapping = 3;
constexpr uint32_t kFrameRelPc = 4;
constexpr uint32_t kCallstackFrames = 2;
// PerfSample (profile_packet.proto)
constexpr uint32_t kSamplePid = 2;
constexpr uint32_t kSampleTid = 3;
constexpr uint32_t kSampleCallstack = 4;
constexpr uint32_t kSampleCpuMode = 5;
}  // namespace f

constexpr uint32_t kSequence = 1;
constexpr uint64_t kIncrementalStateCleared = 1;  // TracePacket.SequenceFlags
constexpr uint64_t kNeedsIncrementalState = 2;
enum EventType : uint64_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounterEvent = 4 };
constexpr uint64_t kUnitSizeBytes = 3;      // CounterDescriptor.Unit
constexpr uint64_t kChildOrderExplicit = 3;  // TrackDescriptor.ChildTracksOrdering
constexpr uint64_t kNestedArray = 2;         // NestedValue.NestedType
constexpr uint64_t kCpuModeUser = 2;         // Profiling.CpuMode MODE_USER

// Packets on sequence kSequence, one at a time: Begin() starts one in enc(), the caller adds its
// fields, End() closes it and hands its bytes to the writer.
class PacketSequence {
 public:
  explicit PacketSequence(JsonWriter* out) : out_(*out) {}

  proto::ProtoEncoder& enc() { return enc_; }

  // Starts a packet with `flags` (0: none); returns the mark for End.
  size_t Begin(uint64_t flags) {
    enc_.clear();
    const size_t mark = enc_.BeginNested(f::kTracePacket);
    enc_.AddVarint(f::kSequenceId, kSequence);
    if (flags != 0) enc_.AddVarint(f::kSequenceFlags, flags);
    return mark;
  }
  void End(size_t mark) {
    enc_.EndNested(mark);
    out_.Raw(enc_.view());
    ++packets_;
  }

  // One InternedData entry (EventCategory, EventName, DebugAnnotationName) in the open packet.
  void InternedEntry(uint32_t field, uint64_t iid, std::string_view name) {
    const size_t m = enc_.BeginNested(field);
    enc_.AddVarint(f::kIid, iid);
    enc_.AddBytes(f::kInternedName, name);
    enc_.EndNested(m);
  }

  uint64_t packets() const { return packets_; }
  uint64_t Close() { return out_.Close(); }

 private:
  JsonWriter& out_;
  proto::ProtoEncoder enc_;  // the packet being written
  uint64_t packets_ = 0;
};

}  // namespace gprof::perfetto
