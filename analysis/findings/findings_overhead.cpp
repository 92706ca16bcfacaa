// profiler_overhead (findings_rules.h): what profiling itself cost this run and what it lost:
// CUPTI's overhead records on the program's threads (activity buffer requests and flushes, ...),
// the collector's own recording cost (sampled, Profile::collector_cost), the activity buffers
// CUPTI filled, and the loss counters. Rule and thresholds: docs/FINDINGS.md.
#include <algorithm>
#include <string>
#include <vector>

#include "analysis/findings/findings_analysis.h"
#include "analysis/findings/findings_rules.h"

namespace gprof::findings_internal {

void ProfilerOverheadFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  if (a.window() == 0) return;
  // CUPTI's own overhead on the program's threads (device-side records have no thread).
  uint64_t requests = 0, flushes = 0, other = 0, cupti_ns = 0;
  std::vector<size_t> records;
  for (size_t i = 0; i < p.overheads.size(); ++i) {
    const Overhead& o = p.overheads[i];
    if (o.tid == 0 || !a.InWindow(o.start_ns)) continue;
    records.push_back(i);
    cupti_ns += Dur(o.start_ns, o.end_ns);
    if (o.kind == OverheadKind::kActivityBufferRequest) {
      ++requests;
    } else if (o.kind == OverheadKind::kActivityBuffer) {
      ++flushes;
    } else {
      ++other;
    }
  }
  // The collector's recording cost: the sampled average per event times the events recorded here.
  uint64_t api_calls = 0, gpu_calls = 0, range_events = 0;
  for (const ApiCall& c : p.api_calls) {
    if (!a.InWindow(c.start_ns)) continue;
    ++api_calls;
    gpu_calls += a.corr().Gpu(c.correlation_id).empty() ? 0 : 1;
  }
  for (const HostRange& r : p.ranges) range_events += a.InWindow(r.start_ns) ? 2 : 0;
  const CollectorCost& cost = p.collector_cost;
  const double per_api = cost.api_samples == 0
                             ? 0.0
                             : static_cast<double>(cost.api_sample_ns) / cost.api_samples;
  const double per_range = cost.range_samples == 0
                               ? 0.0
                               : static_cast<double>(cost.range_sample_ns) / cost.range_samples;
  const uint64_t recording_ns =
      static_cast<uint64_t>(std::llround(per_api * api_calls + per_range * range_events));
  const uint64_t total_ns = recording_ns + cupti_ns;
  const double share = Share(total_ns, a.window());
  const Counters& c = p.counters;
  const uint64_t gpu_lost = c.cupti_dropped_records + c.gpu_records_incomplete;
  const uint64_t lost = gpu_lost + c.host_events_dropped;
  if (lost == 0 && c.cupti_buffers_refused == 0 && share < kProfilerOverheadMinShare) return;

  Finding f;
  f.id = "profiler_overhead";
  f.severity = lost != 0 || c.cupti_buffers_refused != 0 || share >= kProfilerOverheadWarnShare
                   ? Severity::kWarn
                   : Severity::kInfo;
  std::stable_sort(records.begin(), records.end(), [&](size_t x, size_t y) {
    return Dur(p.overheads[x].start_ns, p.overheads[x].end_ns) >
           Dur(p.overheads[y].start_ns, p.overheads[y].end_ns);
  });
  for (size_t i = 0; i < records.size() && i < kMaxPlaces; ++i) {
    const Overhead& o = p.overheads[records[i]];
    Place pl = a.PlaceAt(o.start_ns, o.end_ns);
    pl.thread = o.tid;
    pl.name = std::string(OverheadName(o.kind));
    f.places.push_back(std::move(pl));
  }
  if (!f.places.empty()) f.where = f.places.front();
  const uint64_t per_gpu_call = gpu_calls == 0 ? 0 : total_ns / gpu_calls;
  f.evidence = {Duration("estimated_cost_us", total_ns),
                Pct("estimated_cost_pct", share),
                Duration("per_gpu_call_us", per_gpu_call),
                Count("gpu_calls", gpu_calls),
                Duration("cupti_overhead_us", cupti_ns),
                Count("cupti_buffer_requests", requests),
                Count("cupti_buffer_flushes", flushes),
                Count("cupti_other_overheads", other),
                Duration("recording_us", recording_ns),
                Duration("recording_per_api_call_us", static_cast<uint64_t>(std::llround(per_api))),
                Duration("recording_per_range_event_us",
                         static_cast<uint64_t>(std::llround(per_range))),
                Count("api_calls", api_calls),
                Count("range_events", range_events),
                Count("recording_samples", cost.api_samples + cost.range_samples),
                Count("activity_buffers", cost.activity_buffers),
                Bytes("activity_bytes", cost.activity_bytes),
                Count("gpu_records_lost", gpu_lost),
                Count("cupti_buffers_refused", c.cupti_buffers_refused),
                Count("host_events_dropped", c.host_events_dropped),
                Duration("window_us", a.window())};
  f.title = "Profiling cost about " + FormatDuration(total_ns) + " on the program's threads (" +
            Percent(share) + " of the window" +
            (gpu_calls != 0 ? ", " + FormatDuration(per_gpu_call) + " per CUDA call with GPU work"
                            : std::string()) +
            "): " + std::to_string(requests + flushes) + " CUPTI buffer requests/flushes (" +
            FormatDuration(cupti_ns) + "), recording " + FormatDuration(recording_ns) +
            (lost != 0 ? "; " + std::to_string(lost) + " records lost" : std::string()) +
            (c.cupti_buffers_refused != 0
                 ? "; " + std::to_string(c.cupti_buffers_refused) + " buffer requests refused"
                 : std::string());
  f.advice =
      "This is gprof-run's and CUPTI's own cost, not the program's: subtract it before comparing "
      "host times with an unprofiled run. It does not include CUPTI's per-call callback and "
      "activity-record cost inside the CUDA driver, which only a run without the profiler "
      "measures (bench/). Fewer, larger activity buffers (GPROF_ACTIVITY_BUFFER_KIB) mean fewer "
      "requests; lost records need a larger GPROF_PENDING_MIB (a host ahead of the GPU), "
      "GPROF_ACTIVITY_POOL or GPROF_HOST_BUFFER_MIB; "
      "--api-filter and a schedule (--wait/--active) record less.";
  out->push_back(std::move(f));
}

}  // namespace gprof::findings_internal
