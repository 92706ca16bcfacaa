// Distributed findings (see merge_findings.h; rules in docs/FINDINGS.md, "Distributed
// findings"): the survey's per-input summary of one profile (SummarizeDistributed, on the
// findings' Analysis) and the rules across inputs: straggler, imbalance, comm_overlap. Launcher
// process only. Pure: no file access.
#include "analysis/ranks/merge_findings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/attribution/intervals.h"
#include "analysis/findings/findings_analysis.h"
#include "text/format.h"

namespace gprof {
namespace {

using findings_internal::Analysis;
using findings_internal::Count;
using findings_internal::Duration;
using findings_internal::Factor;
using findings_internal::FactorOf;
using findings_internal::Median;
using findings_internal::Pct;
using findings_internal::Percent;
using findings_internal::Text;

// The middle value of `v` (the mean of the two middle ones for an even count), 0 when empty.
double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

uint64_t RelTo(uint64_t abs, uint64_t origin) { return abs > origin ? abs - origin : 0; }

// "rank 2 (node1:4242)" and, for a ranked input, its rank as evidence.
void Identify(const MergeInput& in, std::vector<Evidence>* ev) {
  if (in.info.rank >= 0) ev->push_back(Count("rank", static_cast<uint64_t>(in.info.rank)));
  ev->push_back(Text("process", MergeInputLabel(in)));
}

// "rank 2", or "node1:4242" for an input without a rank.
std::string ShortName(const MergeInput& in) {
  if (in.info.rank >= 0) return "rank " + std::to_string(in.info.rank);
  return in.info.hostname + ":" + std::to_string(in.info.pid);
}

// ---- straggler ----

enum class Metric { kBeforeCollective, kStepTime };

std::optional<uint64_t> ValueOf(const MergeStep& s, Metric m) {
  if (m == Metric::kStepTime) return s.wall_ns;
  return s.before_collective_ns;
}

struct StepValue {
  size_t input;
  uint64_t value;
  uint64_t start_ns;  // the step's start on that input (absolute, on the aligned clock)
};

struct SlowStep {
  size_t input;
  uint32_t step;
  uint64_t value, others_median, excess;
  double factor;  // value / others_median; 0 when the median is 0
  uint64_t start_ns;
};

// The straggler rule's slow steps: per compared step (at least two inputs have it) the slowest
// input, the first among equals, when it is slow enough (kStragglerMin*); `by_step` keeps the
// values, `compared` points into it.
std::vector<SlowStep> SlowSteps(const std::vector<MergeInput>& inputs, Metric metric,
                                std::map<uint32_t, std::vector<StepValue>>* by_step,
                                std::vector<const std::vector<StepValue>*>* compared) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    for (const MergeStep& s : inputs[k].dist.steps) {
      if (const std::optional<uint64_t> v = ValueOf(s, metric)) {
        (*by_step)[s.number].push_back({k, *v, AlignedNs(s.start_ns, inputs[k].clock.offset_ns)});
      }
    }
  }
  std::vector<SlowStep> slow;
  for (const auto& [number, values] : *by_step) {
    if (values.size() < 2) continue;
    compared->push_back(&values);
    size_t top = 0;
    for (size_t i = 1; i < values.size(); ++i) {
      if (values[i].value > values[top].value) top = i;
    }
    std::vector<uint64_t> others;
    for (size_t i = 0; i < values.size(); ++i) {
      if (i != top) others.push_back(values[i].value);
    }
    const uint64_t median = Median(others);
    const uint64_t value = values[top].value;
    const uint64_t excess = value > median ? value - median : 0;
    const double factor =
        median == 0 ? 0.0 : static_cast<double>(value) / static_cast<double>(median);
    if (excess < kStragglerMinExcessNs || (median > 0 && factor < kStragglerMinFactor)) continue;
    slow.push_back({values[top].input, number, value, median, excess, factor, values[top].start_ns});
  }
  return slow;
}

void StragglerFinding(const std::vector<MergeInput>& inputs, uint64_t origin, Metric metric,
                      std::vector<Finding>* out) {
  std::map<uint32_t, std::vector<StepValue>> by_step;
  std::vector<const std::vector<StepValue>*> compared;
  const std::vector<SlowStep> slow = SlowSteps(inputs, metric, &by_step, &compared);
  std::vector<uint64_t> slow_count(inputs.size(), 0);
  for (const SlowStep& s : slow) ++slow_count[s.input];
  if (slow.empty()) return;
  size_t who = 0;
  for (size_t k = 1; k < inputs.size(); ++k) {
    if (slow_count[k] > slow_count[who]) who = k;
  }
  const uint64_t count = slow_count[who];
  if (static_cast<double>(count) < kStragglerMinStepShare * static_cast<double>(compared.size())) {
    return;
  }

  // Its numbers over its slow steps, and its and the others' medians over the compared steps.
  std::vector<uint64_t> excesses, own, rest;
  std::vector<double> factors;
  std::vector<SlowStep> mine;
  bool unbounded = false;  // a slow step where the others' median was 0
  for (const SlowStep& s : slow) {
    if (s.input != who) continue;
    mine.push_back(s);
    excesses.push_back(s.excess);
    if (s.others_median > 0) factors.push_back(s.factor);
    else unbounded = true;
  }
  for (const std::vector<StepValue>* values : compared) {
    for (const StepValue& v : *values) (v.input == who ? own : rest).push_back(v.value);
  }
  const uint64_t median_excess = Median(excesses);
  const double median_factor = MedianOf(factors);
  const uint64_t own_median = Median(own), rest_median = Median(rest);

  const MergeInput& in = inputs[who];
  const bool before = metric == Metric::kBeforeCollective;
  Finding f;
  f.id = "straggler";
  f.severity = (unbounded && factors.empty()) || median_factor >= kStragglerHighFactor
                   ? Severity::kHigh
                   : Severity::kWarn;
  Identify(in, &f.evidence);
  f.evidence.push_back(Text("metric", before ? "before_collective" : "step_time"));
  f.evidence.push_back(Count("steps", compared.size()));
  f.evidence.push_back(Count("slow_steps", count));
  f.evidence.push_back(Pct("slow_steps_pct", findings_internal::Share(count, compared.size())));
  f.evidence.push_back(Duration("median_excess_us", median_excess));
  f.evidence.push_back(FactorOf("median_factor", median_factor));
  f.evidence.push_back(Duration("rank_median_us", own_median));
  f.evidence.push_back(Duration("others_median_us", rest_median));
  // Other inputs that were the slowest by the thresholds in some steps, most steps first.
  std::vector<std::pair<uint64_t, size_t>> others;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (k != who && slow_count[k] > 0) others.emplace_back(slow_count[k], k);
  }
  std::stable_sort(others.begin(), others.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  uint64_t other_slow = 0;
  std::string other_text;
  for (const auto& [n, k] : others) {
    other_slow += n;
    other_text += (other_text.empty() ? "" : ", ") + ShortName(inputs[k]) + " (" +
                  std::to_string(n) + (n == 1 ? " step)" : " steps)");
  }
  f.evidence.push_back(Count("other_slow_steps", other_slow));
  if (!other_text.empty()) f.evidence.push_back(Text("other_stragglers", other_text));

  // Places: its slow steps, the largest excess first (the earlier step among equals).
  std::stable_sort(mine.begin(), mine.end(),
                   [](const SlowStep& a, const SlowStep& b) { return a.excess > b.excess; });
  for (size_t i = 0; i < mine.size() && i < kMaxPlaces; ++i) {
    const SlowStep& s = mine[i];
    Place pl;
    pl.step = s.step;
    pl.ts_ns = RelTo(s.start_ns, origin);
    pl.dur_ns = s.value;
    pl.name = "ProfilerStep#" + std::to_string(s.step);
    pl.context = {MergeInputLabel(in),
                  "+" + FormatDuration(s.excess) + " over the other ranks' median " +
                      FormatDuration(s.others_median) +
                      (s.others_median > 0 ? " (" + Factor(s.factor) + ")" : std::string())};
    f.places.push_back(std::move(pl));
  }
  f.where = f.places.front();

  const std::string by = "by " + FormatDuration(median_excess) +
                         (factors.empty() ? std::string() : " (" + Factor(median_factor) + ")");
  const std::string of = std::to_string(count) + " of " + std::to_string(compared.size()) +
                         (compared.size() == 1 ? " step" : " steps");
  if (before) {
    f.title = "Straggler: " + MergeInputLabel(in) + " reaches the first collective last in " +
              of + ", " + by + " after the other ranks' median (its median " +
              FormatDuration(own_median) + " from the step's start, theirs " +
              FormatDuration(rest_median) + "); the others wait for it in the collective";
  } else {
    f.title = "Straggler: " + MergeInputLabel(in) + " has the longest step in " + of + ", " +
              by + " over the other ranks' median (its median step " +
              FormatDuration(own_median) + ", theirs " + FormatDuration(rest_median) + ")";
  }
  if (!other_text.empty()) f.title += "; also the slowest: " + other_text;
  f.advice =
      "In synchronized training every rank waits for the slowest one at each collective, so "
      "this rank sets the job's pace. Compare what it does in the steps named here with another "
      "rank (its own findings: gpu_idle, sync, host work before its first launch), its share of "
      "the data (sequence lengths, batch size), its GPU's clocks and temperature (nvidia-smi) "
      "and other load on its host; open the places in merged/trace.json.";
  out->push_back(std::move(f));
}

// ---- imbalance ----

void ImbalanceFinding(const std::vector<MergeInput>& inputs, uint64_t origin,
                      std::vector<Finding>* out) {
  std::vector<std::pair<size_t, double>> shares;  // (input, GPU busy share of its window)
  for (size_t k = 0; k < inputs.size(); ++k) {
    const MergeDistSummary& d = inputs[k].dist;
    if (!d.gpu_work || d.window_ns == 0) continue;
    shares.emplace_back(k, findings_internal::Share(d.gpu_busy_ns, d.window_ns));
  }
  if (shares.size() < 2) return;
  std::vector<double> values;
  size_t lo = 0, hi = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    values.push_back(shares[i].second);
    if (shares[i].second < shares[lo].second) lo = i;
    if (shares[i].second > shares[hi].second) hi = i;
  }
  const double median = MedianOf(values);
  struct Off {
    size_t input;
    double share, diff;
  };
  std::vector<Off> off;
  for (const auto& [k, share] : shares) {
    const double diff = std::fabs(share - median);
    const double small = std::min(share, median), large = std::max(share, median);
    const bool factor = large > 0 && (small == 0 || large / small >= kImbalanceMinFactor);
    if (diff >= kImbalanceMinShareDiff || (factor && diff >= kImbalanceMinFactorDiff)) {
      off.push_back({k, share, diff});
    }
  }
  if (off.empty()) return;
  std::stable_sort(off.begin(), off.end(), [](const Off& a, const Off& b) { return a.diff > b.diff; });
  std::string list;
  for (const Off& o : off) {
    list += (list.empty() ? "" : ", ") + ShortName(inputs[o.input]) + " (" + Percent(o.share) + ")";
  }
  Finding f;
  f.id = "imbalance";
  f.severity = Severity::kWarn;
  f.evidence = {Count("processes", shares.size()),
                Count("imbalanced", off.size()),
                Pct("min_gpu_busy_pct", shares[lo].second),
                Pct("median_gpu_busy_pct", median),
                Pct("max_gpu_busy_pct", shares[hi].second),
                Text("min_at", MergeInputLabel(inputs[shares[lo].first])),
                Text("max_at", MergeInputLabel(inputs[shares[hi].first])),
                Text("imbalanced_ranks", list)};
  for (size_t i = 0; i < off.size() && i < kMaxPlaces; ++i) {
    const MergeInput& in = inputs[off[i].input];
    Place pl;
    pl.ts_ns = RelTo(AlignedNs(in.dist.window_start_ns, in.clock.offset_ns), origin);
    pl.dur_ns = in.dist.window_ns;
    pl.device = in.dist.busiest_device;
    pl.context = {MergeInputLabel(in), "GPU busy " + Percent(off[i].share) +
                                           " of its window (median " + Percent(median) + ")"};
    f.places.push_back(std::move(pl));
  }
  f.where = f.places.front();
  const MergeInput& worst = inputs[off.front().input];
  f.title = "GPU busy share differs across ranks: " + MergeInputLabel(worst) + " is busy " +
            Percent(off.front().share) + " of its window vs the median " + Percent(median) +
            " of " + std::to_string(shares.size()) + " processes (min " +
            Percent(shares[lo].second) + ", max " + Percent(shares[hi].second) + ")" +
            (off.size() > 1 ? "; imbalanced: " + list : std::string());
  f.advice =
      "A rank with a lower share spends the difference waiting: on its host (its own gpu_idle "
      "findings say for what) or for the other ranks; a higher share is more work or a slower "
      "GPU. Uneven sharding (sequence lengths, batch sizes, pipeline stages), a slow input "
      "pipeline on one host or different hardware give this. Communication kernels count as "
      "busy, so a rank waiting inside NCCL looks busy: comm_overlap gives their time.";
  out->push_back(std::move(f));
}

// ---- comm_overlap ----

void CommOverlapFindings(const std::vector<MergeInput>& inputs, uint64_t origin,
                         std::vector<Finding>* out) {
  for (const MergeInput& in : inputs) {
    const MergeDistSummary& d = in.dist;
    if (d.comm_kernels == 0) continue;
    const double overlap = findings_internal::Share(d.overlap_ns, d.comm_ns);
    Finding f;
    f.id = "comm_overlap";
    f.severity = Severity::kInfo;
    Identify(in, &f.evidence);
    f.evidence.push_back(Count("comm_kernels", d.comm_kernels));
    f.evidence.push_back(Duration("comm_time_us", d.comm_ns));
    f.evidence.push_back(Duration("compute_time_us", d.compute_ns));
    f.evidence.push_back(Duration("overlap_us", d.overlap_ns));
    f.evidence.push_back(Pct("overlap_pct", overlap));
    f.evidence.push_back(Pct("comm_pct", findings_internal::Share(d.comm_ns, d.window_ns)));
    f.evidence.push_back(Duration("window_us", d.window_ns));
    Place pl;
    pl.ts_ns = RelTo(AlignedNs(d.window_start_ns, in.clock.offset_ns), origin);
    pl.dur_ns = d.window_ns;
    pl.context = {MergeInputLabel(in)};
    f.where = pl;
    f.title = MergeInputLabel(in) + ": communication kernels " + FormatDuration(d.comm_ns) +
              " (" + Percent(findings_internal::Share(d.comm_ns, d.window_ns)) +
              " of its window), " + FormatDuration(d.overlap_ns) + " of it (" + Percent(overlap) +
              ") overlapped with compute kernels (compute " + FormatDuration(d.compute_ns) + ")";
    f.advice =
        "Communication that overlaps compute is hidden; the rest adds to the step. DDP overlaps "
        "the gradient all-reduce with the backward pass bucket by bucket (bucket_cap_mb), FSDP "
        "prefetches (forward_prefetch, backward_prefetch). A long communication time with little "
        "overlap means the collectives wait for another rank (see straggler) or for the network.";
    out->push_back(std::move(f));
  }
}

}  // namespace

bool IsCommunicationKernel(std::string_view name) {
  if (name.find("ncclKernel") != std::string_view::npos ||
      name.find("ncclDevKernel") != std::string_view::npos) {
    return true;
  }
  if (name.starts_with("void ")) name.remove_prefix(5);  // a template kernel's return type
  return name.starts_with("nccl");
}

MergeDistSummary SummarizeDistributed(const Profile& p) {
  Analysis a(p);
  MergeDistSummary d;
  d.window_start_ns = a.ws();
  d.window_ns = a.window();
  for (const auto& [dev, work] : a.device_work()) {
    if (work.empty()) continue;
    const uint64_t busy = CoveredIn(work, a.ws(), a.we());
    if (!d.gpu_work || busy > d.gpu_busy_ns) {
      d.busiest_device = dev;
      d.gpu_busy_ns = busy;
    }
    d.gpu_work = true;
  }
  // Per device: communication and compute kernels that start in the window.
  std::map<uint32_t, std::pair<std::vector<Interval>, std::vector<Interval>>> kinds;
  std::vector<uint64_t> comm_starts;  // every communication kernel's start, for the steps
  for (const Kernel& k : p.kernels) {
    const bool comm = IsCommunicationKernel(a.names().KernelName(k.name));
    if (comm) comm_starts.push_back(k.start_ns);
    if (!a.InWindow(k.start_ns)) continue;
    auto& [c, x] = kinds[a.KernelDevice(k)];
    (comm ? c : x).emplace_back(k.start_ns, k.end_ns);
    d.comm_kernels += comm ? 1 : 0;
  }
  for (auto& [dev, cx] : kinds) {
    std::vector<Interval> both = cx.first;
    both.insert(both.end(), cx.second.begin(), cx.second.end());
    const uint64_t comm = CoveredIn(MergeIntervals(std::move(cx.first)), a.ws(), a.we());
    const uint64_t compute = CoveredIn(MergeIntervals(std::move(cx.second)), a.ws(), a.we());
    const uint64_t any = CoveredIn(MergeIntervals(std::move(both)), a.ws(), a.we());
    d.comm_ns += comm;
    d.compute_ns += compute;
    d.overlap_ns += comm + compute - any;  // |A| + |B| - |A u B| = |A n B|
  }
  std::sort(comm_starts.begin(), comm_starts.end());
  for (const StepRow& s : a.steps()) {
    if (!d.steps.empty() && d.steps.back().number == s.number) continue;  // a repeated number
    MergeStep m;
    m.number = s.number;
    m.start_ns = s.start_ns;
    m.wall_ns = s.wall_ns;
    m.gpu_busy_ns = s.gpu_busy_ns;
    const auto first = std::lower_bound(comm_starts.begin(), comm_starts.end(), s.start_ns);
    if (first != comm_starts.end() && *first < s.start_ns + s.wall_ns) {
      m.before_collective_ns = *first - s.start_ns;
    }
    d.steps.push_back(m);
  }
  return d;
}

std::vector<size_t> InputsBySlowness(const std::vector<MergeInput>& inputs) {
  std::vector<uint64_t> slow(inputs.size(), 0), wall(inputs.size(), 0);
  for (const Metric metric : {Metric::kBeforeCollective, Metric::kStepTime}) {
    std::map<uint32_t, std::vector<StepValue>> by_step;
    std::vector<const std::vector<StepValue>*> compared;
    for (const SlowStep& s : SlowSteps(inputs, metric, &by_step, &compared)) ++slow[s.input];
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    for (const MergeStep& s : inputs[k].dist.steps) wall[k] += s.wall_ns;
  }
  std::vector<size_t> order(inputs.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return slow[a] != slow[b] ? slow[a] > slow[b] : wall[a] > wall[b];
  });
  return order;
}

std::vector<Finding> MergedFindings(const std::vector<MergeInput>& inputs) {
  std::vector<Finding> out;
  if (inputs.size() < 2) return out;
  const uint64_t origin = MergedOriginNs(inputs);
  bool comm = false;
  for (const MergeInput& in : inputs) comm = comm || in.dist.comm_kernels > 0;
  if (comm) StragglerFinding(inputs, origin, Metric::kBeforeCollective, &out);
  StragglerFinding(inputs, origin, Metric::kStepTime, &out);
  ImbalanceFinding(inputs, origin, &out);
  CommOverlapFindings(inputs, origin, &out);
  ClockAlignmentFinding(inputs, &out);
  SortFindings(&out);
  return out;
}

}  // namespace gprof
