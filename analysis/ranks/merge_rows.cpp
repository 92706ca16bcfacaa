// The rows across inputs (see merge.h): per KeyAverages row, Calls, Self CUDA, Self CPU and CPU
// total as min / median / max across the inputs, and where the max is. Built from the per-input
// row vectors the survey kept; never from the profiles.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/ranks/merge.h"
#include "analysis/tables/stats.h"

namespace gprof {

AcrossInputs SummarizeAcross(std::vector<uint64_t> values) {
  AcrossInputs a;
  for (size_t k = 1; k < values.size(); ++k) {
    if (values[k] > values[a.max_input]) a.max_input = k;
  }
  const SampleSummary s = SummarizeSamples(&values);
  a.min = s.min;
  a.median = s.median;
  a.max = s.max;
  return a;
}

std::vector<MergedRow> MergeRows(const std::vector<MergeInput>& inputs) {
  const size_t n = inputs.size();
  // (name, device) -> each input's row, or null.
  std::map<std::pair<std::string, bool>, std::vector<const EventStats*>> by_key;
  for (size_t k = 0; k < n; ++k) {
    for (const EventStats& e : inputs[k].rows) {
      std::vector<const EventStats*>& v = by_key[{e.name, e.device}];
      v.resize(n, nullptr);
      v[k] = &e;
    }
  }
  bool gpu = false;
  for (const MergeInput& in : inputs) gpu = gpu || in.gpu;
  std::vector<MergedRow> rows;
  rows.reserve(by_key.size());
  for (const auto& entry : by_key) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in the lambda.
    const auto& key = entry.first;
    const auto& per_input = entry.second;
    MergedRow r;
    r.name = key.first;
    r.device = key.second;
    const auto values = [&](uint64_t EventStats::*field) {
      std::vector<uint64_t> v(n, 0);
      for (size_t k = 0; k < n; ++k) {
        if (per_input[k] != nullptr) v[k] = per_input[k]->*field;
      }
      return v;
    };
    for (const EventStats* e : per_input) {
      if (e == nullptr) continue;
      ++r.inputs;
      r.self_cuda_sum += e->self_cuda_ns;
      r.self_cpu_sum += e->self_cpu_ns;
    }
    r.calls = SummarizeAcross(values(&EventStats::count));
    r.self_cuda = SummarizeAcross(values(&EventStats::self_cuda_ns));
    r.self_cpu = SummarizeAcross(values(&EventStats::self_cpu_ns));
    r.cpu_total = SummarizeAcross(values(&EventStats::cpu_total_ns));
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [gpu](const MergedRow& a, const MergedRow& b) {
    const uint64_t ca = gpu ? a.self_cuda_sum : 0, cb = gpu ? b.self_cuda_sum : 0;
    return std::make_tuple(cb, b.self_cpu_sum, std::cref(a.name), a.device) <
           std::make_tuple(ca, a.self_cpu_sum, std::cref(b.name), b.device);
  });
  return rows;
}

}  // namespace gprof
