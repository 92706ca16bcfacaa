// The step-time breakdown (step_breakdown.h). Each category's intervals are merged, and the union
// of the first k categories is kept: a slice is what the union of its category and the ones
// before it covers in the step, less what the union before it covers, so a moment belongs to the
// first category running then (TensorBoard's subtraction order).
#include "analysis/tables/step_breakdown.h"

#include <array>
#include <string>
#include <utility>

#include "analysis/attribution/gpu_attribution.h"
#include "analysis/attribution/intervals.h"

namespace gprof {
namespace {

constexpr size_t kClaimed = std::size(kStepSliceNames) - 1;  // every slice but Other

bool IsDataLoaderRange(std::string_view name) {
  return (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__")) ||
         name.starts_with("enumerate(DataPipe)#");
}

}  // namespace

std::vector<uint64_t> StepSlices(const StepBreakdown& b) {
  return {b.kernel_ns,     b.memcpy_ns,   b.memset_ns, b.runtime_ns,
          b.dataloader_ns, b.cpu_exec_ns, b.other_ns};
}

std::vector<StepBreakdown> StepBreakdowns(const Profile& p) {
  StatsCollector stats;
  stats.Add(p);
  const std::vector<StepRow> steps = stats.Steps();
  if (steps.empty()) return {};
  std::array<std::vector<Interval>, kClaimed> role;
  for (const Kernel& k : p.kernels) role[0].emplace_back(k.start_ns, k.end_ns);
  for (const Memcpy& m : p.memcpys) role[1].emplace_back(m.start_ns, m.end_ns);
  for (const Memset& m : p.memsets) role[2].emplace_back(m.start_ns, m.end_ns);
  for (const ApiCall& c : p.api_calls) role[3].emplace_back(c.start_ns, c.end_ns);
  for (const HostRange& r : p.ranges) {
    if (IsStepRange(p, r)) continue;
    role[IsDataLoaderRange(p.strings.Get(r.name)) ? 4 : 5].emplace_back(r.start_ns, r.end_ns);
  }
  // upto[k]: the union of categories 0..k.
  std::array<std::vector<Interval>, kClaimed> upto;
  std::vector<Interval> acc;
  for (size_t k = 0; k < kClaimed; ++k) {
    acc.insert(acc.end(), role[k].begin(), role[k].end());
    acc = MergeIntervals(std::move(acc));
    upto[k] = acc;
  }
  std::vector<StepBreakdown> out;
  for (const StepRow& s : steps) {
    StepBreakdown b;
    b.pid = s.pid;
    b.number = s.number;
    b.start_ns = s.start_ns;
    b.wall_ns = s.wall_ns;
    const uint64_t end = s.start_ns + s.wall_ns;
    uint64_t before = 0;
    std::array<uint64_t, kClaimed> slice{};
    for (size_t k = 0; k < kClaimed; ++k) {
      const uint64_t covered = CoveredIn(upto[k], s.start_ns, end);
      slice[k] = covered - before;
      before = covered;
    }
    b.kernel_ns = slice[0];
    b.memcpy_ns = slice[1];
    b.memset_ns = slice[2];
    b.runtime_ns = slice[3];
    b.dataloader_ns = slice[4];
    b.cpu_exec_ns = slice[5];
    b.other_ns = s.wall_ns - before;
    out.push_back(b);
  }
  return out;
}

StatsTable StepBreakdownTable(const std::vector<StepBreakdown>& steps) {
  StatsTable t;
  t.name = std::string(kStepBreakdownReportName);
  t.title = "Step Time Breakdown";
  t.columns = {{"Step", StatsColumn::kInt}, {"PID", StatsColumn::kInt},
               {"Wall Time (ns)", StatsColumn::kInt}};
  for (std::string_view name : kStepSliceNames) {
    t.columns.push_back({std::string(name) + " (ns)", StatsColumn::kInt});
  }
  for (const StepBreakdown& b : steps) {
    std::vector<StatsCell> row = {uint64_t{b.number}, uint64_t{b.pid}, b.wall_ns};
    for (uint64_t v : StepSlices(b)) row.emplace_back(v);
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace gprof
