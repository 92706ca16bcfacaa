// memory_sum (see stats_memory.h).
#include "exporters/stats_memory.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "exporters/correlation_index.h"
#include "exporters/gpu_attribution.h"
#include "exporters/memory_timeline.h"
#include "exporters/names.h"

namespace gprof {
namespace {

// For each API call (index into api_calls): the innermost push/pop range (not a step) on its
// thread whose [start, end) holds the call's start, or -1.
std::vector<int64_t> InnermostRanges(const Profile& p) {
  std::vector<int64_t> out(p.api_calls.size(), -1);
  std::unordered_map<uint32_t, std::vector<uint32_t>> ranges, calls;  // by thread
  for (uint32_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    if (!(r.flags & kRangeStartEnd) && !IsStepRange(p, r)) ranges[r.tid].push_back(i);
  }
  for (uint32_t i = 0; i < p.api_calls.size(); ++i) calls[p.api_calls[i].tid].push_back(i);
  for (auto& [tid, cs] : calls) {
    std::vector<uint32_t>& rs = ranges[tid];
    std::sort(rs.begin(), rs.end(), [&](uint32_t a, uint32_t b) {
      const HostRange &x = p.ranges[a], &y = p.ranges[b];
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;
    });
    std::sort(cs.begin(), cs.end(), [&](uint32_t a, uint32_t b) {
      return p.api_calls[a].start_ns < p.api_calls[b].start_ns;
    });
    std::vector<uint32_t> open;  // ranges holding the sweep time, outermost first
    size_t next = 0;
    for (uint32_t c : cs) {
      const uint64_t t = p.api_calls[c].start_ns;
      while (next < rs.size() && p.ranges[rs[next]].start_ns <= t) {
        while (!open.empty() && p.ranges[open.back()].end_ns <= p.ranges[rs[next]].start_ns) {
          open.pop_back();
        }
        open.push_back(rs[next++]);
      }
      while (!open.empty() && p.ranges[open.back()].end_ns <= t) open.pop_back();
      if (!open.empty()) out[c] = open.back();
    }
  }
  return out;
}

}  // namespace

void AddMemoryOwners(const Profile& p, std::map<std::string, MemoryOwnerRow>* rows) {
  if (p.memory_ops.empty()) return;
  const CorrelationIndex corr(p);
  NameCache names(p);
  const std::vector<int64_t> innermost = InnermostRanges(p);
  for (const MemoryEvent& e : MemoryTimeline(p)) {
    const MemoryOp& m = p.memory_ops[e.op];
    std::string owner = "[unattributed]";
    if (const int64_t call = corr.ApiCall(m.correlation_id); call >= 0) {
      const int64_t range = innermost[static_cast<size_t>(call)];
      owner = range >= 0 ? std::string(p.strings.Get(p.ranges[static_cast<size_t>(range)].name))
                         : names.ApiCallName(p.api_calls[static_cast<size_t>(call)]);
    }
    MemoryOwnerRow& row = (*rows)[owner];
    const uint64_t bytes = static_cast<uint64_t>(e.delta < 0 ? -e.delta : e.delta);
    row.net_bytes = AddBytes(row.net_bytes, e.delta);
    if (m.op == MemoryOpKind::kAlloc) {
      ++row.allocations;
      row.allocated_bytes = AddBytes(row.allocated_bytes, bytes);
      row.largest_bytes = std::max(row.largest_bytes, bytes);
      row.peak_in_use_bytes = std::max(row.peak_in_use_bytes, e.in_use);
    } else {
      ++row.frees;
    }
  }
}

MemoryPeaks DeviceMemoryPeaks(const Profile& p,
                              const std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>& steps) {
  MemoryPeaks out;
  const std::vector<MemoryEvent> t = MemoryTimeline(p);
  if (const int64_t at = MemoryPeakEvent(t); at >= 0) {
    out.peak_bytes = t[static_cast<size_t>(at)].in_use;
    out.peak_ns = p.memory_ops[t[static_cast<size_t>(at)].op].ts_ns;
  }
  const auto ts = [&](const MemoryEvent& e) { return p.memory_ops[e.op].ts_ns; };
  for (const auto& [number, start, end] : steps) {
    auto it = std::lower_bound(t.begin(), t.end(), start,
                               [&](const MemoryEvent& e, uint64_t v) { return ts(e) < v; });
    uint64_t peak = it == t.begin() ? 0 : std::prev(it)->in_use;  // in use at the start
    for (; it != t.end() && ts(*it) < end; ++it) peak = std::max(peak, it->in_use);
    out.steps.push_back({number, peak});
  }
  return out;
}

}  // namespace gprof
