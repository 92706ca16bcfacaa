// GPU records checked against the API calls that launched them, once both are in one profile:
// which records have no recorded call, which start before their call (a GPU clock that disagrees
// with the host's), which successful launches never got GPU work. Pure; runs in the collector
// (window and whole-run dumps) and in the dump reader, which redoes it over the whole run when a
// dump was written in segments (a kernel's record may be in the segment after its call's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <array>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/profile.h"

namespace gprof {

// The API calls of a profile by correlation id: their start. CUPTI's correlation ids count up from
// 1 in a process, so the ids of a run or a window are dense: a flat array indexed by id - lowest
// (1M calls: ~8 MB, filled in one pass) instead of a hash map (several times slower at exit,
// bench figure 6c). Sparse ids (hand-made profiles) fall back to a map.
class CallStarts {
 public:
  explicit CallStarts(const std::vector<ApiCall>& calls);
  // The start of the (first) call with `id`; false when no call has it (id 0 never has one).
  bool Find(uint32_t id, uint64_t* start) const;

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  uint32_t base_ = 0;
  std::vector<uint64_t> flat_;
  std::unordered_map<uint32_t, uint64_t> sparse_;
};

// Records from `first` on: how many have no recorded call, and how many start more than
// kLaunchSkewSlackNs before theirs (either count may be skipped with nullptr).
template <typename Rec>
void CountAgainstCalls(const std::vector<Rec>& records, size_t first, const CallStarts& starts,
                       uint64_t* unlinked, uint64_t* before_launch) {
  for (size_t i = first; i < records.size(); ++i) {
    uint64_t call_start = 0;
    if (!starts.Find(records[i].correlation_id, &call_start)) {
      if (unlinked != nullptr) ++*unlinked;
    } else if (before_launch != nullptr && records[i].start_ns + kLaunchSkewSlackNs < call_start) {
      ++*before_launch;
    }
  }
}

// Sets gpu_records_before_launch (kernels, copies and memsets that start more than
// kLaunchSkewSlackNs before their call) and gpu_launches_without_records (calls flagged
// kApiCallLaunch with no GPU record of their correlation id). Launches that start after
// `launches_until_ns` are left out of the second (a dump cut short by a kill: their records
// would have come later); returns how many of those had no record.
uint64_t CheckGpuAgainstCalls(Profile* p, uint64_t launches_until_ns = UINT64_MAX);

// Sets gpu_records_uncorrelated: kernels, copies and memsets with no recorded call of their
// correlation id. Only meaningful when the profile has API calls (without them, the collector
// counts only records with id 0 as unlinked, and so does this: it leaves the counter alone).
void CountUncorrelated(Profile* p);

// The same checks over a run read segment by segment (model/dump_segment_reader.h), holding two
// segments' ids, not the run's: a GPU record matches a call of its own segment, the one before or
// the one after (where the collector's cut can put a kernel and its launch), as ReadDump finds
// them over the whole run when they are no further apart. Add each segment in order, then Finish.
// It also keeps the GPU records stored in the segment after their call's (launches in flight
// when the collector cut: a few per cut), so that a second pass can put each back with its call
// (PlaceInFlight): then a launch and its work are in one segment for the table and the traces.
class SegmentedGpuChecks {
 public:
  void Add(const Profile& segment);
  // Segment `index` as Add saw it: its records in flight are dropped (they belong to the segment
  // before) and those of the segment after that are its own are appended.
  void PlaceInFlight(uint32_t index, Profile* segment) const;
  // GPU records moved back one segment by PlaceInFlight.
  uint64_t in_flight() const { return in_flight_; }
  // Sets `run`'s gpu_records_uncorrelated (when the run had API calls),
  // gpu_records_before_launch, gpu_launches_without_records and, when run->info.complete is
  // false, info.incomplete_launches_in_flight (launches after the last GPU record ended).
  void Finish(Profile* run);

 private:
  struct Pending {
    uint32_t id;
    uint64_t start_ns;
  };
  std::unordered_map<uint32_t, uint64_t> calls_;  // the previous segment's: id -> first start
  std::unordered_set<uint32_t> record_ids_;       // the previous segment's GPU records'
  std::vector<Pending> records_;   // the previous segment's records with no call yet
  std::vector<Pending> launches_;  // its launches with no record yet
  uint64_t unlinked_ = 0, before_ = 0, without_ = 0, calls_seen_ = 0, gpu_end_ns_ = 0;
  uint32_t index_ = 0;
  uint64_t in_flight_ = 0;
  std::map<uint32_t, GpuRecords> moved_in_;  // by the segment they go to
  // By the segment they leave: their indices in it, per GpuKind (kernels, copies, sets).
  std::map<uint32_t, std::array<std::vector<uint32_t>, 3>> moved_out_;
};

}  // namespace gprof
