// PerfettoTracks: the track descriptors of the Perfetto protobuf trace and the uuid of each
// (pid, tid) the events go on (perfetto_trace.cpp writes the events). Launcher process only.
//
// The profiled process is a process track (ProcessDescriptor pid, name) and each OS thread a
// thread track (ThreadDescriptor pid, tid, name); the plan's synthetic host lanes (start/end
// ranges, CUPTI overhead, overlapping work) are named child tracks of the process. A GPU is a
// named top-level track ("GPU 0 <name>"), not a process: Kineto's pid = device would make GPU 0
// pid 0, which Perfetto reserves for the idle process. Its streams and overflow lanes are named
// child tracks in explicit order, and its memory in use is a counter track under it. Sampled
// Python stacks (python_slices.h) are named child tracks of the process too, one per sampled
// thread, ranked right after that thread's lanes as in the JSON's thread_sort_index order.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/timeline/trace_plan.h"
#include "outputs/perfetto/perfetto_packets.h"

namespace gprof::perfetto {

class PerfettoTracks {
 public:
  // `plan` and `packets` must outlive the tracks.
  PerfettoTracks(const TracePlan& plan, PacketSequence* packets);

  // One TrackDescriptor packet per process, lane and memory counter of the plan, and per track
  // of `extra` (tracks the plan does not have: the sampled Python stacks' PythonTraceTracks, on
  // the host pid with synthetic tids).
  void Write(const std::vector<TraceTrack>& extra = {});

  // The track of an event's (pid, tid); Write() first.
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
  // The track of (pid, tid) of the plan or of Write's `extra`; Write() first.
  uint64_t TrackUuid(uint32_t pid, uint32_t tid) const { return track_uuid_.at(TrackKey(pid, tid)); }
  // The bytes-in-use counter track of a device that has memory points; Write() first.
  uint64_t CounterUuid(uint32_t device, bool torch) const {
    return counter_uuid_.at(CounterKey(device, torch));
  }

 private:
  static uint64_t TrackKey(uint32_t pid, uint32_t tid) { return uint64_t{pid} << 32 | tid; }
  // Uuids are functions of what a track is, not of the order written, so a trace written in
  // segments (SegmentedPerfettoTrace) names the same track alike in every segment: a lane
  // (pid < 2^30, kMaxPid) is its (pid, tid), a process the top bit and its pid, a memory
  // counter the next bit.
  static uint64_t TrackUuidOf(uint32_t pid, uint32_t tid) { return TrackKey(pid, tid) + 1; }
  static uint64_t ProcessUuidOf(uint32_t pid) { return uint64_t{1} << 63 | pid; }
  static uint64_t CounterUuidOf(uint32_t pid, bool torch) {
    return uint64_t{1} << 62 | uint64_t{pid} << 1 | (torch ? 1 : 0);
  }
  // A named track: a top-level GPU (parent 0) or a child lane.
  void NamedTrack(uint64_t uuid, uint64_t parent, std::string_view name, int64_t rank,
                  bool explicit_children);

  const TracePlan& plan_;
  PacketSequence& packets_;
  std::unordered_map<uint64_t, uint64_t> track_uuid_;    // (pid << 32 | tid) -> uuid
  static uint64_t CounterKey(uint32_t device, bool torch) {
    return uint64_t{device} << 1 | (torch ? 1 : 0);
  }
  std::unordered_map<uint64_t, uint64_t> counter_uuid_;  // CounterKey -> memory counter uuid
  uint64_t recent_key_[2] = {UINT64_MAX, UINT64_MAX};
  uint64_t recent_uuid_[2] = {0, 0};
};

}  // namespace gprof::perfetto
