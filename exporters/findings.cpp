// Findings from one profile (see findings.h; every rule in docs/FINDINGS.md). Launcher process
// only. Pure: no file access.
#include "exporters/findings.h"

#include "exporters/findings_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "exporters/correlation_index.h"
#include "exporters/format.h"
#include "exporters/gpu_attribution.h"
#include "exporters/intervals.h"
#include "exporters/key_averages.h"
#include "exporters/names.h"
#include "exporters/stats.h"
#include "exporters/trace_plan.h"
#include "model/api_name.h"

namespace gprof {
namespace {

using namespace findings_internal;  // NOLINT: the rules' shared analysis (findings_analysis.h)


// ---- Rules ----

struct GpuShares {
  uint32_t device = 0;
  uint64_t gpu_busy = 0, host_busy = 0;
};

GpuShares Shares(Analysis& a, const std::vector<BlockingCall>& blocking) {
  GpuShares s;
  for (const auto& [dev, work] : a.device_work()) {
    const uint64_t busy = CoveredIn(work, a.ws(), a.we());
    if (busy > s.gpu_busy) {
      s.gpu_busy = busy;
      s.device = dev;
    }
  }
  std::vector<Interval> host, blocked;
  for (const HostEvent& e : a.host()) host.emplace_back(e.start, e.end);
  for (const BlockingCall& b : blocking) {
    if (b.host_event >= 0) blocked.emplace_back(b.start, b.end);
  }
  // Blocking calls are host events, so their union lies inside the host union.
  const uint64_t all = CoveredIn(MergeIntervals(std::move(host)), a.ws(), a.we());
  const uint64_t waiting = CoveredIn(MergeIntervals(std::move(blocked)), a.ws(), a.we());
  s.host_busy = all > waiting ? all - waiting : 0;
  return s;
}

void BoundFindings(Analysis& a, const GpuShares& s, std::vector<Finding>* out) {
  const Profile& p = a.p();
  if (!p.HasGpuData() || a.window() == 0) return;
  const double gpu = Share(s.gpu_busy, a.window());
  const double host = Share(s.host_busy, a.window());
  const bool overhead = gpu < kOverheadBoundMaxGpuShare && host >= kOverheadBoundMinHostShare;
  const bool compute = gpu >= kComputeBoundMinGpuShare;
  if (!overhead && !compute) return;
  // The table's footers, as the seed articles compare them.
  uint64_t self_cpu = 0, self_cuda = 0;
  for (const EventStats& e : KeyAverages(p)) {
    self_cpu += e.self_cpu_ns;
    if (e.device) self_cuda += e.self_cuda_ns;
  }
  uint64_t kernels = 0;
  for (const Kernel& k : p.kernels) kernels += a.InWindow(k.start_ns) ? 1 : 0;
  Finding f;
  f.evidence = {Count("device", s.device),        Duration("window_us", a.window()),
                Duration("gpu_busy_us", s.gpu_busy), Pct("gpu_busy_pct", gpu),
                Duration("host_busy_us", s.host_busy), Pct("host_busy_pct", host),
                Count("kernels", kernels),         Duration("self_cpu_total_us", self_cpu),
                Duration("self_cuda_total_us", self_cuda)};
  Place where = a.PlaceAt(a.ws(), a.we());
  where.device = s.device;
  f.where = where;
  const std::string dev = "GPU " + std::to_string(s.device);
  if (overhead) {
    f.id = "overhead_bound";
    f.severity = gpu < kOverheadBoundHighGpuShare ? Severity::kHigh : Severity::kWarn;
    f.title = "Overhead-bound: " + dev + " is busy " + Percent(gpu) + " of the " +
              FormatDuration(a.window()) + " window while the host is busy " + Percent(host) +
              " (Self CPU total " + FormatDuration(self_cpu) + ", Self CUDA total " +
              FormatDuration(self_cuda) + ")";
    f.advice =
        "The host sets the pace: the GPU finishes its work long before the next arrives. Give "
        "it more work per launch (larger batches or matrices), fewer launches (fuse ops, "
        "torch.compile), or replay a captured CUDA graph; the table's Self CPU column shows "
        "where the host's time goes.";
  } else {
    f.id = "compute_bound";
    f.severity = Severity::kInfo;
    f.title = "Compute-bound: " + dev + " is busy " + Percent(gpu) + " of the " +
              FormatDuration(a.window()) + " window (Self CUDA total " +
              FormatDuration(self_cuda) + ", Self CPU total " + FormatDuration(self_cpu) + ")";
    f.advice =
        "The GPU sets the pace: speed up the kernels at the top of the table by Self CUDA "
        "(lower precision, better-suited kernels, less work); host-side changes will not make "
        "this run faster.";
  }
  out->push_back(std::move(f));
}

// What the host did during [gs, ge): the time each range or call on any thread spent there by
// itself (its overlap with the gap minus that of the events nested in it, so a call inside a
// range takes its time from the range), summed per (thread, name), the most time first.
std::vector<std::string> HostDuring(Analysis& a, uint64_t gs, uint64_t ge) {
  const std::vector<HostEvent>& host = a.host();
  std::map<size_t, int64_t> own;  // event index -> its own time in the gap (ns)
  for (size_t i = 0; i < host.size(); ++i) {
    const HostEvent& e = host[i];
    if (e.start >= ge || e.end <= gs) continue;
    const int64_t overlap = static_cast<int64_t>(std::min(e.end, ge) - std::max(e.start, gs));
    own[i] += overlap;
    if (e.parent >= 0) own[static_cast<size_t>(e.parent)] -= overlap;
  }
  std::map<std::pair<uint32_t, std::string>, uint64_t> by_name;
  for (const auto& [i, ns] : own) {
    if (ns > 0) by_name[{host[i].tid, a.EventName(host[i])}] += static_cast<uint64_t>(ns);
  }
  std::vector<std::pair<std::pair<uint32_t, std::string>, uint64_t>> ranked(by_name.begin(),
                                                                            by_name.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::vector<std::string> out;
  for (const auto& [key, ns] : ranked) {
    if (out.size() == kMaxPlaces) break;
    out.push_back(key.second + " on thread " + std::to_string(key.first) + " (" +
                  FormatDuration(ns) + " of the gap)");
  }
  if (out.empty()) out.push_back("no host range or CUDA call recorded during the gap");
  return out;
}

void GpuIdleFindings(Analysis& a, std::vector<Finding>* out) {
  if (a.window() == 0) return;
  for (const auto& [dev, work] : a.device_work()) {
    if (CoveredIn(work, a.ws(), a.we()) == 0) continue;  // no work of this device in the window
    std::vector<Interval> gaps;
    uint64_t cursor = a.ws();
    const auto gap_to = [&](uint64_t t) {
      if (t > cursor && t - cursor >= kGpuIdleMinGapNs) gaps.emplace_back(cursor, t);
    };
    for (const Interval& iv : work) {
      if (iv.second <= a.ws()) continue;
      if (iv.first >= a.we()) break;
      gap_to(iv.first);
      cursor = std::max(cursor, iv.second);
    }
    gap_to(a.we());
    if (gaps.empty()) continue;
    uint64_t idle = 0;
    for (const Interval& g : gaps) idle += g.second - g.first;
    std::stable_sort(gaps.begin(), gaps.end(), [](const Interval& x, const Interval& y) {
      return x.second - x.first > y.second - y.first;
    });
    const double share = Share(idle, a.window());
    if (share < kGpuIdleMinShare) continue;
    Finding f;
    f.id = "gpu_idle";
    f.severity = share >= kGpuIdleHighShare   ? Severity::kHigh
                 : share >= kGpuIdleWarnShare ? Severity::kWarn
                                              : Severity::kInfo;
    for (size_t i = 0; i < gaps.size() && i < kMaxPlaces; ++i) {
      Place pl = a.PlaceAt(gaps[i].first, gaps[i].second);
      pl.device = dev;
      pl.context = HostDuring(a, gaps[i].first, gaps[i].second);
      f.places.push_back(std::move(pl));
    }
    f.where = f.places.front();
    const uint64_t largest = gaps.front().second - gaps.front().first;
    f.evidence = {Count("device", dev),
                  Count("gaps", gaps.size()),
                  Duration("idle_us", idle),
                  Pct("idle_pct", share),
                  Duration("largest_gap_us", largest),
                  Duration("window_us", a.window()),
                  Duration("min_gap_us", kGpuIdleMinGapNs)};
    f.title = "GPU " + std::to_string(dev) + " idle " + Percent(share) + " of the window in " +
              std::to_string(gaps.size()) + (gaps.size() == 1 ? " gap" : " gaps") + " of " +
              FormatDuration(kGpuIdleMinGapNs) + " or more; the largest, " +
              FormatDuration(largest) + " at " + FormatDuration(f.where->ts_ns) +
              ", while the host ran " + f.where->context.front();
    f.advice =
        "The GPU waits for the host in these gaps. Overlap the host work named here with GPU "
        "work: load and preprocess data ahead (DataLoader workers, pin_memory, prefetching), "
        "move host-side computation out of the loop, and avoid synchronizing calls; open the "
        "trace at the times shown.";
    out->push_back(std::move(f));
  }
}

void SyncFinding(Analysis& a, const std::vector<BlockingCall>& calls, std::vector<Finding>* out) {
  if (calls.empty() || a.window() == 0) return;
  uint64_t blocked = 0, copies = 0;
  std::vector<Interval> spans;
  for (const BlockingCall& c : calls) {
    blocked += Dur(c.start, c.end);
    copies += c.copy ? 1 : 0;
    spans.emplace_back(c.start, c.end);
  }
  const double share = Share(CoveredIn(MergeIntervals(std::move(spans)), a.ws(), a.we()), a.window());
  if (share < kSyncMinShare && calls.size() < kSyncManyCalls) return;
  std::vector<size_t> order(calls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return Dur(calls[x].start, calls[x].end) > Dur(calls[y].start, calls[y].end);
  });
  Finding f;
  f.id = "sync";
  f.severity = share >= kSyncHighShare                                    ? Severity::kHigh
               : share >= kSyncWarnShare || calls.size() >= kSyncManyCalls ? Severity::kWarn
                                                                           : Severity::kInfo;
  for (size_t i = 0; i < order.size() && i < kMaxPlaces; ++i) {
    const BlockingCall& c = calls[order[i]];
    Place pl = a.PlaceAt(c.start, c.end);
    pl.thread = c.tid;
    pl.name = c.name;
    pl.context = a.EnclosingRanges(c.host_event);
    f.places.push_back(std::move(pl));
  }
  f.where = f.places.front();
  f.evidence = {Count("calls", calls.size()),
                Count("synchronize_calls", calls.size() - copies),
                Count("synchronous_copies", copies),
                Duration("host_blocked_us", blocked),
                Pct("host_blocked_pct", share),
                Duration("longest_us", f.where->dur_ns),
                Duration("window_us", a.window())};
  const Place& w = *f.where;
  f.title = std::to_string(calls.size()) + " host-blocking synchronization" +
            (calls.size() == 1 ? "" : "s") + " (" + FormatDuration(blocked) +
            ", the host blocked " + Percent(share) + " of the window); the longest, " +
            w.name + " for " + FormatDuration(w.dur_ns) +
            (w.context.empty() ? std::string() : " in " + w.context.front());
  f.advice =
      "Each of these calls stops the host until the GPU catches up; the GPU then idles while "
      "the host prepares the next work. Keep them out of the hot loop: .item(), .cpu(), "
      "printing a GPU tensor, torch.cuda.synchronize() and cudaMemcpy to the host each "
      "synchronize; keep values on the GPU, read them every N steps, or use cudaMemcpyAsync "
      "into pinned memory with an event.";
  out->push_back(std::move(f));
}

void PageableFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  std::vector<size_t> copies;
  uint64_t bytes = 0, time = 0, host = 0;
  for (size_t i = 0; i < p.memcpys.size(); ++i) {
    const Memcpy& m = p.memcpys[i];
    if (!m.is_async || !a.InWindow(m.start_ns)) continue;
    if (m.src_kind != MemKind::kPageable && m.dst_kind != MemKind::kPageable) continue;
    copies.push_back(i);
    bytes += m.bytes;
    time += Dur(m.start_ns, m.end_ns);
    const int64_t call = a.corr().ApiCall(m.correlation_id);
    if (call >= 0) host += Dur(p.api_calls[call].start_ns, p.api_calls[call].end_ns);
  }
  if (copies.empty()) return;
  std::stable_sort(copies.begin(), copies.end(), [&](size_t x, size_t y) {
    return Dur(p.memcpys[x].start_ns, p.memcpys[x].end_ns) >
           Dur(p.memcpys[y].start_ns, p.memcpys[y].end_ns);
  });
  const double share = Share(time, a.window());
  Finding f;
  f.id = "pageable_memcpy";
  f.severity = share >= kPageableWarnShare || copies.size() >= kPageableWarnCount
                   ? Severity::kWarn
                   : Severity::kInfo;
  for (size_t i = 0; i < copies.size() && i < kMaxPlaces; ++i) {
    const Memcpy& m = p.memcpys[copies[i]];
    Place pl = a.PlaceAt(m.start_ns, m.end_ns);
    pl.stream = m.stream_id;
    pl.device = m.device_id;
    pl.name = MemcpyName(m);
    const int64_t call = a.corr().ApiCall(m.correlation_id);
    if (call >= 0) {
      pl.thread = p.api_calls[call].tid;
      pl.context = a.EnclosingRanges(a.ApiEvent(static_cast<size_t>(call)));
    }
    f.places.push_back(std::move(pl));
  }
  f.where = f.places.front();
  f.evidence = {Count("copies", copies.size()), Bytes("bytes", bytes),
                Duration("copy_time_us", time), Pct("copy_time_pct", share),
                Duration("host_time_us", host)};
  f.title = std::to_string(copies.size()) + " async cop" + (copies.size() == 1 ? "y" : "ies") +
            " from or to pageable host memory (" + std::to_string(bytes) + " bytes, " +
            FormatDuration(time) + " on the GPU); the longest, " + f.where->name + " for " +
            FormatDuration(f.where->dur_ns);
  f.advice =
      "An async copy from or to pageable memory is staged through a pinned buffer by the "
      "driver: it does not overlap with compute, and into pageable memory it blocks the host. "
      "Allocate the host side pinned (tensor.pin_memory(), DataLoader(pin_memory=True), "
      "cudaMallocHost / cudaHostAlloc) and copy with non_blocking=True / cudaMemcpyAsync.";
  out->push_back(std::move(f));
}

void SpreadFindings(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  std::map<std::string, std::vector<size_t>> by_name;  // demangled name -> kernel indices
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel& k = p.kernels[i];
    if (a.InWindow(k.start_ns)) by_name[a.names().KernelName(k.name)].push_back(i);
  }
  struct Candidate {
    uint64_t excess;  // time above the median, summed over the instances
    Finding finding;
  };
  std::vector<Candidate> found;
  for (const auto& [name, indices] : by_name) {
    if (indices.size() < kSpreadMinInstances) continue;
    std::vector<uint64_t> d;
    for (size_t i : indices) d.push_back(Dur(p.kernels[i].start_ns, p.kernels[i].end_ns));
    const SampleSummary s = SummarizeSamples(&d);  // sorts d
    if (s.median <= 0) continue;
    // p95 by nearest rank: the ceil(0.95 n)-th smallest sample.
    const size_t rank = (d.size() * 95 + 99) / 100;
    const uint64_t p95 = d[rank - 1];
    const double max_factor = static_cast<double>(s.max) / s.median;
    const double p95_factor = static_cast<double>(p95) / s.median;
    const uint64_t median = static_cast<uint64_t>(std::llround(s.median));
    if (max_factor < kSpreadMinMaxFactor && p95_factor < kSpreadMinP95Factor) continue;
    if (s.max < median + kSpreadMinExcessNs) continue;
    uint64_t excess = 0;
    for (uint64_t x : d) excess += x > median ? x - median : 0;
    // The slowest instances, first seen first among equals.
    std::vector<size_t> slow = indices;
    std::stable_sort(slow.begin(), slow.end(), [&](size_t x, size_t y) {
      return Dur(p.kernels[x].start_ns, p.kernels[x].end_ns) >
             Dur(p.kernels[y].start_ns, p.kernels[y].end_ns);
    });
    Finding f;
    f.id = "kernel_spread";
    f.severity = Severity::kInfo;
    for (size_t i = 0; i < slow.size() && i < kMaxPlaces; ++i) {
      const Kernel& k = p.kernels[slow[i]];
      Place pl = a.PlaceAt(k.start_ns, k.end_ns);
      pl.stream = k.stream_id;
      pl.device = k.launch_config < p.launch_configs.size()
                      ? p.launch_configs[k.launch_config].device_id
                      : 0;
      pl.name = name;
      f.places.push_back(std::move(pl));
    }
    f.where = f.places.front();
    f.evidence = {Text("kernel", name),
                  Count("instances", s.count),
                  Duration("median_us", median),
                  Duration("mean_us", static_cast<uint64_t>(std::llround(s.avg))),
                  Duration("min_us", s.min),
                  Duration("max_us", s.max),
                  Duration("p95_us", p95),
                  Duration("stddev_us", static_cast<uint64_t>(std::llround(s.stddev))),
                  FactorOf("max_factor", max_factor),
                  FactorOf("p95_factor", p95_factor)};
    f.title = name + ": the slowest of " + std::to_string(s.count) + " instances took " +
              FormatDuration(s.max) + ", " + Factor(max_factor) + " its median " +
              FormatDuration(median) + " (p95 " + FormatDuration(p95) + ", mean " +
              FormatDuration(static_cast<uint64_t>(std::llround(s.avg))) + ")";
    f.advice =
        "This kernel's time varies widely, so its mean (the table's average) misleads: read "
        "the median. Slow instances come from GPU clock changes (idle to boost), other work "
        "on the GPU, or different inputs; warm up before measuring and compare medians "
        "(gprof-run stats, gprof-run diff).";
    found.push_back({excess, std::move(f)});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Candidate& x, const Candidate& y) { return x.excess > y.excess; });
  for (size_t i = 0; i < found.size() && i < kMaxSpreadFindings; ++i) {
    out->push_back(std::move(found[i].finding));
  }
}

// The median as `gprof-run stats` computes it (SummarizeSamples), rounded to ns.
uint64_t Median(std::vector<uint64_t> v) {
  if (v.empty()) return 0;
  return static_cast<uint64_t>(SummarizeSamples(&v).median + 0.5);
}

void ShortKernelsFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  uint64_t kernels = 0;
  std::vector<uint64_t> kernel_ns, call_ns, delay_ns;
  for (const Kernel& k : p.kernels) {
    if (!a.InWindow(k.start_ns)) continue;
    ++kernels;
    const int64_t call = a.corr().ApiCall(k.correlation_id);
    if (call < 0) continue;
    const ApiCall& c = p.api_calls[static_cast<size_t>(call)];
    const uint64_t kd = Dur(k.start_ns, k.end_ns), cd = Dur(c.start_ns, c.end_ns);
    if (kd >= cd) continue;
    kernel_ns.push_back(kd);
    call_ns.push_back(cd);
    delay_ns.push_back(Dur(c.start_ns, k.start_ns));
  }
  const uint64_t short_count = kernel_ns.size();
  const double share = Share(short_count, kernels);
  if (short_count < kShortKernelsMinCount || share < kShortKernelsMinShare) return;
  Finding f;
  f.id = "short_kernels";
  f.severity = Severity::kWarn;
  const uint64_t median_kernel = Median(kernel_ns), median_call = Median(call_ns),
                 median_delay = Median(delay_ns);
  f.evidence = {Count("kernels", kernels), Count("short_kernels", short_count),
                Pct("short_kernels_pct", share), Duration("median_kernel_us", median_kernel),
                Duration("median_launch_call_us", median_call),
                Duration("median_launch_to_start_us", median_delay)};
  Place pl = a.PlaceAt(a.ws(), a.we());
  pl.name = "the window";
  f.places.push_back(pl);
  f.where = f.places.front();
  f.title = std::to_string(short_count) + " of " + std::to_string(kernels) +
            " kernels are shorter than the call that launched them (median kernel " +
            FormatDuration(median_kernel) + ", median launch call " + FormatDuration(median_call) +
            "): the GPU waits for launches";
  f.advice =
      "Launch-bound: each kernel does less work than its launch costs. Fuse small ops (larger "
      "batches, fused kernels, torch.compile), or capture the repeated launches in a CUDA graph "
      "(torch.cuda.graphs, torch.compile(mode=\"reduce-overhead\")).";
  out->push_back(std::move(f));
}

void ColdStartFinding(Analysis& a, std::vector<Finding>* out) {
  const std::vector<StepRow>& steps = a.steps();
  if (steps.size() < 3) return;
  const StepRow& first = steps.front();
  std::vector<uint64_t> rest;
  for (size_t i = 1; i < steps.size(); ++i) rest.push_back(steps[i].wall_ns);
  const uint64_t median = Median(rest);
  if (median == 0) return;
  const double factor = static_cast<double>(first.wall_ns) / static_cast<double>(median);
  if (factor < kColdStartMinFactor || first.wall_ns < median + kColdStartMinExcessNs) return;
  // The dead window: from the step's start to its first launch (a call whose GPU work arrived).
  const Profile& p = a.p();
  const uint64_t end = first.start_ns + first.wall_ns;
  std::optional<uint64_t> first_launch;
  for (const ApiCall& c : p.api_calls) {
    if (c.start_ns < first.start_ns || c.start_ns >= end) continue;
    if (a.corr().Gpu(c.correlation_id).empty()) continue;
    if (!first_launch || c.start_ns < *first_launch) first_launch = c.start_ns;
  }
  Finding f;
  f.id = "cold_start";
  f.severity = Severity::kWarn;
  f.evidence = {Count("step", first.number), Duration("step_us", first.wall_ns),
                Duration("median_other_steps_us", median), FactorOf("factor", factor),
                Count("other_steps", rest.size())};
  if (first_launch) {
    f.evidence.push_back(Duration("dead_window_us", *first_launch - first.start_ns));
  }
  Place pl = a.PlaceAt(first.start_ns, end);
  pl.step = first.number;
  pl.name = "ProfilerStep#" + std::to_string(first.number);
  f.places.push_back(pl);
  f.where = f.places.front();
  f.title = "ProfilerStep#" + std::to_string(first.number) + " took " +
            FormatDuration(first.wall_ns) + ", " + Factor(factor) + " the median of the other " +
            std::to_string(rest.size()) + " steps (" + FormatDuration(median) + ")" +
            (first_launch ? "; its first launch came " +
                                FormatDuration(*first_launch - first.start_ns) + " after it began"
                          : std::string());
  f.advice =
      "One-off start-up work (CUDA context and module loading, cuBLAS/cuDNN heuristics, "
      "allocator growth) lands in the first step. Warm up before measuring: skip it with "
      "--wait 1 (or --skip-first N), as torch.profiler's schedule(wait=1, warmup=1, ...) does.";
  out->push_back(std::move(f));
}

int IdOrder(const std::string& id) {
  static constexpr std::string_view kOrder[] = {"overhead_bound", "compute_bound", "gpu_idle",
                                                "sync", "pageable_memcpy", "kernel_spread",
                                                "short_kernels", "cold_start"};
  for (size_t i = 0; i < std::size(kOrder); ++i) {
    if (kOrder[i] == id) return static_cast<int>(i);
  }
  return static_cast<int>(std::size(kOrder));
}

}  // namespace

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarn: return "warn";
    case Severity::kHigh: return "high";
  }
  return "info";
}

const Evidence* Finding::Get(std::string_view key) const {
  for (const Evidence& e : evidence) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

std::vector<Finding> FindFindings(const Profile& profile) {
  Analysis a(profile);
  std::vector<Finding> out;
  const std::vector<BlockingCall> blocking = BlockingCalls(a);
  BoundFindings(a, Shares(a, blocking), &out);
  GpuIdleFindings(a, &out);
  SyncFinding(a, blocking, &out);
  PageableFinding(a, &out);
  ShortKernelsFinding(a, &out);
  ColdStartFinding(a, &out);
  SpreadFindings(a, &out);
  std::stable_sort(out.begin(), out.end(), [](const Finding& x, const Finding& y) {
    if (x.severity != y.severity) return x.severity > y.severity;
    return IdOrder(x.id) < IdOrder(y.id);
  });
  return out;
}

}  // namespace gprof
