// SegmentedGpuChecks (see gpu_checks.h): CheckGpuAgainstCalls and CountUncorrelated over a run
// read segment by segment.
#include <algorithm>
#include <type_traits>

#include "model/gpu_checks.h"

namespace gprof {

void SegmentedGpuChecks::Add(const Profile& p) {
  std::unordered_map<uint32_t, uint64_t> calls;
  calls.reserve(p.api_calls.size());
  for (const ApiCall& c : p.api_calls) calls.emplace(c.correlation_id, c.start_ns);
  calls_seen_ += p.api_calls.size();
  std::unordered_set<uint32_t> ids;
  std::vector<Pending> records;
  // 0: no call; 1: a call of this segment; 2: of the one before (the record was in flight).
  const auto call_of = [&](uint32_t id, uint64_t* start) {
    if (id == 0) return 0;
    auto it = calls.find(id);
    if (it != calls.end()) {
      *start = it->second;
      return 1;
    }
    if ((it = calls_.find(id)) == calls_.end()) return 0;
    *start = it->second;
    return 2;
  };
  const auto check = [&](uint64_t record_start, uint64_t call_start) {
    if (record_start + kLaunchSkewSlackNs < call_start) ++before_;
  };
  // Kernels, copies and sets, as CheckGpuAgainstCalls and CountUncorrelated count them.
  ForEachGpuKind(p, [&](GpuKind kind, const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    if constexpr (std::is_same_v<T, Kernel> || std::is_same_v<T, Memcpy> ||
                  std::is_same_v<T, Memset>) {
      for (uint32_t i = 0; i < v.size(); ++i) {
        const T& r = v[i];
        ids.insert(r.correlation_id);
        gpu_end_ns_ = std::max(gpu_end_ns_, r.end_ns);
        uint64_t start = 0;
        const int found = call_of(r.correlation_id, &start);
        if (found == 0) {
          records.push_back({r.correlation_id, r.start_ns});
          continue;
        }
        check(r.start_ns, start);
        if (found == 2) {
          RecordsOf<T>(moved_in_[index_ - 1]).push_back(r);
          moved_out_[index_][static_cast<size_t>(kind)].push_back(i);
          ++in_flight_;
        }
      }
    }
  });
  // The previous segment's records without a call: this segment's calls are their last chance.
  for (const Pending& r : records_) {
    const auto it = r.id == 0 ? calls.end() : calls.find(r.id);
    if (it == calls.end()) {
      ++unlinked_;
    } else {
      check(r.start_ns, it->second);
    }
  }
  // The previous segment's launches without a record: this segment's records are theirs.
  for (const Pending& c : launches_) {
    if (ids.count(c.id) == 0) ++without_;
  }
  launches_.clear();
  for (const ApiCall& c : p.api_calls) {
    if ((c.flags & kApiCallLaunch) != 0 && ids.count(c.correlation_id) == 0 &&
        record_ids_.count(c.correlation_id) == 0) {
      launches_.push_back({c.correlation_id, c.start_ns});
    }
  }
  calls_ = std::move(calls);
  record_ids_ = std::move(ids);
  records_ = std::move(records);
  ++index_;
}

void SegmentedGpuChecks::PlaceInFlight(uint32_t index, Profile* p) const {
  const auto out = moved_out_.find(index);
  const auto in = moved_in_.find(index);
  ForEachGpuKind(*p, [&](GpuKind kind, auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    if constexpr (std::is_same_v<T, Kernel> || std::is_same_v<T, Memcpy> ||
                  std::is_same_v<T, Memset>) {
      if (out != moved_out_.end()) {
        const std::vector<uint32_t>& gone = out->second[static_cast<size_t>(kind)];
        size_t next = 0, kept = 0;
        for (uint32_t i = 0; i < v.size(); ++i) {
          if (next < gone.size() && gone[next] == i) {
            ++next;
          } else {
            v[kept++] = v[i];
          }
        }
        v.resize(kept);
      }
      if (in != moved_in_.end()) {
        const std::vector<T>& add = RecordsOf<T>(in->second);
        v.insert(v.end(), add.begin(), add.end());
      }
    }
  });
}

void SegmentedGpuChecks::Finish(Profile* run) {
  uint64_t unlinked = unlinked_ + records_.size(), without = without_, later = 0;
  for (const Pending& c : launches_) {
    ++(!run->info.complete && c.start_ns > gpu_end_ns_ ? later : without);
  }
  if (calls_seen_ != 0) run->counters.gpu_records_uncorrelated = unlinked;
  run->counters.gpu_records_before_launch = before_;
  run->counters.gpu_launches_without_records = without;
  if (!run->info.complete) run->info.incomplete_launches_in_flight = later;
}

}  // namespace gprof
