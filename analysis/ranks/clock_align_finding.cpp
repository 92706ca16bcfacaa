// The clock_alignment finding of the merged view (see merge_findings.h; rule in docs/FINDINGS.md,
// "Distributed findings"): the clock offsets AlignMergeClocks applied and what they left. Launcher
// process only. Pure.
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/findings/findings_analysis.h"
#include "analysis/ranks/merge_findings.h"
#include "text/format.h"

namespace gprof {
namespace {

using findings_internal::Count;
using findings_internal::Duration;
using findings_internal::Text;

uint64_t Magnitude(int64_t v) {
  return v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
}

std::string Signed(int64_t ns) { return (ns < 0 ? "-" : "+") + FormatDuration(Magnitude(ns)); }

// "rank 1 (node2:12) +2.000s (collectives: 24 instances, residual 41us)".
std::string Describe(const MergeInput& in) {
  const ClockAlignment& c = in.clock;
  std::string s = MergeInputLabel(in) + " " + Signed(c.offset_ns) + " (" +
                  std::string(ClockMethodName(c.method));
  if (c.method == ClockMethod::kCollectives) {
    s += ": " + std::to_string(c.instances) + " instances, residual " +
         FormatDuration(c.residual_ns);
  }
  return s + ")";
}

}  // namespace

void ClockAlignmentFinding(const std::vector<MergeInput>& inputs, std::vector<Finding>* out) {
  if (inputs.size() < 2) return;
  uint64_t largest = 0;
  size_t at = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Magnitude(inputs[i].clock.offset_ns) > largest) {
      largest = Magnitude(inputs[i].clock.offset_ns);
      at = i;
    }
  }
  if (largest < kClockOffsetReportNs) return;
  const ClockSpread spread = MergeClockSpread(inputs);
  std::string offsets;
  size_t collectives = 0, pairs = 0, none = 0;
  for (size_t i = 1; i < inputs.size(); ++i) {
    offsets += (offsets.empty() ? "" : "; ") + Describe(inputs[i]);
    const ClockMethod m = inputs[i].clock.method;
    collectives += m == ClockMethod::kCollectives ? 1 : 0;
    pairs += m == ClockMethod::kClockPairs ? 1 : 0;
    none += m == ClockMethod::kNone ? 1 : 0;
  }
  Finding f;
  f.id = "clock_alignment";
  f.severity = Severity::kInfo;
  f.evidence.push_back(Text("reference", MergeInputLabel(inputs[0])));
  f.evidence.push_back(Duration("max_offset_us", largest));
  f.evidence.push_back(Text("max_offset_at", MergeInputLabel(inputs[at])));
  f.evidence.push_back(Count("by_collectives", collectives));
  f.evidence.push_back(Count("by_clock_pairs", pairs));
  f.evidence.push_back(Count("not_aligned", none));
  f.evidence.push_back(Text("offsets", offsets));
  if (spread.instances > 0) {
    f.evidence.push_back(Text("spread_collective", spread.name));
    f.evidence.push_back(Count("spread_instances", spread.instances));
    f.evidence.push_back(Duration("spread_median_us", spread.median_ns));
    f.evidence.push_back(Duration("spread_max_us", spread.max_ns));
  }
  f.title = "Clocks: " + MergeInputLabel(inputs[at]) + "'s clock is " +
            Signed(inputs[at].clock.offset_ns) + " off " + MergeInputLabel(inputs[0]) +
            "'s; the merged view lines the ranks up";
  if (spread.instances > 0) {
    f.title += " (" + spread.name + " then ends within " + FormatDuration(spread.median_ns) +
               " across ranks, median of " + std::to_string(spread.instances) + ")";
  }
  f.advice =
      "The merged trace, table and findings place every rank on the first rank's clock by these "
      "offsets; each rank's own files keep its own clock. Offsets of milliseconds or more mean "
      "the hosts' clocks are not synchronized: check NTP/PTP (chronyc tracking, timedatectl). "
      "Ranks lined up by no method (not_aligned) keep their recorded times.";
  out->push_back(std::move(f));
}

}  // namespace gprof
