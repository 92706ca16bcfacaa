// Merge (see merge.h): the survey of one input and the order of the inputs.
#include "analysis/ranks/merge.h"

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "analysis/ranks/merge_findings.h"
#include "analysis/timeline/trace_plan.h"

namespace gprof {
namespace {

uint64_t RecordCount(const Profile& p) {
  uint64_t n = p.ranges.size() + p.marks.size() + p.api_calls.size() + p.steps.size();
  ForEachGpuKind(p, [&](GpuKind, const auto& records) { n += records.size(); });
  return n;
}

}  // namespace

MergeInput SummarizeForMerge(const Profile& profile, std::string file) {
  MergeInput in;
  in.file = std::move(file);
  in.info = profile.info;
  in.origin_ns = TraceOriginNs(profile);
  in.events = RecordCount(profile);
  in.gpu = profile.HasGpuData();
  in.counters = profile.counters;
  in.rows = KeyAverages(profile);
  in.dist = SummarizeDistributed(profile);
  in.collectives = SurveyCollectives(profile);
  return in;
}

void SortMergeInputs(std::vector<MergeInput>* inputs) {
  const auto key = [](const MergeInput& m) {
    return std::make_tuple(m.info.rank < 0, m.info.rank, std::cref(m.info.hostname), m.info.pid,
                           std::cref(m.info.program), std::cref(m.file));
  };
  std::stable_sort(inputs->begin(), inputs->end(),
                   [&](const MergeInput& a, const MergeInput& b) { return key(a) < key(b); });
}

namespace {

std::vector<ClockInput> ClockInputs(const std::vector<MergeInput>& inputs) {
  std::vector<ClockInput> out;
  out.reserve(inputs.size());
  for (const MergeInput& in : inputs) out.push_back({&in.info, &in.collectives});
  return out;
}

std::vector<ClockAlignment> Alignments(const std::vector<MergeInput>& inputs) {
  std::vector<ClockAlignment> out;
  out.reserve(inputs.size());
  for (const MergeInput& in : inputs) out.push_back(in.clock);
  return out;
}

}  // namespace

void AlignMergeClocks(std::vector<MergeInput>* inputs) {
  const std::vector<ClockAlignment> al = AlignClocks(ClockInputs(*inputs));
  for (size_t i = 0; i < inputs->size(); ++i) (*inputs)[i].clock = al[i];
}

ClockSpread MergeClockSpread(const std::vector<MergeInput>& inputs) {
  return SpreadAfter(ClockInputs(inputs), Alignments(inputs));
}

std::string MergeInputLabel(const MergeInput& in) {
  const std::string where = "(" + in.info.hostname + ":" + std::to_string(in.info.pid) + ")";
  if (in.info.rank >= 0) return "rank " + std::to_string(in.info.rank) + " " + where;
  return in.info.program + " " + where;
}

uint64_t MergedOriginNs(const std::vector<MergeInput>& inputs) {
  uint64_t origin = UINT64_MAX;
  for (const MergeInput& in : inputs) {
    origin = std::min(origin, AlignedNs(in.origin_ns, in.clock.offset_ns));
  }
  return inputs.empty() ? 0 : origin;
}

std::string MergeInputsWithPythonSamples(const std::vector<MergeInput>& inputs) {
  std::string out;
  for (const MergeInput& in : inputs) {
    if (in.python_samples > 0) out += (out.empty() ? "" : ", ") + MergeInputLabel(in);
  }
  return out;
}

}  // namespace gprof
