// Stats: Nsight Systems-style summary reports (`nsys stats`) from one or more profiles, for
// `gprof-run stats` (launcher process only). Pure: profiles in, rows and text out.
//
// Reports, with nsys's names, column headers and semantics:
//   cuda_api_sum           one row per CUDA API name (runtime and driver calls)
//   cuda_gpu_kern_sum      one row per kernel name (demangled, as nsys shows by default)
//   cuda_gpu_mem_time_sum  one row per memory operation ("[CUDA memcpy Host-to-Device]", ...)
//   cuda_gpu_mem_size_sum  the same operations by bytes, in MB (1 MB = 1e6 bytes, as nsys)
//   nvtx_sum               one row per (range name, style PushPop / StartEnd)
// and, on request (not by default), memory_sum: CUDA's allocations and frees per owning range or
// call (stats_memory.h), in MB as cuda_gpu_mem_size_sum;
// and, for --by-step, step_sum: one row per step (ProfilerStep#N), with its wall time, how much
// of it some GPU was busy (kernels, memcpys, memsets) and how many kernels started in it.
//
// Statistics per row (SummarizeSamples):
//   Time (%)  the row's total over the sum of all rows' totals of the report, times 100
//   Avg       total / count
//   Med       the median: the middle value of the sorted samples; for an even count the mean
//             of the two middle values (nsys's median() SQL aggregate, like Python's
//             statistics.median)
//   StdDev    the sample standard deviation, sqrt(sum((x - avg)^2) / (n - 1)), and 0 for a
//             single sample (nsys's stdev() aggregate is the sample one; it shows 0.0 for one
//             instance)
// Rows are ordered by total descending, then by name, so outputs are deterministic.
//
// Several profiles (processes, windows) are pooled: every sample of every profile goes into the
// row of its name; the caller chooses which profiles to add (the launcher adds, per process, its
// whole-run dump or else its windows, as `report` counts them).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "analysis/tables/stats_memory.h"
#include "model/profile.h"

namespace gprof {

// The five nsys report names, in the order `stats` prints them by default.
const std::vector<std::string_view>& StatsReportNames();
inline constexpr std::string_view kStepReportName = "step_sum";
// On request: CUDA API calls with a native stack (GPROF_BACKTRACE) per (API name, the stack's
// first function outside CUDA's and gprof-run's libraries): count and total time, by time.
inline constexpr std::string_view kStackReportName = "cuda_api_stack_sum";

struct SampleSummary {
  uint64_t count = 0;
  uint64_t total = 0;
  double avg = 0;
  double median = 0;
  uint64_t min = 0;
  uint64_t max = 0;
  double stddev = 0;
};

// The steps of a profile: Profile::steps, then its step ranges (ProfilerStep#N, kRangeStep)
// whose number Profile::steps does not have; unsorted.
std::vector<Step> ProfileSteps(const Profile& profile);

// Summary of `samples` (sorted in place). All zero for no samples.
SampleSummary SummarizeSamples(std::vector<uint64_t>* samples);

// nsys's name of a memcpy kind: "[CUDA memcpy Host-to-Device]" (ENUM_CUDA_MEMCPY_OPER labels).
std::string MemcpyOperationName(CopyKind kind);
inline constexpr std::string_view kMemsetOperationName = "[CUDA memset]";

// One row of a *_sum report. `style` is used by nvtx_sum only.
struct StatsRow {
  std::string name;
  std::string style;
  SampleSummary s;
  double percent = 0;  // Time (%) (0 for cuda_gpu_mem_size_sum, which has none)
};

// One step of step_sum.
struct StepRow {
  uint32_t pid = 0;
  uint32_t number = 0;
  uint64_t start_ns = 0;
  uint64_t wall_ns = 0;
  uint64_t gpu_busy_ns = 0;  // union of GPU intervals of all devices, clipped to the step
  double gpu_busy_percent = 0;
  uint64_t kernels = 0;      // kernels that started inside [start, end)
};

// A formatted report: nsys's headers and typed cells, ready for table, CSV or JSON.
struct StatsColumn {
  std::string header;
  enum Kind { kInt, kFixed, kText } kind = kInt;
  int table_decimals = 1;  // kFixed: decimals in the table and in CSV
  int csv_decimals = 1;
};
using StatsCell = std::variant<uint64_t, double, std::string>;
struct StatsTable {
  std::string name;   // "cuda_api_sum", ...
  std::string title;  // "CUDA API Summary", ...
  std::vector<StatsColumn> columns;
  std::vector<std::vector<StatsCell>> rows;
};

class StatsCollector {
 public:
  // Pools the samples of `profile` (names resolved with its own string table).
  void Add(const Profile& profile);

  // Rows of one of StatsReportNames(); throws std::invalid_argument for another name.
  std::vector<StatsRow> Rows(std::string_view report) const;
  // Steps of every profile added, by pid, then step number, then start.
  std::vector<StepRow> Steps() const;

  // Rows() / Steps() as a table with nsys's headers (`report` may be kStepReportName or
  // kMemoryReportName).
  StatsTable Table(std::string_view report) const;

 private:
  using Samples = std::map<std::string, std::vector<uint64_t>>;
  Samples api_, kernels_, mem_time_, mem_bytes_;
  std::map<std::pair<std::string, std::string>, std::vector<uint64_t>> nvtx_;  // (name, style)
  std::vector<StepRow> steps_;
  std::map<std::string, MemoryOwnerRow> memory_;
  std::map<std::pair<std::string, std::string>, std::vector<uint64_t>> api_stack_;  // (API, frame)
};

// Text outputs of several tables. Table: nsys's console layout (" ** Title (name):", a header,
// dashes, right-aligned numbers with thousands separators). CSV: a header line of the column
// headers, then one line per row (RFC 4180 quoting); with several tables each block is preceded
// by its title line and separated by a blank line. JSON: one object, report name -> array of
// row objects keyed by the column headers.
std::string FormatStatsTables(const std::vector<StatsTable>& tables);
std::string FormatStatsCsv(const std::vector<StatsTable>& tables);
std::string FormatStatsJson(const std::vector<StatsTable>& tables);

}  // namespace gprof
