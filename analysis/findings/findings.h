// Findings: the verdicts the seed articles teach people to reach by hand from a table and a trace
// ("overhead-bound", "the GPU waits for the host", "this kernel's mean misleads"), computed from
// one profile with the numbers that justify them (launcher process only). Pure: a Profile in,
// findings and text out; no file access. Every id, rule, threshold and evidence field is in
// docs/FINDINGS.md; the thresholds are the constants below, each with its reasoning.
//
// The analysis window. Findings compare times against "the window": the span of the profile's
// steps (first step start to last step end; Profile::steps and ProfilerStep#N ranges, as
// `gprof-run stats --by-step` counts them) when it has steps, else the active part of the run:
// from the earlier of the first GPU record and the first call that launched GPU work to the later
// of the last GPU record's end and the last launching call's end. A whole run's collection span
// would include interpreter start-up and library loading (seconds of a Python program) and make
// every run look GPU-idle.
//
// Times in `where` are relative to the trace's origin (TracePlan::base_ns: the collection start
// or the earliest event), so ts_us is the timestamp Perfetto shows for trace.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/tables/diff.h"
#include "analysis/tables/stats.h"
#include "analysis/tables/step_breakdown.h"
#include "model/profile.h"

namespace gprof {

// ---- Thresholds (reasoning in docs/FINDINGS.md) ----

// overhead_bound: the busiest GPU is busy less than this share of the window ...
inline constexpr double kOverheadBoundMaxGpuShare = 0.25;
// ... while recorded host work (ranges, CUDA calls, not counting time blocked in a
// synchronization) covers at least this share: the host, not a sleep or untraced I/O, fills it.
inline constexpr double kOverheadBoundMinHostShare = 0.50;
// overhead_bound is "high" below this GPU share (the seeds' 64x64 matmul: about 1 %).
inline constexpr double kOverheadBoundHighGpuShare = 0.05;
// compute_bound: the busiest GPU is busy at least this share of the window.
inline constexpr double kComputeBoundMinGpuShare = 0.80;

// gpu_idle: a gap in a device's work counts when it lasts at least this long: 100 us is 10-20
// kernel launches of host time (5-10 us each), so a shorter gap is launch cadence, not waiting.
inline constexpr uint64_t kGpuIdleMinGapNs = 100'000;
// gpu_idle is reported when the counted gaps cover at least this share of the window: below it
// they are the ordinary seams between steps and launches (a compute-bound run has a few).
inline constexpr double kGpuIdleMinShare = 0.05;
// gpu_idle severity by that share.
inline constexpr double kGpuIdleWarnShare = 0.10;
inline constexpr double kGpuIdleHighShare = 0.50;

// sync: reported when the host is blocked at least this share of the window, or makes at least
// kSyncManyCalls blocking calls (a .item() per step blocks little each time but serializes the
// host with the GPU every time).
inline constexpr double kSyncMinShare = 0.01;
inline constexpr uint64_t kSyncManyCalls = 10;
inline constexpr double kSyncWarnShare = 0.05;
inline constexpr double kSyncHighShare = 0.25;

// pageable_memcpy: "warn" from this share of the window spent in such copies, or this many.
inline constexpr double kPageableWarnShare = 0.01;
inline constexpr uint64_t kPageableWarnCount = 10;

// kernel_spread: a kernel needs this many instances (diff's noise floor: below five, one outlier
// can be the median) ...
inline constexpr uint64_t kSpreadMinInstances = kDiffNoiseMinInstances;
// ... and its slowest instance this many times its median, or its p95 kSpreadMinP95Factor times ...
inline constexpr double kSpreadMinMaxFactor = 2.0;
inline constexpr double kSpreadMinP95Factor = 1.5;
// ... and the slowest instance at least this much above the median: below it the difference is
// clock and launch jitter nobody can act on.
inline constexpr uint64_t kSpreadMinExcessNs = 20'000;

// At most this many places per finding, and kernel_spread findings per profile (gpu_idle has one
// per device with work).
// short_kernels (HTA's launch-bound signal): kernels shorter than the CUDA call that launched
// them. At least this many such kernels in the window, and at least this share of all kernels:
// fewer are not a pattern, and a minority of tiny kernels among long ones does not bound the run.
inline constexpr uint64_t kShortKernelsMinCount = 50;
inline constexpr double kShortKernelsMinShare = 0.5;

// cold_start: the first step of the profile takes at least this factor of the median of the others
// (with at least two others) and at least kColdStartMinExcessNs more: one-off work (CUDA context,
// cuBLAS heuristics, lazy module loading, allocator growth) that warm-up steps would absorb.
inline constexpr double kColdStartMinFactor = 2.0;
inline constexpr uint64_t kColdStartMinExcessNs = 1'000'000;

// serialized_copy: copies between host and device that overlap no kernel on another stream of
// their device, reported when they take at least this share of the window (below it, overlapping
// them saves too little to be worth a second stream), "warn" from kSerializedCopyWarnShare.
inline constexpr double kSerializedCopyMinShare = 0.05;
inline constexpr double kSerializedCopyWarnShare = 0.10;

// profiler_overhead: reported when gprof-run and CUPTI lost records, or when their estimated cost
// on the program's threads (CUPTI's overhead records there plus the collector's sampled recording
// cost per API call) reaches this share of the window; "warn" from kProfilerOverheadWarnShare.
inline constexpr double kProfilerOverheadMinShare = 0.01;
inline constexpr double kProfilerOverheadWarnShare = 0.05;

// memory_growth: device memory in use at the end of each step never falls, rises in at least
// this share of the step-to-step transitions, over at least kMemoryGrowthMinSteps steps, by at
// least kMemoryGrowthMinBytes in all (below it: noise, a settling cache).
inline constexpr size_t kMemoryGrowthMinSteps = 4;
inline constexpr double kMemoryGrowthMinRisingShare = 0.75;
inline constexpr uint64_t kMemoryGrowthMinBytes = 1u << 20;

// alloc_churn: the median step makes at least this many synchronous allocations and frees
// (device or pinned; stream-ordered pool allocations are cheap and do not count).
inline constexpr uint64_t kAllocChurnMinPerStep = 4;

// dataloader_bound: the thread that steps the optimizer spends at least this share of the step
// time in torch's DataLoader __next__ (below it a faster loader saves too little to lead with);
// "warn" from kDataLoaderWarnShare, "high" from kDataLoaderHighShare (the loader is most of it).
inline constexpr double kDataLoaderMinShare = 0.10;
inline constexpr double kDataLoaderWarnShare = 0.25;
inline constexpr double kDataLoaderHighShare = 0.50;

inline constexpr size_t kMaxPlaces = 3;
inline constexpr size_t kMaxSpreadFindings = 3;

// ---- Findings ----

enum class Severity : uint8_t { kInfo = 0, kWarn = 1, kHigh = 2 };
std::string_view SeverityName(Severity s);  // "info", "warn", "high"

// One named number. Durations are held in ns and written in microseconds (JSON keys end in
// "_us"); percentages end in "_pct"; factors ("x times the median") in "_factor".
struct Evidence {
  enum class Kind : uint8_t { kCount, kBytes, kDuration, kPercent, kFactor, kText };
  std::string key;  // as written in findings.json
  Kind kind = Kind::kCount;
  uint64_t n = 0;   // kCount, kBytes, kDuration (ns)
  double x = 0;     // kPercent (0..100), kFactor
  std::string text; // kText
};

// A place in time a finding points at, findable in the trace.
struct Place {
  std::optional<uint32_t> step;  // ProfilerStep#N the place starts in
  uint64_t ts_ns = 0;            // relative to the trace origin
  uint64_t dur_ns = 0;
  std::optional<uint32_t> thread;  // host thread (tid)
  std::optional<uint32_t> stream;  // CUDA stream
  std::optional<uint32_t> device;
  std::string name;                  // what is there: a call, a kernel, a copy ("" for a gap)
  std::vector<std::string> context;  // what surrounds it (per id: docs/FINDINGS.md)
};

// What fixing a finding would save at most (docs/FINDINGS.md, "Estimated saving": one method per
// id). An upper bound, not a forecast: findings that describe the same time (gpu_idle and
// overhead_bound) each claim it, so savings do not add up.
struct Saving {
  uint64_t run_ns = 0;               // in the window, all steps together
  std::optional<uint64_t> step_ns;   // run_ns / steps, when the profile has steps
  uint64_t whole_ns = 0;             // what it is a part of: the mean step, else the window
  std::string method;                // how it was estimated, one plain sentence
};

struct Finding {
  std::string id;
  Severity severity = Severity::kInfo;
  std::string title;
  std::vector<Evidence> evidence;
  std::optional<Place> where;  // the most telling place (== places.front() when there are places)
  std::vector<Place> places;   // up to kMaxPlaces, most telling first
  std::string advice;
  // Set by FindFindings for every id it knows (savings.cpp); a rule may set its own first (then
  // only step_ns and whole_ns are filled in). Distributed findings carry none.
  std::optional<Saving> saving;

  // The evidence with this key, or null.
  const Evidence* Get(std::string_view key) const;
};

// Every finding of `profile`, each with its estimated saving, ordered by that saving (largest
// first, OrderBySaving), and where savings tie by severity (high first), then id order
// (overhead_bound, compute_bound, dataloader_bound, gpu_idle, sync, pageable_memcpy,
// serialized_copy, kernel_spread, short_kernels, cold_start, heavy_kernel, gemm_bias_copy,
// profiler_overhead, memory_growth, alloc_churn, memory_peak; then the distributed ids of
// merge_findings.h: straggler, imbalance, comm_overlap), then subject. Deterministic.
// With `context`, also what the rules measured against (the window, the steps, the busy shares),
// for other views of the same profile that must agree with the findings (the HTML report).
struct FindingsContext {
  uint64_t origin_ns = 0;        // TraceOriginNs: places' ts_ns are relative to it
  uint64_t window_start_ns = 0;  // the window, absolute
  uint64_t window_end_ns = 0;
  std::vector<StepRow> steps;    // the steps, as `gprof-run stats --by-step` lists them
  uint32_t busiest_device = 0;   // the device with the most busy time in the window
  uint64_t gpu_busy_ns = 0;      // its busy time in the window (kernels, copies, memsets)
  uint64_t host_busy_ns = 0;     // host busy time in the window, less time blocked in syncs
  std::vector<StepBreakdown> step_breakdown;  // each step's time by category (step_breakdown.h)
};
// What the launcher read beside the profile, passed in so that the findings read no files.
struct PythonSamples;  // python_samples.h
struct CpuSampleNames;  // cpu_samples.h
struct FindingsInputs {
  // The process's sampled Python stacks (--python-sampling), or none: `sync` then names the
  // Python line with the most blocked time in the window (python_sync.h: sampled).
  const PythonSamples* python_samples = nullptr;
  // The named native stack samples (--cpu-sampling, cpu_samples.h), or none: `gpu_idle` then
  // names the host functions sampled during each gap, with their time.
  const CpuSampleNames* cpu_samples = nullptr;
};
std::vector<Finding> FindFindings(const Profile& profile, FindingsContext* context = nullptr,
                                  const FindingsInputs& inputs = {});

// Findings with the larger estimated saving first (stable; those without one last): the order of
// findings.json, findings.txt and report.html. FindFindings returns them so.
void OrderBySaving(std::vector<Finding>* findings);
// "Fix this first: <id>, up to 41 ms of 46 ms per step (<method>)" for the first finding with a
// saving above zero, or "" when none has one.
std::string SavingHeadline(const std::vector<Finding>& findings);

// That order: by severity (high first), then id order; stable, so findings of one id keep the
// order they were found in (their subject order).
void SortFindings(std::vector<Finding>* findings);

// Outputs. JSON: {"headline", "findings": [{"id", "severity", "title", "evidence": {...},
// "where": {...}, "places": [...], "advice", "saving": {...}}], "step_breakdown": [...]} ("where" and "places" left out when there is no place). Text: one
// block per finding (findings.txt). Summary: the short section printed on stderr after the table,
// one line per finding, then the "Fix this first" headline when there is one (or "Findings:
// none").
// With `breakdown`, also "step_breakdown": one object per step with its slices in microseconds.
// `scope`, when not empty, says what part of the run the findings analysed (a long run rendered
// segment by segment: launcher/render/segmented_render.h): JSON "scope", a "Scope:" line.
std::string FormatFindingsJson(const std::vector<Finding>& findings,
                               const std::vector<StepBreakdown>* breakdown = nullptr,
                               const std::string& scope = "");
std::string FormatFindingsText(const std::vector<Finding>& findings,
                               const std::string& scope = "");
// `heading` starts the section ("Merged findings" for the merged view's).
std::string FormatFindingsSummary(const std::vector<Finding>& findings,
                                  std::string_view heading = "Findings");

}  // namespace gprof
