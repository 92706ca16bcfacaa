// See gpu_checks.h.
#include "model/gpu_checks.h"

#include <algorithm>
#include <type_traits>
#include <unordered_set>

namespace gprof {

CallStarts::CallStarts(const std::vector<ApiCall>& calls) {
  uint32_t lo = UINT32_MAX, hi = 0;
  for (const ApiCall& c : calls) {
    lo = std::min(lo, c.correlation_id);
    hi = std::max(hi, c.correlation_id);
  }
  if (!calls.empty() && hi - lo < 4 * calls.size() + 4096) {
    base_ = lo;
    flat_.assign(static_cast<size_t>(hi - lo) + 1, kNone);
    for (const ApiCall& c : calls) {
      uint64_t& slot = flat_[c.correlation_id - lo];
      if (slot == kNone) slot = c.start_ns;  // the first call with an id, as emplace keeps
    }
  } else {
    sparse_.reserve(calls.size());
    for (const ApiCall& c : calls) sparse_.emplace(c.correlation_id, c.start_ns);
  }
}

bool CallStarts::Find(uint32_t id, uint64_t* start) const {
  if (id == 0) return false;
  if (!flat_.empty()) {
    if (id < base_ || id - base_ >= flat_.size() || flat_[id - base_] == kNone) return false;
    *start = flat_[id - base_];
    return true;
  }
  const auto it = sparse_.find(id);
  if (it == sparse_.end()) return false;
  *start = it->second;
  return true;
}

uint64_t CheckGpuAgainstCalls(Profile* p, uint64_t launches_until_ns) {
  const CallStarts starts(p->api_calls);
  uint64_t before = 0;
  CountAgainstCalls(p->kernels, 0, starts, nullptr, &before);
  CountAgainstCalls(p->memcpys, 0, starts, nullptr, &before);
  CountAgainstCalls(p->memsets, 0, starts, nullptr, &before);
  auto is_launch = [](const ApiCall& c) { return (c.flags & kApiCallLaunch) != 0; };
  // Launches whose work arrived: the record ids, over the calls' id range (dense, as above).
  uint32_t lo = UINT32_MAX, hi = 0;
  size_t launches = 0;
  for (const ApiCall& c : p->api_calls) {
    if (!is_launch(c)) continue;
    lo = std::min(lo, c.correlation_id);
    hi = std::max(hi, c.correlation_id);
    ++launches;
  }
  uint64_t without = 0, later = 0;
  auto count = [&](const ApiCall& c) { ++(c.start_ns > launches_until_ns ? later : without); };
  if (launches != 0 && hi - lo >= 4 * launches + 4096) {  // sparse ids: a set
    std::unordered_set<uint32_t> arrived;
    ForEachGpuKind(*p, [&](GpuKind, const auto& records) {
      using T = typename std::decay_t<decltype(records)>::value_type;
      if constexpr (kGpuRecordHasCorrelation<T>) {
        for (const T& r : records) arrived.insert(r.correlation_id);
      }
    });
    for (const ApiCall& c : p->api_calls) {
      if (is_launch(c) && arrived.count(c.correlation_id) == 0) count(c);
    }
  } else if (launches != 0) {
    std::vector<uint8_t> arrived(static_cast<size_t>(hi - lo) + 1, 0);
    ForEachGpuKind(*p, [&](GpuKind, const auto& records) {
      using T = typename std::decay_t<decltype(records)>::value_type;
      if constexpr (kGpuRecordHasCorrelation<T>) {
        for (const T& r : records) {
          if (r.correlation_id >= lo && r.correlation_id <= hi) arrived[r.correlation_id - lo] = 1;
        }
      }
    });
    for (const ApiCall& c : p->api_calls) {
      if (is_launch(c) && arrived[c.correlation_id - lo] == 0) count(c);
    }
  }
  p->counters.gpu_records_before_launch = before;
  p->counters.gpu_launches_without_records = without;
  return later;
}

void CountUncorrelated(Profile* p) {
  if (p->api_calls.empty()) return;
  const CallStarts starts(p->api_calls);
  uint64_t unlinked = 0;
  CountAgainstCalls(p->kernels, 0, starts, &unlinked, nullptr);
  CountAgainstCalls(p->memcpys, 0, starts, &unlinked, nullptr);
  CountAgainstCalls(p->memsets, 0, starts, &unlinked, nullptr);
  p->counters.gpu_records_uncorrelated = unlinked;
}

}  // namespace gprof
