// Blocking CUDA calls by the Python line that made them (see python_sync.h).
#include "analysis/samples/python_sync.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "analysis/attribution/names.h"
#include "analysis/findings/findings_analysis.h"
#include "analysis/tables/op_stacks.h"
#include "model/api_name.h"

namespace gprof {
namespace {

std::string FrameText(const PythonFrame& f) {
  return f.function + " (" + f.file + ":" + std::to_string(f.line) + ")";
}

}  // namespace

namespace {

// Most blocked time first, then most calls, then by text.
void SortLines(std::vector<PythonSyncLine>* lines) {
  std::sort(lines->begin(), lines->end(), [](const PythonSyncLine& a, const PythonSyncLine& b) {
    if (a.blocked_ns != b.blocked_ns) return a.blocked_ns > b.blocked_ns;
    if (a.calls != b.calls) return a.calls > b.calls;
    return a.where < b.where;
  });
}

}  // namespace

void AddPythonSyncs(const PythonSyncs& from, PythonSyncs* into) {
  into->calls += from.calls;
  into->blocked_ns += from.blocked_ns;
  into->not_sampled += from.not_sampled;
  std::unordered_map<std::string, size_t> at;
  for (size_t i = 0; i < into->lines.size(); ++i) at.emplace(into->lines[i].where, i);
  for (const PythonSyncLine& line : from.lines) {
    const auto [it, fresh] = at.emplace(line.where, into->lines.size());
    if (fresh) {
      into->lines.push_back(line);
    } else {
      into->lines[it->second].calls += line.calls;
      into->lines[it->second].blocked_ns += line.blocked_ns;
    }
  }
  SortLines(&into->lines);
  into->call_lines.clear();
  into->call_stacks.clear();
}

PythonSyncs SyncsByPythonLine(const Profile& p, const PythonSamples& s, uint64_t from_ns,
                              uint64_t to_ns) {
  PythonSyncs out;
  // Samples by Linux tid, in time order.
  std::unordered_map<uint32_t, std::vector<const PythonSample*>> by_tid;
  for (const PythonSample& sample : s.samples) {
    if (sample.thread >= s.threads.size() || s.threads[sample.thread].tid == 0) continue;
    by_tid[s.threads[sample.thread].tid].push_back(&sample);
  }
  for (auto& [tid, list] : by_tid) {
    std::stable_sort(list.begin(), list.end(), [](const PythonSample* a, const PythonSample* b) {
      return a->ts_ns < b->ts_ns;
    });
  }
  NameCache names(p);
  std::map<std::string, PythonSyncLine> rows;
  std::vector<std::pair<uint32_t, std::string>> attributed;  // call index, where
  const uint64_t period = s.period_ns;
  for (uint32_t index = 0; index < p.api_calls.size(); ++index) {
    const ApiCall& call = p.api_calls[index];
    if (call.start_ns < from_ns || call.start_ns >= to_ns) continue;
    const std::string_view base = BaseApiName(names.ApiCallName(call));
    if (!findings_internal::IsSyncApi(base) && !findings_internal::IsSyncCopyApi(base)) continue;
    const auto it = by_tid.find(call.tid);
    if (it == by_tid.end()) continue;  // a thread the sampler never saw (not Python's)
    const uint64_t blocked = call.end_ns > call.start_ns ? call.end_ns - call.start_ns : 0;
    ++out.calls;
    out.blocked_ns += blocked;
    // The candidates: samples in [start - period, end + period]; inside the call beats outside,
    // then the nearest to the call.
    const std::vector<const PythonSample*>& list = it->second;
    const uint64_t lo = call.start_ns > period ? call.start_ns - period : 0;
    auto at = std::lower_bound(list.begin(), list.end(), lo,
                               [](const PythonSample* a, uint64_t v) { return a->ts_ns < v; });
    const PythonSample* best = nullptr;
    uint64_t best_distance = UINT64_MAX;
    for (; at != list.end() && (*at)->ts_ns <= call.end_ns + period; ++at) {
      const uint64_t ts = (*at)->ts_ns;
      const uint64_t distance = ts < call.start_ns ? call.start_ns - ts
                                : ts > call.end_ns ? ts - call.end_ns
                                                   : 0;
      if (distance < best_distance) {
        best = *at;
        best_distance = distance;
      }
    }
    const std::vector<const PythonFrame*> frames =
        best == nullptr || best->stack >= s.stacks.size()
            ? std::vector<const PythonFrame*>()
            : ProgramFrames(s, s.stacks[best->stack]);
    if (frames.empty()) {
      ++out.not_sampled;
      continue;
    }
    const std::string where = FrameText(*frames.front());
    PythonSyncLine& row = rows[where];
    row.where = where;
    ++row.calls;
    row.blocked_ns += blocked;
    attributed.emplace_back(index, where);
    out.call_stacks.emplace_back(index, best->stack);
  }
  for (auto& [where, row] : rows) out.lines.push_back(std::move(row));
  SortLines(&out.lines);
  std::unordered_map<std::string, uint32_t> line_index;
  for (uint32_t i = 0; i < out.lines.size(); ++i) line_index[out.lines[i].where] = i;
  out.call_lines.reserve(attributed.size());
  for (const auto& [index, where] : attributed) {
    out.call_lines.emplace_back(index, line_index.at(where));
  }
  return out;
}

std::string FormatPythonSyncs(const PythonSyncs& syncs) {
  std::string out =
      "Blocking CUDA calls (synchronize, copies without Async) by the Python line that made "
      "them, from the sampled stacks (docs/PYTHON_SAMPLING.md)\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%llu calls, %.3f ms blocked; %llu not sampled (no sample within "
                "one period)\n\n",
                static_cast<unsigned long long>(syncs.calls),
                static_cast<double>(syncs.blocked_ns) / 1e6,
                static_cast<unsigned long long>(syncs.not_sampled));
  out += buf;
  out += "   Calls   Blocked ms   Share  Python line\n";
  for (const PythonSyncLine& l : syncs.lines) {
    const double share = syncs.blocked_ns == 0
                             ? 0.0
                             : 100.0 * static_cast<double>(l.blocked_ns) /
                                   static_cast<double>(syncs.blocked_ns);
    std::snprintf(buf, sizeof buf, "%8llu %12.3f %6.1f%%  ", static_cast<unsigned long long>(l.calls),
                  static_cast<double>(l.blocked_ns) / 1e6, share);
    out += buf + l.where + "\n";
  }
  return out;
}

}  // namespace gprof
