// Findings about what the host does while the GPU waits (findings_rules.h): gpu_idle (gaps in a
// device's work and the host work during each), sync (calls that block the host) and cold_start
// (a first step far slower than the rest). Rules and thresholds: docs/FINDINGS.md.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analysis/findings/findings_analysis.h"
#include "analysis/findings/findings_rules.h"
#include "analysis/samples/cpu_samples.h"
#include "analysis/samples/python_gaps.h"
#include "analysis/samples/python_sync.h"

namespace gprof::findings_internal {

namespace {

// What the host did during [gs, ge): the time each range or call on any thread spent there by
// itself (its overlap with the gap minus that of the events nested in it, so a call inside a
// range takes its time from the range), summed per (thread, name), the most time first; CUPTI
// overhead records on a thread count with their whole overlap.
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
  // CUPTI's own work on a program thread (a buffer request or flush) can be what the gap is.
  for (const Overhead& o : a.p().overheads) {
    if (o.tid == 0 || o.start_ns >= ge || o.end_ns <= gs) continue;
    by_name[{o.tid, std::string(OverheadName(o.kind))}] +=
        std::min(o.end_ns, ge) - std::max(o.start_ns, gs);
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

// The thread with the most CUDA API calls in the window (the one that launches), 0 when none.
uint32_t MostCallsThread(Analysis& a) {
  std::map<uint32_t, uint64_t> calls;
  for (const ApiCall& c : a.p().api_calls) {
    if (a.InWindow(c.start_ns)) ++calls[c.tid];
  }
  uint32_t best = 0;
  uint64_t most = 0;
  for (const auto& [tid, n] : calls) {
    if (n > most) {
      best = tid;
      most = n;
    }
  }
  return best;
}

}  // namespace

void GpuIdleFindings(Analysis& a, const CpuSampleNames* cpu, const PythonSamples* python,
                     std::vector<Finding>* out) {
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
      if (cpu != nullptr) {  // the sampled functions first: what the host computed meanwhile
        const uint64_t gap = gaps[i].second - gaps[i].first;
        std::vector<std::string> sampled;
        for (const GapFunction& g :
             FunctionsDuring(a.p(), *cpu, gaps[i].first, gaps[i].second, kMaxPlaces)) {
          sampled.push_back(DescribeGapFunction(g, gap));
        }
        pl.context.insert(pl.context.begin(), sampled.begin(), sampled.end());
      }
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
              (f.where->context.front().rfind("the host spent", 0) == 0 ? ": "
                                                                        : ", while the host ran ") +
              f.where->context.front();
    // Over every gap, from the samples: one gap may hold too few samples to say (a thread that
    // waited for a CPU there), all of them together do.
    // Native samples first; else the Python sampler's, of the thread that launched the most.
    std::vector<GapFunction> top =
        cpu == nullptr ? std::vector<GapFunction>{} : FunctionsInGaps(a.p(), *cpu, gaps, 1);
    const bool native = !top.empty();
    if (!native && python != nullptr) {
      top = PythonFunctionsInGaps(*python, MostCallsThread(a), gaps, 1);
    }
    if (!top.empty()) {
      f.evidence.push_back(Text("host_function", NamedFunction(top.front())));
      f.evidence.push_back(Duration("host_function_us", top.front().ns));
      f.evidence.push_back(Count("host_function_samples", top.front().samples));
      f.evidence.push_back(Text("host_function_source", native ? "native samples"
                                                                : "Python samples"));
      f.title += "; over all the gaps, " + DescribeGapsFunction(top.front(), idle);
      if (!native) f.title += " of the launching thread's Python stack";
    }
    f.advice =
        "The GPU waits for the host in these gaps. Overlap the host work named here with GPU "
        "work: load and preprocess data ahead (DataLoader workers, pin_memory, prefetching), "
        "move host-side computation out of the loop, and avoid synchronizing calls; open the "
        "trace at the times shown.";
    out->push_back(std::move(f));
  }
}

void SyncFinding(Analysis& a, const std::vector<BlockingCall>& calls, const PythonSamples* python,
                 std::vector<Finding>* out) {
  if (calls.empty() || a.window() == 0) return;
  uint64_t blocked = 0, copies = 0;
  std::vector<Interval> spans;
  for (const BlockingCall& c : calls) {
    blocked += Dur(c.start, c.end);
    copies += c.copy ? 1 : 0;
    spans.emplace_back(c.start, c.end);
  }
  const double share =
      Share(CoveredIn(MergeIntervals(std::move(spans)), a.ws(), a.we()), a.window());
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
  // The Python line behind most of the blocked time, from the sampled stacks (python_sync.h:
  // the blocking calls starting in the window, each given the line sampled during or near it).
  if (python != nullptr) {
    const PythonSyncs syncs = SyncsByPythonLine(a.p(), *python, a.ws(), a.we());
    if (!syncs.lines.empty()) {
      const PythonSyncLine& top = syncs.lines.front();
      f.evidence.push_back(Text("python_line", top.where));
      f.evidence.push_back(Count("python_line_calls", top.calls));
      f.evidence.push_back(Duration("python_line_blocked_us", top.blocked_ns));
      f.evidence.push_back(Count("python_sampled_calls", syncs.calls - syncs.not_sampled));
      f.evidence.push_back(Text("python_line_source", "sampled"));
      f.title += "; the Python line with the most blocked time: " + top.where + ", " +
                 FormatDuration(top.blocked_ns) + " in " + std::to_string(top.calls) +
                 (top.calls == 1 ? " call" : " calls") + " (sampled)";
    }
  }
  f.advice =
      "Each of these calls stops the host until the GPU catches up; the GPU then idles while "
      "the host prepares the next work. Keep them out of the hot loop: .item(), .cpu(), "
      "printing a GPU tensor, torch.cuda.synchronize() and cudaMemcpy to the host each "
      "synchronize; keep values on the GPU, read them every N steps, or use cudaMemcpyAsync "
      "into pinned memory with an event.";
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
  const std::string work =
      p.kernels.empty() && p.memcpys.empty() && p.memsets.empty()
          ? "One-off work (lazy initialization, caches filling, allocator growth, the first "
            "batch's loading) lands in the first step."
          : "One-off start-up work (CUDA context and module loading, cuBLAS/cuDNN heuristics, "
            "allocator growth) lands in the first step.";
  // A window that begins after step 0 (first_step > 0) already had steps left out before it
  // (--wait, --warmup, --skip-first): telling that user to pass --wait 1 again would be wrong.
  f.advice =
      p.info.first_step > 0
          ? work + " This window already starts at step " + std::to_string(p.info.first_step) +
                ", after the steps --wait/--warmup/--skip-first left out, and its first step is "
                "still slow: the one-off work lasts longer than those steps, or comes back. Leave "
                "out more steps (a larger --wait or --skip-first), or look at what this step does "
                "that the others do not."
          : work + " Warm up before measuring: skip it with --wait 1 (or --skip-first N), as "
                   "torch.profiler's schedule(wait=1, warmup=1, ...) does.";
  out->push_back(std::move(f));
}

}  // namespace gprof::findings_internal
