// Ops by Python source location (see op_stacks.h).
#include "analysis/tables/op_stacks.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "analysis/attribution/gpu_attribution.h"

namespace gprof {
namespace {

struct TimedStack {
  uint64_t ts;
  uint32_t stack;
};

}  // namespace

bool IsProgramFrame(std::string_view file) {
  return file.find("/site-packages/torch/") == std::string_view::npos &&
         file.find("/dist-packages/torch/") == std::string_view::npos &&
         file.find("/gprof_run_hook/") == std::string_view::npos;
}

std::vector<const PythonFrame*> ProgramFrames(const PythonSamples& s,
                                              const std::vector<uint32_t>& stack) {
  std::vector<const PythonFrame*> kept, all;
  for (size_t i = stack.size(); i-- > 0;) {
    if (stack[i] >= s.frames.size()) continue;  // the reader rejects these; hand-built sets
    const PythonFrame& f = s.frames[stack[i]];
    all.push_back(&f);
    if (IsProgramFrame(f.file)) kept.push_back(&f);
  }
  return kept.empty() ? all : kept;
}

std::string StackEntryText(const PythonFrame& f) {
  return f.file + "(" + std::to_string(f.line) + "): " + f.function;
}

RangeStacks StacksOfRanges(const Profile& p, const PythonSamples& s, uint32_t depth) {
  RangeStacks out;
  out.depth = std::max<uint32_t>(depth, 1);
  out.hz = s.hz;
  out.period_ns = s.period_ns;
  out.keys.push_back({kNotSampledKey});
  out.of_range.assign(p.ranges.size(), kNoStackKey);

  // Samples by Linux tid, in time order (a thread the sampler could not name, tid 0, has no
  // ranges of its own to match).
  std::unordered_map<uint32_t, std::vector<TimedStack>> by_tid;
  for (const PythonSample& sample : s.samples) {
    if (sample.thread >= s.threads.size() || s.threads[sample.thread].tid == 0) continue;
    by_tid[s.threads[sample.thread].tid].push_back({sample.ts_ns, sample.stack});
  }
  for (auto& [tid, list] : by_tid) {
    std::stable_sort(list.begin(), list.end(),
                     [](const TimedStack& a, const TimedStack& b) { return a.ts < b.ts; });
  }

  // A stack's key depends only on the stack: computed once per distinct stack.
  std::vector<uint32_t> key_of_stack(s.stacks.size(), kNoStackKey);
  std::map<std::vector<std::string>, uint32_t> key_index;
  key_index[out.keys[0]] = 0;
  const auto key_of = [&](uint32_t stack) -> uint32_t {
    if (stack >= s.stacks.size()) return 0;
    uint32_t& k = key_of_stack[stack];
    if (k != kNoStackKey) return k;
    std::vector<std::string> key;
    for (const PythonFrame* f : ProgramFrames(s, s.stacks[stack])) {
      if (key.size() == out.depth) break;
      key.push_back(StackEntryText(*f));
    }
    if (key.empty()) return k = 0;  // an empty stack says nothing
    auto [it, fresh] = key_index.emplace(key, static_cast<uint32_t>(out.keys.size()));
    if (fresh) out.keys.push_back(std::move(key));
    return k = it->second;
  };

  const uint64_t period = s.period_ns;
  for (uint32_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    if (IsStepRange(p, r)) continue;
    const auto it = by_tid.find(r.tid);
    if (it == by_tid.end()) continue;
    const std::vector<TimedStack>& list = it->second;
    ++out.grouped;
    const uint64_t start = r.start_ns, end = std::max(r.end_ns, r.start_ns);
    const auto first_at = [&](uint64_t v) {
      return std::lower_bound(list.begin(), list.end(), v,
                              [](const TimedStack& a, uint64_t t) { return a.ts < t; });
    };
    // Inside: the nearest to the middle; the distances fall, then rise, in time order.
    const uint64_t mid = start + (end - start) / 2;
    const TimedStack* best = nullptr;
    uint64_t best_distance = UINT64_MAX;
    for (auto at = first_at(start); at != list.end() && at->ts <= end; ++at) {
      const uint64_t d = at->ts < mid ? mid - at->ts : at->ts - mid;
      if (d < best_distance) {
        best = &*at;
        best_distance = d;
      }
    }
    if (best != nullptr) {
      ++out.inside;
      out.of_range[i] = key_of(best->stack);
      continue;
    }
    // Else the nearest to the start within one period (none is inside, so these lie before the
    // start or after the end).
    const uint64_t lo = start > period ? start - period : 0;
    for (auto at = first_at(lo); at != list.end() && at->ts <= start + period; ++at) {
      const uint64_t d = at->ts < start ? start - at->ts : at->ts - start;
      if (d < best_distance) {
        best = &*at;
        best_distance = d;
      }
    }
    if (best != nullptr) {
      ++out.near_start;
      out.of_range[i] = key_of(best->stack);
    } else {
      ++out.not_sampled;
      out.of_range[i] = 0;
    }
  }
  return out;
}

std::string RangeStacksNote(const RangeStacks& r) {
  char period[48];
  std::snprintf(period, sizeof period, "%.3g ms", static_cast<double>(r.period_ns) / 1e6);
  return "Grouped by Python source location (--group-by-stack " + std::to_string(r.depth) +
         "): SAMPLED at " + std::to_string(r.hz) + " Hz, not exact. Each range takes the Python "
         "stack sampled nearest its middle, else the nearest sample within one period (" +
         period + ") of its start; its innermost " + std::to_string(r.depth) +
         " frames of the program's own code (torch's and gprof-run's files left out). A range "
         "shorter than the period is found only when a sample falls in or near it: " +
         std::to_string(r.not_sampled) + " of " + std::to_string(r.grouped) +
         " ranges were not sampled (docs/PYTHON_SAMPLING.md).";
}

}  // namespace gprof
