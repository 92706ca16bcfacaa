// Python functions during GPU idle gaps (see python_gaps.h). Launcher process only; pure.
#include "analysis/samples/python_gaps.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>

namespace gprof {

std::vector<GapFunction> PythonFunctionsInGaps(const PythonSamples& s, uint32_t tid,
                                               std::vector<std::pair<uint64_t, uint64_t>> gaps,
                                               size_t max) {
  std::sort(gaps.begin(), gaps.end());
  uint64_t total = 0;
  for (const auto& [start, end] : gaps) total += end - start;
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  for (const PythonSample& x : s.samples) {
    if (x.thread >= s.threads.size() || s.threads[x.thread].tid != tid || tid == 0) continue;
    if (x.stack >= s.stacks.size() || s.stacks[x.stack].empty()) continue;
    auto it = std::upper_bound(gaps.begin(), gaps.end(), x.ts_ns,
                               [](uint64_t t, const auto& g) { return t < g.first; });
    if (it == gaps.begin() || x.ts_ns >= std::prev(it)->second) continue;
    const uint32_t leaf = s.stacks[x.stack].back();  // root first: the last frame ran
    if (leaf >= s.frames.size()) continue;
    const PythonFrame& f = s.frames[leaf];
    ++counts[{f.function, f.file + ":" + std::to_string(f.first_line)}];
  }
  std::vector<GapFunction> out;
  for (const auto& [key, n] : counts) {
    out.push_back({key.first, key.second, n, std::min(n * s.period_ns, total)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GapFunction& a, const GapFunction& b) {
                     return a.samples > b.samples;
                   });
  if (out.size() > max) out.resize(max);
  return out;
}

}  // namespace gprof
