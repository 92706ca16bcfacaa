// --cpu-sampling's samples, named and summed (cpu_samples.h). Launcher process only.
#include "analysis/samples/cpu_samples.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "analysis/samples/native_symbols.h"
#include "text/format.h"

namespace gprof {

CpuSampleNames NameCpuSamples(const Profile& p) {
  CpuSampleNames names;
  if (p.cpu_samples.empty()) return names;
  std::vector<bool> used(p.stacks.size(), false);
  for (const CpuSample& s : p.cpu_samples) used[s.stack] = true;
  names.function.resize(p.stacks.size());
  names.location.resize(p.stacks.size());
  names.frames_outermost_first.resize(p.stacks.size());
  NativeSymbolizer symbols(p);
  for (size_t i = 0; i < p.stacks.size(); ++i) {
    if (!used[i]) continue;
    const NativeStack& st = p.stacks[i];
    for (uint32_t d = 0; d < st.depth; ++d) {
      auto [function, where] = symbols.Describe(p.stack_pcs[st.first_pc + d]);
      if (d == 0) {
        names.function[i] = function;
        names.location[i] = where;
      }
      names.frames_outermost_first[i].push_back(std::move(function));
    }
    std::reverse(names.frames_outermost_first[i].begin(), names.frames_outermost_first[i].end());
  }
  return names;
}

namespace {

std::string Named(const std::string& function, const std::string& location) {
  return location.empty() ? function : function + " (" + location + ")";
}

}  // namespace

void GapFunctionTally::Add(const std::string& function, const std::string& location,
                           uint64_t ns) {
  auto& [n, total] = counts_[{function, location}];
  ++n;
  total += ns;
}

std::vector<GapFunction> GapFunctionTally::Ranked(uint64_t cap_ns, size_t max) const {
  std::vector<GapFunction> out;
  for (const auto& [key, c] : counts_) {
    out.push_back({key.first, key.second, c.first, std::min(c.second, cap_ns)});
  }
  std::stable_sort(out.begin(), out.end(), [](const GapFunction& a, const GapFunction& b) {
    return a.samples > b.samples;
  });
  if (out.size() > max) out.resize(max);
  return out;
}

bool InSortedGaps(const std::vector<std::pair<uint64_t, uint64_t>>& gaps, uint64_t t) {
  // The last gap starting at or before t: t is in it if before its end.
  auto it = std::upper_bound(gaps.begin(), gaps.end(), t,
                             [](uint64_t x, const auto& g) { return x < g.first; });
  return it != gaps.begin() && t < std::prev(it)->second;
}

std::vector<GapFunction> FunctionsDuring(const Profile& p, const CpuSampleNames& names,
                                         uint64_t start, uint64_t end, size_t max) {
  GapFunctionTally tally;
  for (const CpuSample& s : p.cpu_samples) {
    if (s.time_ns < start || s.time_ns >= end || s.stack >= names.function.size()) continue;
    tally.Add(names.function[s.stack], names.location[s.stack], s.cpu_ns);
  }
  return tally.Ranked(end - start, max);
}

std::vector<GapFunction> FunctionsInGaps(const Profile& p, const CpuSampleNames& names,
                                         std::vector<std::pair<uint64_t, uint64_t>> gaps,
                                         size_t max) {
  std::sort(gaps.begin(), gaps.end());
  uint64_t total = 0;
  for (const auto& [start, end] : gaps) total += end - start;
  GapFunctionTally tally;
  for (const CpuSample& s : p.cpu_samples) {
    if (s.stack >= names.function.size() || !InSortedGaps(gaps, s.time_ns)) continue;
    tally.Add(names.function[s.stack], names.location[s.stack], s.cpu_ns);
  }
  return tally.Ranked(total, max);
}

std::string DescribeGapFunction(const GapFunction& f, uint64_t gap_ns) {
  return "the host spent " + FormatDuration(f.ns) + " of the " + FormatDuration(gap_ns) +
         " gap in " + Named(f.function, f.location) + ", sampled (" + std::to_string(f.samples) +
         (f.samples == 1 ? " sample)" : " samples)");
}

std::string DescribeGapsFunction(const GapFunction& f, uint64_t idle_ns) {
  return "the host spent " + FormatDuration(f.ns) + " of the " + FormatDuration(idle_ns) +
         " idle in " + Named(f.function, f.location) + ", sampled (" +
         std::to_string(f.samples) + (f.samples == 1 ? " sample)" : " samples)");
}

std::string NamedFunction(const GapFunction& f) { return Named(f.function, f.location); }

std::string FormatCpuSampleSum(const Profile& p, const CpuSampleNames& names) {
  struct Row {
    uint64_t self = 0;
    uint64_t total = 0;
    uint64_t self_ns = 0;
  };
  std::map<std::string, Row> rows;
  for (const CpuSample& s : p.cpu_samples) {
    if (s.stack >= names.function.size()) continue;
    Row& own = rows[Named(names.function[s.stack], names.location[s.stack])];
    ++own.self;
    own.self_ns += s.cpu_ns;
    std::set<std::string> seen;  // a recursive function counts once per sample
    for (const std::string& f : names.frames_outermost_first[s.stack]) {
      if (seen.insert(f).second) ++rows[f].total;
    }
  }
  // A frame's total is by function name; its self row carries the location: join them by name.
  std::vector<std::pair<std::string, Row>> ranked;
  for (const auto& [name, row] : rows) {
    if (row.self == 0) continue;
    Row r = row;
    const size_t paren = name.find(" (");
    if (paren != std::string::npos) {
      auto it = rows.find(name.substr(0, paren));
      if (it != rows.end()) r.total = it->second.total;
    }
    r.total = std::max(r.total, r.self);
    ranked.emplace_back(name, r);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second.self > b.second.self; });
  const uint64_t all = p.cpu_samples.size();
  std::string out = "Time (%)  Self Samples  Est. Time (ns)  Total Samples  Name\n";
  out += "--------  ------------  --------------  -------------  ----\n";
  for (const auto& [name, r] : ranked) {
    char line[128];
    std::snprintf(line, sizeof line, "%8.1f  %12llu  %14llu  %13llu  ",
                  all == 0 ? 0.0 : 100.0 * static_cast<double>(r.self) / static_cast<double>(all),
                  static_cast<unsigned long long>(r.self),
                  static_cast<unsigned long long>(r.self_ns),
                  static_cast<unsigned long long>(r.total));
    out += line + name + "\n";
  }
  const CpuSampleCounters& c = p.cpu_sample_counters;
  out += "\n" + std::to_string(all) + " samples at " + std::to_string(c.hz) + " Hz (" +
         CpuSampleBackendName(c.backend) + "), " + std::to_string(c.dropped) + " dropped\n";
  return out;
}

std::string CpuSampleBackendName(uint32_t backend) {
  switch (backend) {
    case kCpuSamplesPerfProcess: return "perf_event_open, sampler process";
    case kCpuSamplesPerf: return "perf_event_open, in process";
    case kCpuSamplesTimer: return "ITIMER_PROF, in process";
    default: return "no backend";
  }
}

std::string FoldedCpuStacks(const Profile& p, const CpuSampleNames& names) {
  std::map<std::string, uint64_t> folded;
  AddFoldedCpuStacks(p, names, &folded);
  return FormatFoldedCpuStacks(folded);
}

void AddFoldedCpuStacks(const Profile& p, const CpuSampleNames& names,
                        std::map<std::string, uint64_t>* folded) {
  for (const CpuSample& s : p.cpu_samples) {
    if (s.stack >= names.frames_outermost_first.size()) continue;
    std::string key = "thread " + std::to_string(s.tid);
    for (const std::string& f : names.frames_outermost_first[s.stack]) {
      std::string frame = f;
      std::replace(frame.begin(), frame.end(), ';', ':');  // ';' separates frames
      key += ";" + frame;
    }
    ++(*folded)[key];
  }
}

std::string FormatFoldedCpuStacks(const std::map<std::string, uint64_t>& folded) {
  std::string out;
  for (const auto& [stack, n] : folded) out += stack + " " + std::to_string(n) + "\n";
  return out;
}

}  // namespace gprof
