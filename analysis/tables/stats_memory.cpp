// memory_sum (see stats_memory.h).
#include "analysis/tables/stats_memory.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "analysis/attribution/correlation_index.h"
#include "analysis/attribution/gpu_attribution.h"
#include "analysis/attribution/names.h"
#include "analysis/timeline/memory_timeline.h"

namespace gprof {
namespace {

// For each query (thread, time): the innermost push/pop range (not a step) on that thread whose
// [start, end) holds the time, or -1.
std::vector<int64_t> InnermostRanges(const Profile& p,
                                     const std::vector<std::pair<uint32_t, uint64_t>>& queries) {
  std::vector<int64_t> out(queries.size(), -1);
  std::unordered_map<uint32_t, std::vector<uint32_t>> ranges, asked;  // by thread
  for (uint32_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    if (!(r.flags & kRangeStartEnd) && !IsStepRange(p, r)) ranges[r.tid].push_back(i);
  }
  for (uint32_t i = 0; i < queries.size(); ++i) asked[queries[i].first].push_back(i);
  for (auto& [tid, qs] : asked) {
    std::vector<uint32_t>& rs = ranges[tid];
    std::sort(rs.begin(), rs.end(), [&](uint32_t a, uint32_t b) {
      const HostRange &x = p.ranges[a], &y = p.ranges[b];
      return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;
    });
    std::stable_sort(qs.begin(), qs.end(), [&](uint32_t a, uint32_t b) {
      return queries[a].second < queries[b].second;
    });
    std::vector<uint32_t> open;  // ranges holding the sweep time, outermost first
    size_t next = 0;
    for (uint32_t q : qs) {
      const uint64_t t = queries[q].second;
      while (next < rs.size() && p.ranges[rs[next]].start_ns <= t) {
        while (!open.empty() && p.ranges[open.back()].end_ns <= p.ranges[rs[next]].start_ns) {
          open.pop_back();
        }
        open.push_back(rs[next++]);
      }
      while (!open.empty() && p.ranges[open.back()].end_ns <= t) open.pop_back();
      if (!open.empty()) out[q] = open.back();
    }
  }
  return out;
}

void AddToRow(MemoryOwnerRow* row, int64_t delta, bool alloc, uint64_t in_use) {
  const uint64_t bytes = static_cast<uint64_t>(delta < 0 ? -delta : delta);
  row->net_bytes = AddBytes(row->net_bytes, delta);
  if (alloc) {
    ++row->allocations;
    row->allocated_bytes = AddBytes(row->allocated_bytes, bytes);
    row->largest_bytes = std::max(row->largest_bytes, bytes);
    row->peak_in_use_bytes = std::max(row->peak_in_use_bytes, in_use);
  } else {
    ++row->frees;
  }
}

// torch's caching allocator blocks (Profile::torch_memory), owned as the table's columns own
// them: the innermost range on the event's thread at its time, else torch's "[memory]".
void AddTorchOwners(const Profile& p, std::map<std::string, MemoryOwnerRow>* rows) {
  const std::vector<TorchMemoryPoint> t = TorchAllocatedTimeline(p);
  std::vector<std::pair<uint32_t, uint64_t>> queries;
  for (const TorchMemoryPoint& e : t) {
    queries.emplace_back(p.torch_memory[e.event].tid, p.torch_memory[e.event].ts_ns);
  }
  const std::vector<int64_t> innermost = InnermostRanges(p, queries);
  for (size_t i = 0; i < t.size(); ++i) {
    const TorchMemoryEvent& e = p.torch_memory[t[i].event];
    const int64_t range = innermost[i];
    const std::string owner =
        range >= 0 ? std::string(p.strings.Get(p.ranges[static_cast<size_t>(range)].name))
                   : std::string(kTorchMemoryOwner);
    const int64_t bytes = static_cast<int64_t>(e.bytes);
    const bool alloc = e.action == TorchMemAction::kAlloc;
    AddToRow(&(*rows)[owner], alloc ? bytes : -bytes, alloc, t[i].allocated);
  }
}

}  // namespace

void AddMemoryOwners(const Profile& p, std::map<std::string, MemoryOwnerRow>* rows) {
  AddTorchOwners(p, rows);
  if (p.memory_ops.empty()) return;
  const CorrelationIndex corr(p);
  NameCache names(p);
  std::vector<std::pair<uint32_t, uint64_t>> calls;
  for (const ApiCall& c : p.api_calls) calls.emplace_back(c.tid, c.start_ns);
  const std::vector<int64_t> innermost = InnermostRanges(p, calls);
  for (const MemoryEvent& e : MemoryTimeline(p)) {
    const MemoryOp& m = p.memory_ops[e.op];
    // With torch's blocks counted, its segments would count twice (the table's rule).
    if (e.torch_segment) continue;
    std::string owner = "[unattributed]";
    if (const int64_t call = corr.ApiCall(m.correlation_id); call >= 0) {
      const int64_t range = innermost[static_cast<size_t>(call)];
      owner = range >= 0 ? std::string(p.strings.Get(p.ranges[static_cast<size_t>(range)].name))
                         : names.ApiCallName(p.api_calls[static_cast<size_t>(call)]);
    }
    AddToRow(&(*rows)[owner], e.delta, m.op == MemoryOpKind::kAlloc, e.in_use);
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
