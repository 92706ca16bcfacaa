// The HTML report's model (html_report_model.h): step bars, kernel distributions and memory
// series of one profile (the timeline bins: html_timeline.cpp). Launcher process only. This is the page's only work that
// grows with the event count: a few linear passes over the records and two counting-sort passes
// for the timeline (no comparison sort over all events), so that a 10 M-event profile's page
// costs a fraction of a second beyond what the table and findings computed.
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/attribution/gpu_attribution.h"
#include "analysis/attribution/names.h"
#include "analysis/tables/stats.h"
#include "outputs/html/html_report_model.h"

namespace gprof::html_internal {
namespace {

uint64_t Dur(uint64_t s, uint64_t e) { return e > s ? e - s : 0; }

// ---- Steps ----

void BuildSteps(const HtmlReportInput& in, StepsModel* m) {
  const std::vector<StepRow>& steps = in.context->steps;
  m->gpu = in.profile->HasGpuData();
  m->count = steps.size();
  if (steps.empty()) return;
  std::vector<uint64_t> walls;
  for (const StepRow& s : steps) {
    walls.push_back(s.wall_ns);
    m->total_wall_ns += s.wall_ns;
    m->total_gpu_busy_ns += s.gpu_busy_ns;
  }
  m->median_wall_ns = static_cast<uint64_t>(SummarizeSamples(&walls).median + 0.5);
  for (const Finding& f : *in.findings) {
    if (f.id != "cold_start") continue;
    if (const Evidence* e = f.Get("step")) m->cold_step = static_cast<uint32_t>(e->n);
  }
  const auto bar_of = [&](const StepRow& s) {
    StepBar b;
    b.first = b.last = b.number = s.number;
    b.wall_ns = s.wall_ns;
    b.gpu_busy_ns = s.gpu_busy_ns;
    b.cold = m->cold_step && *m->cold_step == s.number;
    b.outlier = static_cast<double>(s.wall_ns) >=
                    kStepOutlierFactor * static_cast<double>(m->median_wall_ns) &&
                s.wall_ns >= m->median_wall_ns + kStepOutlierMinExcessNs;
    return b;
  };
  m->steps_per_bar = (steps.size() + kMaxStepBars - 1) / kMaxStepBars;
  for (size_t i = 0; i < steps.size(); i += m->steps_per_bar) {
    StepBar group;
    for (size_t j = i; j < steps.size() && j < i + m->steps_per_bar; ++j) {
      const StepBar b = bar_of(steps[j]);
      m->outliers += b.outlier ? 1 : 0;
      if (j == i || b.wall_ns > group.wall_ns) {
        const bool cold = group.cold || b.cold, outlier = group.outlier || b.outlier;
        const uint32_t first = j == i ? b.first : group.first;
        group = b;
        group.cold = cold;
        group.outlier = outlier;
        group.first = first;
      } else {
        group.cold |= b.cold;
        group.outlier |= b.outlier;
      }
      group.last = b.number;
      group.steps = j - i + 1;
    }
    m->bars.push_back(group);
  }
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return steps[a].wall_ns > steps[b].wall_ns; });
  for (size_t i = 0; i < order.size() && i < kSlowStepsListed; ++i) {
    m->slowest.push_back(bar_of(steps[order[i]]));
  }
}

// ---- Kernels: the top kernels by GPU time and their duration distributions ----

void BuildKernels(const Profile& p, std::vector<KernelDistribution>* out) {
  if (p.kernels.empty()) return;
  // Per mangled name id, then per demangled name (the table's rows).
  std::vector<uint64_t> total_by_id(p.strings.size(), 0), count_by_id(p.strings.size(), 0);
  std::vector<uint8_t> seen(p.strings.size(), 0);
  for (const Kernel& k : p.kernels) {
    if (k.name >= total_by_id.size()) continue;  // CheckProfile rejects these
    total_by_id[k.name] += Dur(k.start_ns, k.end_ns);
    ++count_by_id[k.name];
    seen[k.name] = 1;
  }
  NameCache names(p);
  std::map<std::string, uint64_t> total_by_name;
  for (StringId id = 0; id < seen.size(); ++id) {
    if (seen[id]) total_by_name[names.KernelName(id)] += total_by_id[id];
  }
  std::vector<std::pair<std::string, uint64_t>> ranked(total_by_name.begin(), total_by_name.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (ranked.size() > kTopKernels) ranked.resize(kTopKernels);
  std::map<std::string, size_t> slot_of_name;
  for (size_t i = 0; i < ranked.size(); ++i) slot_of_name[ranked[i].first] = i;
  std::vector<int32_t> slot_of_id(seen.size(), -1);
  for (StringId id = 0; id < seen.size(); ++id) {
    if (!seen[id]) continue;
    auto it = slot_of_name.find(names.KernelName(id));
    if (it != slot_of_name.end()) slot_of_id[id] = static_cast<int32_t>(it->second);
  }
  std::vector<std::vector<uint64_t>> samples(ranked.size());
  {
    std::vector<uint64_t> sizes(ranked.size(), 0);
    for (StringId id = 0; id < slot_of_id.size(); ++id) {
      if (slot_of_id[id] >= 0) sizes[static_cast<size_t>(slot_of_id[id])] += count_by_id[id];
    }
    for (size_t i = 0; i < samples.size(); ++i) samples[i].reserve(sizes[i]);
  }
  for (const Kernel& k : p.kernels) {
    if (k.name >= slot_of_id.size() || slot_of_id[k.name] < 0) continue;
    samples[static_cast<size_t>(slot_of_id[k.name])].push_back(Dur(k.start_ns, k.end_ns));
  }
  for (size_t i = 0; i < ranked.size(); ++i) {
    std::vector<uint64_t>& v = samples[i];
    KernelDistribution d;
    d.name = ranked[i].first;
    d.total_ns = ranked[i].second;
    d.count = v.size();
    if (v.empty()) continue;
    const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    d.min_ns = *mn;
    d.max_ns = *mx;
    // p95 by nearest rank, as kernel_spread: the ceil(0.95 n)-th smallest.
    const size_t rank = (v.size() * 95 + 99) / 100;
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(rank - 1), v.end());
    d.p95_ns = v[rank - 1];
    // The median as SummarizeSamples: the middle value, or the mean of the two middle ones. It is
    // among the `rank` smallest, which the selection above put first.
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid),
                     v.begin() + static_cast<ptrdiff_t>(std::max(rank, mid + 1)));
    const uint64_t upper = v[mid];
    if (v.size() % 2 == 1) {
      d.median_ns = static_cast<double>(upper);
    } else {
      const uint64_t lower = *std::max_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid));
      d.median_ns = static_cast<double>(lower) + static_cast<double>(upper - lower) / 2.0;
    }
    out->push_back(std::move(d));
  }
}

// ---- Memory in use per device (the trace's counter rule, TracePlan::PlanMemory) ----

void BuildMemory(const Profile& p, const Timeline& tl, Model* m) {
  if (p.memory_ops.empty()) return;
  std::map<uint32_t, std::vector<uint32_t>> by_device;
  for (uint32_t i = 0; i < p.memory_ops.size(); ++i) {
    by_device[p.memory_ops[i].device_id].push_back(i);
  }
  for (auto& [device, order] : by_device) {
    if (m->memory.size() == kMaxMemoryDevices) {
      ++m->memory_devices_hidden;
      continue;
    }
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return p.memory_ops[a].ts_ns < p.memory_ops[b].ts_ns;
    });
    MemorySeries s;
    s.device = device;
    s.ops = order.size();
    for (const DeviceInfo& d : p.devices) {
      if (d.id == device) s.device_total = d.total_global_mem;
    }
    // Bytes in use after each operation, in time order.
    std::vector<std::pair<uint64_t, uint64_t>> after;  // (ts, in use)
    after.reserve(order.size());
    std::unordered_map<uint64_t, uint64_t> live;  // address -> bytes
    uint64_t total = 0;
    for (uint32_t i : order) {
      const MemoryOp& op = p.memory_ops[i];
      if (op.op == MemoryOpKind::kAlloc) {
        total += op.bytes;
        live[op.address] = op.bytes;
      } else {
        uint64_t bytes = op.bytes;
        if (auto it = live.find(op.address); it != live.end()) {
          if (bytes == 0) bytes = it->second;
          live.erase(it);
        }
        total -= std::min(total, bytes);
      }
      if (total > s.peak) {
        s.peak = total;
        s.peak_ns = op.ts_ns;
      }
      after.emplace_back(op.ts_ns, total);
    }
    // Per bin the most in use: the level it starts with, and every level an operation in it set.
    size_t k = 0;
    while (k < after.size() && after[k].first < tl.start_ns) s.at_start = after[k++].second;
    s.bin_max.assign(tl.bins, 0);
    uint64_t level = s.at_start;
    for (size_t b = 0; b < tl.bins; ++b) {
      const uint64_t edge = tl.BinEnd(b);
      s.bin_max[b] = level;
      for (; k < after.size() && after[k].first < edge; ++k) {
        level = after[k].second;
        s.bin_max[b] = std::max(s.bin_max[b], level);
      }
    }
    m->memory.push_back(std::move(s));
  }
}

}  // namespace

Model BuildModel(const HtmlReportInput& in) {
  Model m;
  BuildTimeline(in, &m.timeline);
  BuildSteps(in, &m.steps);
  BuildKernels(*in.profile, &m.kernels);
  BuildMemory(*in.profile, m.timeline, &m);
  m.stacks = BuildStacksModel(*in.profile, in.python_samples, in.python_syncs, in.native_stacks);
  m.cpu = BuildCpuSamplesModel(*in.profile, in.cpu_samples);
  return m;
}

}  // namespace gprof::html_internal