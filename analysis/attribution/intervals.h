// Time intervals [start, end) in ns: merging and covered time (launcher process only). Shared by
// stats (GPU busy per step), findings (busy shares, idle gaps) and diff (wall and GPU totals).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace gprof {

using Interval = std::pair<uint64_t, uint64_t>;  // [start, end)

// Sorted, disjoint, non-empty intervals covering the same time as `v`.
inline std::vector<Interval> MergeIntervals(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> merged;
  for (const Interval& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!merged.empty() && iv.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, iv.second);
    } else {
      merged.push_back(iv);
    }
  }
  return merged;
}

// Time of `merged` (MergeIntervals' output) inside [start, end).
inline uint64_t CoveredIn(const std::vector<Interval>& merged, uint64_t start, uint64_t end) {
  // First interval that ends after `start` (binary search: steps and gaps query one long list).
  auto it = std::upper_bound(merged.begin(), merged.end(), start,
                             [](uint64_t t, const Interval& iv) { return t < iv.second; });
  uint64_t covered = 0;
  for (; it != merged.end() && it->first < end; ++it) {
    covered += std::min(end, it->second) - std::max(start, it->first);
  }
  return covered;
}

// Length of the union of `v`.
inline uint64_t UnionNs(std::vector<Interval> v) {
  uint64_t total = 0;
  for (const Interval& iv : MergeIntervals(std::move(v))) total += iv.second - iv.first;
  return total;
}

}  // namespace gprof
