// Python functions during GPU idle gaps (see python_gaps.h). Launcher process only; pure.
#include "analysis/samples/python_gaps.h"

#include <algorithm>
#include <string>

namespace gprof {

std::vector<GapFunction> PythonFunctionsInGaps(const PythonSamples& s, uint32_t tid,
                                               std::vector<std::pair<uint64_t, uint64_t>> gaps,
                                               size_t max) {
  std::sort(gaps.begin(), gaps.end());
  uint64_t total = 0;
  for (const auto& [start, end] : gaps) total += end - start;
  GapFunctionTally tally;
  for (const PythonSample& x : s.samples) {
    if (x.thread >= s.threads.size() || s.threads[x.thread].tid != tid || tid == 0) continue;
    if (x.stack >= s.stacks.size() || s.stacks[x.stack].empty()) continue;
    if (!InSortedGaps(gaps, x.ts_ns)) continue;
    const uint32_t leaf = s.stacks[x.stack].back();  // root first: the last frame ran
    if (leaf >= s.frames.size()) continue;
    const PythonFrame& f = s.frames[leaf];
    tally.Add(f.function, f.file + ":" + std::to_string(f.first_line), s.period_ns);
  }
  return tally.Ranked(total, max);
}

}  // namespace gprof
