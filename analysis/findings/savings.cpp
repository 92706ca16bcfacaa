// Estimated savings of the findings (savings.h, findings.h: Saving), the order by saving and the
// "fix this first" headline. Every method is an upper bound, written in docs/FINDINGS.md
// ("Estimated saving"). Launcher process only; pure.
#include "analysis/findings/savings.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gprof {
namespace findings_internal {
namespace {

uint64_t Sub(uint64_t x, uint64_t y) { return x > y ? x - y : 0; }

// A duration (ns) or count of the finding's evidence, 0 when it has none.
uint64_t Ev(const Finding& f, std::string_view key) {
  const Evidence* e = f.Get(key);
  return e == nullptr ? 0 : e->n;
}

// Host time in synchronous allocation and free calls in the window (alloc_churn's calls).
uint64_t AllocCallsNs(Analysis& a) {
  static constexpr std::string_view kCalls[] = {
      "cudaMalloc",    "cudaFree",    "cudaMallocHost", "cudaFreeHost", "cudaHostAlloc",
      "cuMemAlloc",    "cuMemFree",   "cuMemAllocHost", "cuMemFreeHost", "cuMemHostAlloc",
      "cudaMallocPitch", "cuMemAllocPitch"};
  uint64_t ns = 0;
  for (const ApiCall& c : a.p().api_calls) {
    if (!a.InWindow(c.start_ns)) continue;
    const std::string_view base = BaseApiName(a.names().ApiCallName(c));
    if (std::find(std::begin(kCalls), std::end(kCalls), base) != std::end(kCalls)) {
      ns += Dur(c.start_ns, c.end_ns);
    }
  }
  return ns;
}

// Kernel time (merged over all devices' kernels) in the window: what a copy can hide behind.
uint64_t KernelBusyNs(Analysis& a) {
  std::vector<Interval> k;
  for (const Kernel& x : a.p().kernels) k.emplace_back(x.start_ns, x.end_ns);
  return CoveredIn(MergeIntervals(std::move(k)), a.ws(), a.we());
}

// The estimate for one finding by its id; false for an id without one.
bool Estimate(Analysis& a, const Finding& f, Saving* s) {
  const std::string& id = f.id;
  if (id == "overhead_bound") {
    s->run_ns = Sub(Ev(f, "window_us"), Ev(f, "gpu_busy_us"));
    s->method = "window less the GPU's busy time: the most a host that kept ahead of the GPU "
                "(fewer launches, CUDA graphs) would take off";
  } else if (id == "dataloader_bound") {
    s->run_ns = Ev(f, "dataloader_us");
    s->method = "the stepping thread's time in the DataLoader's next(): saved if the batches "
                "were ready when asked for (workers, prefetching)";
  } else if (id == "gpu_idle") {
    s->run_ns = Ev(f, "idle_us");
    s->method = "the counted idle gaps: saved if the work that leaves the GPU idle overlapped "
                "its work";
  } else if (id == "sync") {
    s->run_ns = Ev(f, "host_blocked_us");
    s->method = "the host's time blocked in the synchronizations: saved only where it had "
                "other work to queue meanwhile";
  } else if (id == "pageable_memcpy") {
    s->run_ns = PageableAtPinnedSavingNs(a);
    s->method = "the pageable copies' time less the same bytes at pinned bandwidth (the "
                "profile's pinned copies of that kind, else twice their own)";
  } else if (id == "serialized_copy") {
    s->run_ns = std::min(Ev(f, "serialized_time_us"), KernelBusyNs(a));
    s->method = "the serialized copies' time, at most the kernel time they could hide behind "
                "on another stream";
  } else if (id == "kernel_spread") {
    s->run_ns = Ev(f, "instances") * Sub(Ev(f, "mean_us"), Ev(f, "median_us"));
    s->method = "instances x (mean - median): every instance at the median's time";
  } else if (id == "short_kernels") {
    s->run_ns = Ev(f, "short_kernels") *
                Sub(Ev(f, "median_launch_call_us"), Ev(f, "median_kernel_us"));
    s->method = "short kernels x (median launch call - median kernel): launches that cost no "
                "more than their kernel (CUDA graphs, fused kernels)";
  } else if (id == "cold_start") {
    s->run_ns = Sub(Ev(f, "step_us"), Ev(f, "median_other_steps_us"));
    s->method = "the first step's excess over the median step, once per run";
  } else if (id == "gemm_bias_copy") {
    s->run_ns = Ev(f, "copy_time_us");
    s->method = "the bias copies' GPU time: saved when the bias is fused into the GEMM";
  } else if (id == "profiler_overhead") {
    s->run_ns = Ev(f, "estimated_cost_us");
    s->method = "the profiler's estimated cost on the program's threads: saved by recording less";
  } else if (id == "alloc_churn") {
    s->run_ns = AllocCallsNs(a);
    s->method = "the host's time in the allocation and free calls: saved by allocating once "
                "(or with a caching or stream-ordered allocator)";
  } else if (id == "compute_bound") {
    s->method = "none from the host: the GPU sets the pace, only faster kernels shorten it";
  } else if (id == "heavy_kernel") {
    s->method = "none: names the kernels worth speeding up, not time lost";
  } else if (id == "memory_peak" || id == "memory_growth") {
    s->method = "none in time: a memory finding";
  } else {
    return false;
  }
  return true;
}

}  // namespace

uint64_t PageableAtPinnedSavingNs(Analysis& a) {
  const Profile& p = a.p();
  // Observed pinned bandwidth per copy kind: all bytes over all time, across the profile.
  std::map<CopyKind, std::pair<uint64_t, uint64_t>> pinned;  // kind -> (bytes, ns)
  for (const Memcpy& m : p.memcpys) {
    if (m.src_kind != MemKind::kPinned && m.dst_kind != MemKind::kPinned) continue;
    if (m.src_kind == MemKind::kPageable || m.dst_kind == MemKind::kPageable) continue;
    auto& [bytes, ns] = pinned[m.kind];
    bytes += m.bytes;
    ns += Dur(m.start_ns, m.end_ns);
  }
  uint64_t saving = 0;
  for (const Memcpy& m : p.memcpys) {
    if (!m.is_async || !a.InWindow(m.start_ns)) continue;
    if (m.src_kind != MemKind::kPageable && m.dst_kind != MemKind::kPageable) continue;
    const uint64_t d = Dur(m.start_ns, m.end_ns);
    const auto it = pinned.find(m.kind);
    uint64_t at_pinned = d / 2;
    if (it != pinned.end() && it->second.first > 0 && it->second.second > 0) {
      // In double, and no longer than the copy took: a bad record must not overflow the cast.
      const double t = static_cast<double>(m.bytes) * static_cast<double>(it->second.second) /
                       static_cast<double>(it->second.first);
      at_pinned = t >= static_cast<double>(d) ? d : static_cast<uint64_t>(t + 0.5);
    }
    saving += Sub(d, at_pinned);
  }
  return saving;
}

void EstimateSavings(Analysis& a, std::vector<Finding>* findings) {
  const size_t steps = a.steps().size();
  for (Finding& f : *findings) {
    if (!f.saving) {
      Saving s;
      if (!Estimate(a, f, &s)) continue;
      f.saving = std::move(s);
    }
    Saving& s = *f.saving;
    s.run_ns = std::min(s.run_ns, a.window());  // nothing saves more than the window
    if (steps > 0) {
      s.step_ns = s.run_ns / steps;
      s.whole_ns = a.window() / steps;
    } else {
      s.step_ns.reset();
      s.whole_ns = a.window();
    }
  }
}

}  // namespace findings_internal

void OrderBySaving(std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(), [](const Finding& x, const Finding& y) {
    if (x.saving.has_value() != y.saving.has_value()) return x.saving.has_value();
    return x.saving && x.saving->run_ns > y.saving->run_ns;
  });
}

std::string SavingHeadline(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    if (!f.saving || f.saving->run_ns == 0) continue;
    const Saving& s = *f.saving;
    std::string line = "Fix this first: " + f.id + ", up to ";
    if (s.step_ns) {
      line += FormatDuration(*s.step_ns) + " of " + FormatDuration(s.whole_ns) + " per step";
    } else {
      line += FormatDuration(s.run_ns) + " of the " + FormatDuration(s.whole_ns) + " window";
    }
    return line + " (" + s.method + ")";
  }
  return "";
}

}  // namespace gprof
