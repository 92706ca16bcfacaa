// memory_sum (see stats_memory.h).
#include "exporters/stats_memory.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "exporters/correlation_index.h"
#include "exporters/gpu_attribution.h"
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
  std::vector<uint32_t> order(p.memory_ops.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return p.memory_ops[a].ts_ns < p.memory_ops[b].ts_ns;
  });
  std::unordered_map<uint64_t, uint64_t> live;  // (device << 56 ^ address) -> bytes
  uint64_t device_in_use = 0;
  for (uint32_t i : order) {
    const MemoryOp& m = p.memory_ops[i];
    const uint64_t key = static_cast<uint64_t>(m.device_id) << 56 ^ m.address;
    uint64_t bytes = m.bytes;
    if (m.op == MemoryOpKind::kAlloc) {
      live[key] = m.bytes;
    } else if (auto it = live.find(key); it != live.end()) {
      bytes = it->second;
      live.erase(it);
    }
    if (m.mem_kind != MemKind::kPinned) {
      device_in_use = m.op == MemoryOpKind::kAlloc ? device_in_use + bytes
                                                   : device_in_use - std::min(device_in_use, bytes);
    }
    std::string owner = "[unattributed]";
    if (const int64_t call = corr.ApiCall(m.correlation_id); call >= 0) {
      const int64_t range = innermost[static_cast<size_t>(call)];
      owner = range >= 0 ? std::string(p.strings.Get(p.ranges[static_cast<size_t>(range)].name))
                         : names.ApiCallName(p.api_calls[static_cast<size_t>(call)]);
    }
    MemoryOwnerRow& row = (*rows)[owner];
    if (m.op == MemoryOpKind::kAlloc) {
      ++row.allocations;
      row.allocated_bytes += bytes;
      row.net_bytes += static_cast<int64_t>(bytes);
      row.largest_bytes = std::max(row.largest_bytes, bytes);
      row.peak_in_use_bytes = std::max(row.peak_in_use_bytes, device_in_use);
    } else {
      ++row.frees;
      row.net_bytes -= static_cast<int64_t>(bytes);
    }
  }
}

MemoryPeaks DeviceMemoryPeaks(const Profile& p,
                              const std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>& steps) {
  MemoryPeaks out;
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < p.memory_ops.size(); ++i) {
    if (p.memory_ops[i].mem_kind != MemKind::kPinned) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return p.memory_ops[a].ts_ns < p.memory_ops[b].ts_ns;
  });
  std::vector<std::pair<uint64_t, uint64_t>> points;  // (ts, in use after it)
  std::unordered_map<uint64_t, uint64_t> live;
  uint64_t in_use = 0;
  for (uint32_t i : order) {
    const MemoryOp& m = p.memory_ops[i];
    const uint64_t key = static_cast<uint64_t>(m.device_id) << 56 ^ m.address;
    if (m.op == MemoryOpKind::kAlloc) {
      live[key] = m.bytes;
      in_use += m.bytes;
    } else if (auto it = live.find(key); it != live.end()) {
      in_use -= std::min(in_use, it->second);
      live.erase(it);
    }
    points.emplace_back(m.ts_ns, in_use);
    if (in_use > out.peak_bytes) {
      out.peak_bytes = in_use;
      out.peak_ns = m.ts_ns;
    }
  }
  for (const auto& [number, start, end] : steps) {
    auto it = std::upper_bound(points.begin(), points.end(), std::make_pair(start, UINT64_MAX));
    uint64_t peak = it == points.begin() ? 0 : std::prev(it)->second;  // in use at the start
    for (; it != points.end() && it->first < end; ++it) peak = std::max(peak, it->second);
    out.steps.push_back({number, peak});
  }
  return out;
}

}  // namespace gprof
