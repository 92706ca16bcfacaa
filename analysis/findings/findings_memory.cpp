// The memory findings (docs/FINDINGS.md): memory_peak, memory_growth, alloc_churn, from CUDA's
// allocation and free records (Profile::memory_ops) or, in a torch program run with
// --profile-memory, memory_peak and memory_growth from its caching allocator's blocks
// (Profile::torch_memory: the tensors, where CUDA sees only the allocator's segments). Launcher
// process only. Pure.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "analysis/findings/findings_rules.h"
#include "analysis/timeline/memory_timeline.h"
#include "text/format.h"

namespace gprof::findings_internal {
namespace {

// Device memory in use at `ts` (after every record before it).
uint64_t InUseAt(const Profile& p, const std::vector<MemoryEvent>& t, uint64_t ts) {
  auto it = std::upper_bound(t.begin(), t.end(), ts, [&](uint64_t v, const MemoryEvent& e) {
    return v < p.memory_ops[e.op].ts_ns;
  });
  return it == t.begin() ? 0 : std::prev(it)->in_use;
}

// Bytes torch's blocks hold at `ts`.
uint64_t AllocatedAt(const Profile& p, const std::vector<TorchMemoryPoint>& t, uint64_t ts) {
  auto it = std::upper_bound(t.begin(), t.end(), ts, [&](uint64_t v, const TorchMemoryPoint& e) {
    return v < p.torch_memory[e.event].ts_ns;
  });
  return it == t.begin() ? 0 : std::prev(it)->allocated;
}

std::string Largest(const std::vector<uint64_t>& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < kMaxPlaces; ++i) {
    out += (i ? ", " : "") + FormatMemory(static_cast<int64_t>(bytes[i]));
  }
  return out;
}

// memory_peak from torch's blocks: the op that made the peak is the innermost range open on the
// allocating thread at that time.
void TorchPeak(Analysis& a, const std::vector<TorchMemoryPoint>& t, uint64_t cuda_peak,
               std::vector<Finding>* out) {
  const int64_t at = TorchAllocatedPeak(t);
  if (at < 0) return;
  const Profile& p = a.p();
  const TorchMemoryPoint& peak = t[static_cast<size_t>(at)];
  const TorchMemoryEvent& made = p.torch_memory[peak.event];
  std::vector<uint64_t> live_bytes;
  for (uint32_t i : LiveTorchBlocks(p, t, static_cast<size_t>(at))) {
    live_bytes.push_back(p.torch_memory[i].bytes);
  }
  Place pl = a.PlaceAt(made.ts_ns, made.ts_ns);
  pl.device = made.device;
  if (made.tid != 0) pl.thread = made.tid;
  int64_t op = -1;  // the innermost range on its thread around it: the latest-starting one
  for (size_t i = 0; i < a.host().size(); ++i) {
    const HostEvent& e = a.host()[i];
    if (!e.api && e.tid == made.tid && e.start <= made.ts_ns && made.ts_ns < e.end &&
        (op < 0 || e.start >= a.host()[static_cast<size_t>(op)].start)) {
      op = static_cast<int64_t>(i);
    }
  }
  std::string where;
  if (op >= 0) {
    pl.name = a.EventName(a.host()[static_cast<size_t>(op)]);
    pl.context = a.EnclosingRanges(op);
    where = ", in " + pl.name;
  } else {
    pl.name = "[memory]";
  }
  const std::string largest = Largest(live_bytes);
  Finding f;
  f.id = "memory_peak";
  f.severity = Severity::kInfo;
  f.evidence = {Bytes("peak_bytes", peak.allocated), Count("live_allocations", live_bytes.size()),
                Text("largest_live", largest), Count("device", made.device),
                Text("source", "torch caching allocator"), Bytes("cuda_peak_bytes", cuda_peak)};
  f.places.push_back(pl);
  f.where = pl;
  f.title = "Tensor memory (torch's caching allocator) peaks at " +
            FormatMemory(static_cast<int64_t>(peak.allocated)) +
            (pl.step ? " in step " + std::to_string(*pl.step) : std::string()) + where + " (" +
            std::to_string(live_bytes.size()) + " live blocks; largest " + largest + ")";
  f.advice = "The peak decides whether a larger batch or model fits. Free or reuse the "
             "largest live tensors before this point, or recompute instead of keeping them "
             "(activation checkpointing); CUDA memory the allocator holds (cuda_peak_bytes) "
             "is at least this.";
  out->push_back(std::move(f));
}

// memory_peak from CUDA's records.
void CudaPeak(Analysis& a, const std::vector<MemoryEvent>& t, std::vector<Finding>* out) {
  const int64_t at = MemoryPeakEvent(t);
  if (at < 0) return;
  const Profile& p = a.p();
  const MemoryEvent& peak = t[static_cast<size_t>(at)];
  std::vector<uint64_t> live_bytes;
  for (uint32_t i : LiveAllocations(p, t, static_cast<size_t>(at))) {
    live_bytes.push_back(p.memory_ops[i].bytes);
  }
  Finding f;
  f.id = "memory_peak";
  f.severity = Severity::kInfo;
  const MemoryOp& made = p.memory_ops[peak.op];
  Place pl = a.PlaceAt(made.ts_ns, made.ts_ns);
  pl.device = made.device_id;
  const int64_t call = a.corr().ApiCall(made.correlation_id);
  std::string where;
  if (call >= 0) {
    const int64_t e = a.ApiEvent(static_cast<size_t>(call));
    pl.name = a.names().ApiCallName(p.api_calls[static_cast<size_t>(call)]);
    pl.thread = p.api_calls[static_cast<size_t>(call)].tid;
    pl.context = a.EnclosingRanges(e);
    if (!pl.context.empty()) where = ", in " + pl.context.front();
  }
  const std::string largest = Largest(live_bytes);
  f.evidence = {Bytes("peak_bytes", peak.in_use), Count("live_allocations", live_bytes.size()),
                Text("largest_live", largest), Count("device", made.device_id)};
  f.places.push_back(pl);
  f.where = pl;
  f.title = "Device memory in use peaks at " + FormatMemory(static_cast<int64_t>(peak.in_use)) +
            (pl.step ? " in step " + std::to_string(*pl.step) : std::string()) + where + " (" +
            std::to_string(live_bytes.size()) + " live allocations; largest " + largest + ")";
  f.advice = "The peak decides whether a larger batch or model fits. Free or reuse the "
             "largest live buffers before this point, or recompute instead of keeping them "
             "(activation checkpointing).";
  out->push_back(std::move(f));
}

}  // namespace

void MemoryFindings(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  const std::vector<MemoryEvent> t = MemoryTimeline(p);
  const std::vector<TorchMemoryPoint> tt = TorchAllocatedTimeline(p);
  const bool torch = !tt.empty();  // the tensors' view replaces the segments' for peak and growth
  if (t.empty() && !torch) return;

  // memory_peak: when and where memory in use was highest, and what was live then.
  if (torch) {
    const int64_t cuda_at = MemoryPeakEvent(t);
    TorchPeak(a, tt, cuda_at < 0 ? 0 : t[static_cast<size_t>(cuda_at)].in_use, out);
  } else {
    CudaPeak(a, t, out);
  }

  // memory_growth: in use at the end of each step rises step after step.
  const std::vector<StepRow>& steps = a.steps();
  if (steps.size() >= kMemoryGrowthMinSteps) {
    std::vector<uint64_t> at_end;
    for (const StepRow& s : steps) {
      const uint64_t end = s.start_ns + s.wall_ns;
      at_end.push_back(torch ? AllocatedAt(p, tt, end) : InUseAt(p, t, end));
    }
    size_t rises = 0;
    bool falls = false;
    for (size_t i = 1; i < at_end.size(); ++i) {
      rises += at_end[i] > at_end[i - 1] ? 1 : 0;
      falls = falls || at_end[i] < at_end[i - 1];
    }
    const uint64_t growth = at_end.back() > at_end.front() ? at_end.back() - at_end.front() : 0;
    const double rising = static_cast<double>(rises) / static_cast<double>(at_end.size() - 1);
    if (!falls && rising >= kMemoryGrowthMinRisingShare && growth >= kMemoryGrowthMinBytes) {
      Finding f;
      f.id = "memory_growth";
      f.severity = Severity::kWarn;
      const uint64_t per_step = growth / (at_end.size() - 1);
      f.evidence = {Count("steps", steps.size()), Bytes("first_step_end_bytes", at_end.front()),
                    Bytes("last_step_end_bytes", at_end.back()), Bytes("growth_bytes", growth),
                    Bytes("growth_per_step_bytes", per_step),
                    Pct("rising_steps_pct", rising)};
      if (torch) f.evidence.push_back(Text("source", "torch caching allocator"));
      Place pl = a.PlaceAt(steps.front().start_ns, steps.back().start_ns + steps.back().wall_ns);
      pl.name = "the steps";
      f.places.push_back(pl);
      f.where = pl;
      f.title = std::string(torch ? "Tensor memory (torch's caching allocator)"
                                  : "Device memory in use") +
                " grows step after step: " +
                FormatMemory(static_cast<int64_t>(at_end.front())) + " after step " +
                std::to_string(steps.front().number) + ", " +
                FormatMemory(static_cast<int64_t>(at_end.back())) + " after step " +
                std::to_string(steps.back().number) + " (+" +
                FormatMemory(static_cast<int64_t>(per_step)) + " per step)";
      f.advice = "Memory that never comes back: a leak (tensors kept alive across steps, e.g. "
                 "a loss accumulated with its graph: use loss.item() or .detach()), or a cache "
                 "that has not settled. Compare the live allocations of two steps "
                 "(torch.cuda.memory_summary, or this profile's memory track).";
      out->push_back(std::move(f));
    }
  }

  // alloc_churn: many synchronous allocations and frees per step (pool allocations are cheap).
  if (steps.size() >= 2) {
    std::vector<uint64_t> per_step;
    uint64_t allocs = 0, frees = 0, pinned = 0;
    for (const StepRow& s : steps) {
      uint64_t n = 0;
      for (const MemoryOp& m : p.memory_ops) {
        if (m.is_async || m.ts_ns < s.start_ns || m.ts_ns >= s.start_ns + s.wall_ns) continue;
        ++n;
        (m.op == MemoryOpKind::kAlloc ? allocs : frees) += 1;
        pinned += m.mem_kind == MemKind::kPinned ? 1 : 0;
      }
      per_step.push_back(n);
    }
    const uint64_t median = Median(per_step);
    if (median >= kAllocChurnMinPerStep) {
      Finding f;
      f.id = "alloc_churn";
      f.severity = Severity::kWarn;
      f.evidence = {Count("steps", steps.size()), Count("allocations", allocs),
                    Count("frees", frees), Count("pinned", pinned),
                    Count("median_per_step", median)};
      Place pl = a.PlaceAt(steps.front().start_ns, steps.back().start_ns + steps.back().wall_ns);
      pl.name = "the steps";
      f.places.push_back(pl);
      f.where = pl;
      f.title = std::to_string(median) + " allocations and frees per step (median of " +
                std::to_string(steps.size()) + " steps; " + std::to_string(allocs) +
                " allocations, " + std::to_string(frees) + " frees, " + std::to_string(pinned) +
                " of them pinned)";
      f.advice = "cudaMalloc, cudaFree and pinned allocations synchronize and cost tens of "
                 "microseconds to milliseconds each. Allocate once and reuse, or use a pool: "
                 "cudaMallocAsync / a memory pool, or PyTorch's caching allocator.";
      out->push_back(std::move(f));
    }
  }
}

}  // namespace gprof::findings_internal
