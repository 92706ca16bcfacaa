// Findings from one profile (see findings.h; every rule in docs/FINDINGS.md): FindFindings runs
// the rules of findings_rules.h over one shared Analysis (findings_analysis.h) and orders what they
// found. This file also holds the overhead_bound / compute_bound rule. Launcher process only.
// Pure: no file access.
#include "analysis/findings/findings.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "analysis/findings/findings_analysis.h"
#include "analysis/findings/findings_rules.h"
#include "analysis/findings/savings.h"
#include "analysis/tables/key_averages.h"

namespace gprof {
namespace findings_internal {

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
  LaunchThreadCpu(a, blocking, &s);
  return s;
}

void BoundFindings(Analysis& a, const GpuShares& s, std::vector<Finding>* out) {
  const Profile& p = a.p();
  if (!p.HasGpuData() || a.window() == 0) return;
  const double gpu = Share(s.gpu_busy, a.window());
  const double recorded = Share(s.host_busy, a.window());
  // With thread CPU samples the host is judged by the launching thread's CPU time outside
  // blocking calls, against the window less its time waiting for a CPU: work without a range
  // counts, sleeping inside one does not, and a loaded machine changes neither (docs/FINDINGS.md).
  const double busy = s.launch_cpu ? Share(s.launch_busy, s.launch_own) : 0.0;
  const double host = s.launch_cpu ? busy : recorded;
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
                Duration("host_busy_us", s.host_busy), Pct("host_busy_pct", recorded),
                Count("kernels", kernels),         Duration("self_cpu_total_us", self_cpu),
                Duration("self_cuda_total_us", self_cuda)};
  if (s.launch_cpu) {
    f.evidence.push_back(Count("launch_thread", s.launch_tid));
    f.evidence.push_back(Count("launch_threads", s.launch_threads));
    f.evidence.push_back(Duration("thread_cpu_us", s.launch_cpu->cpu_ns));
    f.evidence.push_back(Pct("thread_cpu_pct", Share(s.launch_cpu->cpu_ns, a.window())));
    f.evidence.push_back(Duration("thread_cpu_wait_us", s.launch_cpu->wait_ns));
    f.evidence.push_back(Duration("thread_sync_us", s.launch_sync));
    f.evidence.push_back(Pct("thread_busy_pct", busy));
  }
  // How the host figure of the title was measured.
  const std::string host_text =
      s.launch_cpu ? "its launching thread " + std::to_string(s.launch_tid) + " computes " +
                         Percent(busy) + " of the time it does not wait for a CPU (" +
                         FormatDuration(s.launch_busy) + " of CPU outside synchronizations), "
                         "recorded host work covering " + Percent(recorded)
                   : "the host is busy " + Percent(recorded);
  Place where = a.PlaceAt(a.ws(), a.we());
  where.device = s.device;
  f.where = where;
  const std::string dev = "GPU " + std::to_string(s.device);
  if (overhead) {
    f.id = "overhead_bound";
    f.severity = gpu < kOverheadBoundHighGpuShare ? Severity::kHigh : Severity::kWarn;
    f.title = "Overhead-bound: " + dev + " is busy " + Percent(gpu) + " of the " +
              FormatDuration(a.window()) + " window while " + host_text + " (Self CPU total " +
              FormatDuration(self_cpu) + ", Self CUDA total " + FormatDuration(self_cuda) + ")";
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
              FormatDuration(self_cuda) + ", Self CPU total " + FormatDuration(self_cpu) + ")" +
              (s.launch_cpu ? "; its launching thread " + std::to_string(s.launch_tid) +
                                  " used " + FormatDuration(s.launch_cpu->cpu_ns) + " of CPU"
                            : std::string());
    f.advice =
        "The GPU sets the pace: speed up the kernels at the top of the table by Self CUDA "
        "(lower precision, better-suited kernels, less work); host-side changes will not make "
        "this run faster.";
  }
  out->push_back(std::move(f));
}

}  // namespace findings_internal

namespace {

using namespace findings_internal;  // NOLINT: the rules and their shared analysis

int IdOrder(const std::string& id) {
  static constexpr std::string_view kOrder[] = {
      "overhead_bound", "compute_bound", "dataloader_bound", "gpu_idle", "sync", "pageable_memcpy",
      "serialized_copy", "kernel_spread", "short_kernels", "cold_start",   "heavy_kernel",
      "gemm_bias_copy",  "profiler_overhead", "memory_growth", "alloc_churn",  "memory_peak",
      "straggler",       "imbalance",         "comm_overlap"};
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

std::vector<Finding> FindFindings(const Profile& profile, FindingsContext* context,
                                  const FindingsInputs& inputs) {
  Analysis a(profile);
  std::vector<Finding> out;
  const std::vector<BlockingCall> blocking = BlockingCalls(a);
  const GpuShares shares = Shares(a, blocking);
  if (context != nullptr) {
    context->origin_ns = TraceOriginNs(profile);
    context->window_start_ns = a.ws();
    context->window_end_ns = a.we();
    context->steps = a.steps();
    context->busiest_device = shares.device;
    context->gpu_busy_ns = shares.gpu_busy;
    context->host_busy_ns = shares.host_busy;
    context->step_breakdown = StepBreakdowns(profile);
  }
  BoundFindings(a, shares, &out);
  GpuIdleFindings(a, inputs.cpu_samples, inputs.python_samples, &out);
  SyncFinding(a, blocking, inputs.python_samples, &out);
  ColdStartFinding(a, &out);
  PageableFinding(a, &out);
  SerializedCopyFinding(a, &out);
  GemmBiasCopyFinding(a, &out);
  SpreadFindings(a, &out);
  ShortKernelsFinding(a, &out);
  HeavyKernelFinding(a, &out);
  ProfilerOverheadFinding(a, &out);
  DataLoaderFinding(a, &out);
  MemoryFindings(a, &out);
  EstimateSavings(a, &out);
  SortFindings(&out);
  OrderBySaving(&out);
  return out;
}

void SortFindings(std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(), [](const Finding& x, const Finding& y) {
    if (x.severity != y.severity) return x.severity > y.severity;
    return IdOrder(x.id) < IdOrder(y.id);
  });
}

}  // namespace gprof
