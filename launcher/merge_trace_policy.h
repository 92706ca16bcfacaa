// What the merged trace holds when it would be too large to open (docs/LAUNCHER.md, "A merged
// trace past 1 GB"): Perfetto's UI fails near 1 GB of JSON, so past the budget the trace holds a
// summary per rank (its steps) and the slowest ranks in full, and the merged findings say what was
// left out and how to get it. Launcher process only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/ranks/merge.h"
#include "outputs/trace/merged_trace.h"

namespace gprof::launcher {

// Bytes of merged trace JSON per record merged, for the estimate: 42.9 GB for 98.2 M records of
// the mixed workload (bench figure 17d: 437), rounded up.
inline constexpr uint64_t kMergedTraceBytesPerEvent = 440;
// Ranks in full at most when the trace is reduced: the slowest, while they fit the budget.
inline constexpr size_t kMergedTraceSlowestInFull = 4;

struct MergedTraceChoice {
  bool full_trace = false;     // --full-trace: every rank in full, whatever the size
  std::vector<int32_t> ranks;  // --ranks: these ranks in full (and the summary of every rank)
  uint64_t budget_bytes = 0;   // the estimate past which the trace is reduced (kJsonTraceComfortBytes)
};

struct MergedTracePlan {
  MergedTraceContent content;   // for WriteMergedTrace
  uint64_t estimated_bytes = 0; // of the whole merged trace
  // Set when some input's events are left out: the stderr note (one line, ending in '\n') and
  // the merged finding "merged_trace_reduced" (severity info) saying the same.
  std::string note;
  std::optional<Finding> finding;
};

// The trace's content for `inputs` (sorted, clocks aligned): every input in full when
// full_trace, or when no ranks are chosen and the estimate (records x kMergedTraceBytesPerEvent)
// is within the budget; else the summary of every input and in full the chosen ranks, or the
// slowest inputs (InputsBySlowness), up to kMergedTraceSlowestInFull while their estimate fits the
// budget, and at least the slowest one.
MergedTracePlan PlanMergedTrace(const std::vector<MergeInput>& inputs,
                                const MergedTraceChoice& choice);

// "0,3,5-7" into ranks; false on anything else (a usage error).
bool ParseRankList(const std::string& text, std::vector<int32_t>* ranks);

}  // namespace gprof::launcher
