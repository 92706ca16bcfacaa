// PerfettoTracks (see perfetto_tracks.h): track descriptor packets, in the JSON trace's order.
#include "outputs/perfetto/perfetto_tracks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "text/utf8.h"

namespace gprof::perfetto {

PerfettoTracks::PerfettoTracks(const TracePlan& plan, PacketSequence* packets)
    : plan_(plan), packets_(*packets) {}

void PerfettoTracks::NamedTrack(uint64_t uuid, uint64_t parent, std::string_view name,
                                int64_t rank, bool explicit_children) {
  proto::ProtoEncoder& enc = packets_.enc();
  const size_t packet = packets_.Begin(0);
  const size_t d = enc.BeginNested(f::kTrackDescriptor);
  enc.AddVarint(f::kUuid, uuid);
  if (parent != 0) enc.AddVarint(f::kParentUuid, parent);
  enc.AddBytes(f::kTrackName, RepairUtf8(name));
  if (explicit_children) enc.AddVarint(f::kChildOrdering, kChildOrderExplicit);
  enc.AddInt(f::kSiblingOrderRank, rank);
  enc.EndNested(d);
  packets_.End(packet);
}

void PerfettoTracks::Write(const std::vector<TraceTrack>& extra) {
  proto::ProtoEncoder& enc = packets_.enc();
  const uint32_t host_pid = plan_.profile().info.pid;
  const std::vector<TraceProcess> processes = plan_.Processes();
  std::unordered_map<uint32_t, uint64_t> process_uuid;
  for (const TraceProcess& proc : processes) {
    const uint64_t uuid = ProcessUuidOf(proc.pid);
    process_uuid[proc.pid] = uuid;
    if (!proc.host) {
      NamedTrack(uuid, 0, proc.name, proc.sort_index, true);
      continue;
    }
    const size_t packet = packets_.Begin(0);
    const size_t d = enc.BeginNested(f::kTrackDescriptor);
    enc.AddVarint(f::kUuid, uuid);
    const size_t pd = enc.BeginNested(f::kProcess);
    enc.AddInt(f::kPid, static_cast<int32_t>(proc.pid));
    enc.AddBytes(f::kProcessName, RepairUtf8(proc.name));
    enc.EndNested(pd);
    enc.EndNested(d);
    packets_.End(packet);
  }
  // Lanes in the JSON's thread_sort_index order (a synthetic lane next to its thread/stream).
  std::vector<TraceTrack> tracks = plan_.Tracks();
  tracks.insert(tracks.end(), extra.begin(), extra.end());  // after the plan's: a stable sort
                                                              // keeps them after their thread
  std::stable_sort(tracks.begin(), tracks.end(), [](const TraceTrack& a, const TraceTrack& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.sort_index < b.sort_index;
  });
  int64_t rank = 0;
  for (const TraceTrack& t : tracks) {
    const uint64_t uuid = TrackUuidOf(t.pid, t.tid);
    track_uuid_[TrackKey(t.pid, t.tid)] = uuid;
    const uint64_t parent = process_uuid.at(t.pid);
    if (t.pid == host_pid && t.tid < kFirstSyntheticTid) {
      const size_t packet = packets_.Begin(0);
      const size_t d = enc.BeginNested(f::kTrackDescriptor);
      enc.AddVarint(f::kUuid, uuid);
      const size_t td = enc.BeginNested(f::kThread);
      enc.AddInt(f::kPid, static_cast<int32_t>(t.pid));
      enc.AddInt(f::kTid, static_cast<int32_t>(t.tid));
      enc.AddBytes(f::kThreadName, RepairUtf8(t.name));
      enc.EndNested(td);
      enc.EndNested(d);
      packets_.End(packet);
    } else {
      NamedTrack(uuid, parent, t.name, rank, false);
    }
    ++rank;
  }
  // One bytes-in-use counter per device that has memory points (two with torch's allocator).
  for (const PlannedEvent& e : plan_.events()) {
    if (e.kind != TraceEventKind::kMemory) continue;
    const bool torch = plan_.MemoryIsTorch(e.index);
    if (counter_uuid_.count(CounterKey(e.pid, torch))) continue;
    const uint64_t uuid = CounterUuidOf(e.pid, torch);
    counter_uuid_[CounterKey(e.pid, torch)] = uuid;
    const size_t packet = packets_.Begin(0);
    const size_t d = enc.BeginNested(f::kTrackDescriptor);
    enc.AddVarint(f::kUuid, uuid);
    enc.AddVarint(f::kParentUuid, process_uuid.at(e.pid));
    enc.AddBytes(f::kTrackName, TracePlan::MemoryCounterName(e.pid, torch));
    enc.AddInt(f::kSiblingOrderRank, -1);  // above the streams
    const size_t c = enc.BeginNested(f::kCounter);
    enc.AddVarint(f::kCounterUnit, kUnitSizeBytes);
    enc.EndNested(c);
    enc.EndNested(d);
    packets_.End(packet);
  }
}

}  // namespace gprof::perfetto
