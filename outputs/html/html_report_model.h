// What the HTML report draws, computed from a profile before any markup (html_report_model.cpp),
// so that unit tests can check the numbers and the bounds apart from the page. Internal to the
// HTML report (html_report*.cpp and its tests); launcher process only.
//
// Every list here is bounded by the constants below, whatever the profile: the page's size
// depends on them, not on the event count (html_report.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/samples/python_sync.h"
#include "outputs/html/html_report.h"

namespace gprof::html_internal {

// ---- Bounds (each says why it is enough) ----

// Bins across the timeline and the memory chart: about one per pixel column of a laptop screen's
// page width, so finer bins would not show.
inline constexpr size_t kTimelineBins = 600;
// Timeline rows: the busiest host threads, GPU streams and per-device rows (all streams of a
// device in one row, where idle gaps show). A torch program has 2-4 busy threads and a few
// streams per GPU; the rest are named in one line with their busy time.
inline constexpr size_t kMaxHostTracks = 12;
inline constexpr size_t kMaxGpuTracks = 16;
inline constexpr size_t kMaxDeviceRows = 8;
// Step bars: beyond this many steps, each bar is a group of consecutive steps (the slowest of
// them drawn), so a long run still shows its shape.
inline constexpr size_t kMaxStepBars = 300;
// Rows of the table shown with bars, and kernels with a duration distribution.
inline constexpr size_t kTopRows = 15;
inline constexpr size_t kTopKernels = 6;
// Slowest steps listed by number.
inline constexpr size_t kSlowStepsListed = 5;
// Findings shown in full (a profile has at most ~15 ids; gpu_idle has one per device): the rest
// are named in findings.txt.
inline constexpr size_t kMaxFindingsShown = 40;
// Memory charts (one per device with allocations).
inline constexpr size_t kMaxMemoryDevices = 8;
// Ranks drawn in the merged page (the rest are summarized in one line).
inline constexpr size_t kMaxMergedRanks = 64;
// The stacks section: Python functions by samples, Python lines by blocked time, native stacks
// of blocking calls by blocked time, and the frames shown of each native stack. A screenful
// each: where the time went is in the first few; stacks.folded, python_syncs.txt and `stats
// --report cuda_api_stack_sum` have every one.
inline constexpr size_t kTopPythonFunctions = 15;
inline constexpr size_t kTopSyncLines = 10;
inline constexpr size_t kTopNativeStacks = 10;
inline constexpr size_t kNativeFramesShown = 8;
// The host CPU samples section (--cpu-sampling): host functions by self samples, and the sampled
// threads with each one's top function. A screenful each, like the Python functions: the
// .cpu.folded file and `stats --report cpu_sample_sum` have every function.
inline constexpr size_t kTopCpuFunctions = 15;
inline constexpr size_t kTopSampledThreads = 8;

// A step is an outlier when its wall time is at least this factor of the steps' median and this
// much more: cold_start's and kernel_spread's reasoning (a factor the eye sees; below 100 us,
// the floor of gpu_idle's gaps, the difference is launch jitter).
inline constexpr double kStepOutlierFactor = 1.5;
inline constexpr uint64_t kStepOutlierMinExcessNs = 100'000;

// ---- The model ----

struct TimelineTrack {
  enum class Kind : uint8_t { kHost, kStream, kDevice } kind = Kind::kHost;
  uint32_t device = 0;  // kStream, kDevice
  uint32_t id = 0;      // host tid, or stream id
  std::string label;    // "thread 4242 (main)", "GPU 0 stream 7", "GPU 0 (all streams)"
  uint64_t events = 0;  // records that overlap the span
  uint64_t busy_ns = 0;  // the union of its records, clipped to the span
  std::vector<uint64_t> bins;  // busy ns per bin (the union's overlap with each bin)
};

// One idle gap named by a gpu_idle finding, with what the host did meanwhile.
struct TimelineGap {
  uint32_t device = 0;
  uint64_t start_ns = 0;  // absolute
  uint64_t dur_ns = 0;
  std::optional<uint32_t> step;
  std::vector<std::string> context;
};

struct Timeline {
  uint64_t start_ns = 0, end_ns = 0;  // absolute: the findings' window
  // Bins of bin_ns each (the last one may be shorter), at most the `max_bins` of SetSpan: equal
  // integer widths make a record's bin one 64-bit division.
  uint64_t bin_ns = 0;
  size_t bins = 0;
  std::vector<TimelineTrack> tracks;   // shown: per-device rows, host threads, streams
  size_t hidden_host = 0, hidden_streams = 0, hidden_devices = 0;
  uint64_t hidden_host_busy_ns = 0, hidden_streams_busy_ns = 0;
  std::vector<TimelineGap> gaps;       // from the gpu_idle findings, largest first per device
  std::vector<uint64_t> step_starts;   // absolute; empty when more steps than bins / 4

  void SetSpan(uint64_t start, uint64_t end, size_t max_bins);
  // Bin i covers [BinStart(i), BinEnd(i)).
  uint64_t BinStart(size_t i) const { return start_ns + bin_ns * i; }
  uint64_t BinEnd(size_t i) const { return i + 1 >= bins ? end_ns : BinStart(i + 1); }
  size_t BinOf(uint64_t t) const {  // t in [start_ns, end_ns)
    if (t <= start_ns || bin_ns == 0) return 0;
    const uint64_t b = (t - start_ns) / bin_ns;
    return b < bins ? static_cast<size_t>(b) : bins - 1;
  }
};

struct StepBar {
  uint32_t first = 0, last = 0;  // step numbers of the group (equal for one step)
  size_t steps = 1;
  uint64_t wall_ns = 0;          // the slowest step of the group
  uint64_t gpu_busy_ns = 0;      // that step's GPU busy time
  uint32_t number = 0;           // that step's number
  bool cold = false;             // the cold_start finding's step
  bool outlier = false;
};

struct StepsModel {
  bool gpu = false;  // the profile has GPU work (else the bars are wall time only)
  size_t count = 0;
  uint64_t median_wall_ns = 0;
  uint64_t total_wall_ns = 0, total_gpu_busy_ns = 0;
  std::optional<uint32_t> cold_step;  // from the cold_start finding
  std::vector<StepBar> bars;          // at most kMaxStepBars
  std::vector<StepBar> slowest;       // single steps, slowest first, at most kSlowStepsListed
  size_t outliers = 0;
  size_t steps_per_bar = 1;
};

struct KernelDistribution {
  std::string name;  // demangled, as the table names it
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = 0, p95_ns = 0, max_ns = 0;
  double median_ns = 0;  // SummarizeSamples' median (the mean of the two middle values)
};

struct MemorySeries {
  uint32_t device = 0;
  uint64_t ops = 0;                // allocations and frees of the device, whole profile
  uint64_t at_start = 0;           // bytes in use when the span starts
  std::vector<uint64_t> bin_max;   // the most bytes in use during each bin
  uint64_t peak = 0;               // the most bytes in use over the whole profile ...
  uint64_t peak_ns = 0;            // ... first reached then (absolute)
  uint64_t device_total = 0;       // DeviceInfo::total_global_mem (0 = unknown)
};

// A Python function ("function (file:first_line)", whichever of its lines ran) and the
// samples in which it was the innermost frame (self) or anywhere on the stack (total, counted
// once per sample however often it recurs).
struct PythonFunctionRow {
  std::string name;
  uint64_t self = 0;
  uint64_t total = 0;
};

// Blocking CUDA calls (a synchronize, or a copy without Async: python_sync.h's) of one API with
// one native stack from the program's caller outwards (stacks that differ only inside CUDA's
// or gprof-run's libraries are one row).
struct NativeStackRow {
  std::string api;                  // "cudaDeviceSynchronize"
  std::string caller;               // the first frame outside CUDA's and gprof-run's libraries
  std::vector<std::string> frames;  // from that frame outwards, at most kNativeFramesShown
  size_t frames_hidden = 0;
  uint64_t calls = 0;
  uint64_t blocked_ns = 0;
};

struct StacksModel {
  // Sampled Python stacks (samples inside the profile's time range).
  bool sampled = false;
  uint32_t hz = 0;
  uint64_t samples = 0;
  uint64_t missed = 0;  // ticks the sampler missed (the whole file)
  size_t threads = 0;   // threads with a sample in the range
  std::vector<PythonFunctionRow> functions;  // most self samples first, at most kTopPythonFunctions
  size_t functions_total = 0;
  // The Python lines behind the blocking calls (python_syncs.txt's rows).
  std::vector<PythonSyncLine> sync_lines;  // at most kTopSyncLines
  size_t sync_lines_total = 0;
  uint64_t sync_calls = 0, sync_blocked_ns = 0, sync_not_sampled = 0;
  // Native stacks of blocking calls, most blocked time first, at most kTopNativeStacks.
  std::vector<NativeStackRow> native;
  size_t native_total = 0;                       // distinct (API, stack) rows
  uint64_t native_calls = 0, native_blocked_ns = 0;  // all blocking calls with a stack
  bool any() const { return sampled || !native.empty(); }
};

// A host function (its name as the symbolizer gives it) in the --cpu-sampling samples: in how
// many it was the innermost frame (self, with the CPU time those stand for) or anywhere on the
// stack (total, once per sample however often it recurs).
struct CpuFunctionRow {
  std::string name;
  uint64_t self = 0;
  uint64_t total = 0;
  uint64_t self_cpu_ns = 0;
};

// A sampled thread: its samples and the function most often innermost in them.
struct CpuThreadRow {
  uint32_t tid = 0;
  std::string name;  // nvtxNameOsThread's, or ""
  uint64_t samples = 0;
  std::string top_function;
  uint64_t top_self = 0;
};

struct CpuSamplesModel {
  uint64_t samples = 0;  // with a named stack
  uint64_t cpu_ns = 0;   // the CPU time they stand for
  uint32_t hz = 0;
  std::string backend;   // "perf_event_open", "ITIMER_PROF"
  uint64_t dropped = 0;
  std::vector<CpuFunctionRow> functions;  // most self samples first, at most kTopCpuFunctions
  size_t functions_total = 0;
  std::vector<CpuThreadRow> threads;  // most samples first, at most kTopSampledThreads
  size_t threads_total = 0;
  bool any() const { return samples > 0; }
};

struct Model {
  Timeline timeline;
  StepsModel steps;
  std::vector<KernelDistribution> kernels;  // top kernels by GPU time, at most kTopKernels
  std::vector<MemorySeries> memory;         // at most kMaxMemoryDevices
  size_t memory_devices_hidden = 0;
  StacksModel stacks;
  CpuSamplesModel cpu;
};

// The timeline's bins (html_timeline.cpp).
void BuildTimeline(const HtmlReportInput& in, Timeline* tl);

// The stacks section's numbers (html_report_stacks.cpp); any pointer may be nullptr.
StacksModel BuildStacksModel(const Profile& p, const PythonSamples* samples,
                             const PythonSyncs* syncs, const SymbolizedStacks* native);

// The host CPU samples section's numbers (html_report_cpu_samples.cpp): empty without `names`.
CpuSamplesModel BuildCpuSamplesModel(const Profile& p, const CpuSampleNames* names);

// Builds the model of `in` (its profile, findings, context and table must be set).
Model BuildModel(const HtmlReportInput& in);

// ---- Escaping (html_writer.cpp) ----

// Appends `s` as HTML text (also safe inside a double- or single-quoted attribute): invalid UTF-8
// replaced by U+FFFD, control characters other than tab and newline by U+FFFD, & < > " '
// escaped; at most `max_chars` code points, then an ellipsis.
void AppendHtml(std::string_view s, std::string* out, size_t max_chars);
inline constexpr size_t kMaxNameChars = 200;    // a kernel, range or thread name
inline constexpr size_t kMaxTextChars = 600;    // a title, a context line, an evidence text
inline constexpr size_t kMaxAdviceChars = 1200;
std::string Html(std::string_view s, size_t max_chars = kMaxNameChars);

}  // namespace gprof::html_internal

namespace gprof::html_internal {

// ---- Text helpers and sections (html_report_sections.cpp), shared by the pages ----

// `v` with `decimals` decimals ("%.*f"); `v` in decimal digits.
std::string Num(double v, int decimals);
std::string U(uint64_t v);
// "45.2%" of `whole` (1 decimal); "-" when whole is 0.
std::string PercentOf(uint64_t part, uint64_t whole);
// "80.0 MiB" (binary units, 1 decimal; bytes below 1 KiB as "512 B").
std::string BytesText(uint64_t bytes);
// "1,234,567".
std::string Thousands(uint64_t n);

// Step bars as an SVG `width` x `height` (a compact one for the first screen has no axis text).
void AppendStepsSvg(const StepsModel& steps, int width, int height, bool compact,
                    std::string* out);
void AppendStepsSection(const StepsModel& steps, std::string* out);
// "Step time breakdown" (html_step_breakdown.cpp): nothing when there are no steps.
void AppendStepBreakdownSection(const std::vector<StepBreakdown>& steps, std::string* out);
// The `d` of an SVG path drawing a track's busy columns, in bin units (x) and `row_h` (y).
void AppendBusyPath(const Timeline& tl, const TimelineTrack& track, int row_h, std::string* out);
// The per-device rows (at most two) as a small strip with the gpu_idle gaps, for the first
// screen.
void AppendDeviceStrip(const Timeline& tl, int width, std::string* out);
// Times on the axis and in the gap notes are relative to `origin_ns` (the trace's ts).
void AppendTimelineSection(const Timeline& timeline, uint64_t origin_ns, std::string* out);
void AppendTopRowsSection(const TableRows& table, const std::vector<KernelDistribution>& kernels,
                          std::string* out);
void AppendMemorySection(const Model& model, uint64_t origin_ns, std::string* out);
// "Python stacks (sampled)" (html_report_stacks.cpp); nothing when the model has no stacks.
void AppendStacksSection(const StacksModel& stacks, std::string* out);
// "Host CPU samples (--cpu-sampling)"; nothing without samples.
void AppendCpuSamplesSection(const CpuSamplesModel& cpu, std::string* out);

// ---- The page frame and the parts both pages share (html_report.cpp) ----

// The page's start (no script may run: the page has none, and the policy stops any that a name
// could smuggle in) and its one style sheet.
extern const char* const kHead;
extern const char* const kStyle;
const Finding* FindId(const std::vector<Finding>& findings, std::string_view id);
void AppendFindings(const std::vector<Finding>& findings, std::string* out);
std::string FileHref(const std::string& name);
void AppendFiles(const HtmlReportLinks& links, std::string* out);
void AppendFooter(const std::string& version, std::string* out);

}  // namespace gprof::html_internal
