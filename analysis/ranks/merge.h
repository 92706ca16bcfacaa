// Merge: the profiles of several processes (the ranks of a distributed run, or any processes of
// one run) as one trace and one table, for `gprof-run merge` and the end of a multi-rank run.
// Launcher process and benchmarks only. Pure: profiles come in through a loader the caller
// passes, text goes out through a JsonSink or as a string; no file access here. This header is
// the analysis half (the survey, the order, the rows across inputs); the merged trace is an
// output (outputs/trace/merged_trace.h), and so is the merged table (outputs/table/merge_table.h).
//
// Data flow, never more than one segment per input in memory (a rank's profile can be 1 GB):
//   1. survey   for each input, segment by segment: AddSegmentToMerge (SummarizeForMerge of
//               each segment, added up) keeps what the merge needs (identity, time origin, counters, the table's KeyAverages rows, the
//               distributed findings' per step numbers: MergeDistSummary), the profile is
//               dropped;
//   2. order    SortMergeInputs: by rank, then processes without a rank (host, pid);
//      clocks   AlignMergeClocks: each input's offset from the first input's clock (clock_align.h),
//               from the collectives the survey kept; the common origin is the earliest aligned
//               absolute time of all inputs (all dumps carry CLOCK_REALTIME ns);
//   3. trace    WriteMergedTrace reads the inputs again, all at once, one segment each at a
//               time, plans each segment (TracePlan) and writes the events of all inputs in time
//               order with trace_json_events' writer, placed at the common origin with pids and
//               flow ids of their own, and their sampled Python stacks (python_slices.h);
//   4. table    MergeRows combines the small per-input row vectors: per row min / median /
//               max across the inputs; FormatMergedTable prints them;
//   5. findings MergedFindings (merge_findings.h) compares the inputs' per step numbers and
//               GPU shares the survey kept (MergeDistSummary): straggler, imbalance,
//               comm_overlap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/ranks/clock_align.h"
#include "analysis/tables/key_averages.h"
#include "model/profile.h"

namespace gprof {

// One step of an input, kept for the distributed findings (merge_findings.h). Steps are
// StepRows of the input's own profile (Profile::steps and ProfilerStep#N ranges), times on its
// own clock.
struct MergeStep {
  uint32_t number = 0;       // N of ProfilerStep#N: the same iteration on every rank
  uint64_t start_ns = 0;     // absolute
  uint64_t wall_ns = 0;
  uint64_t gpu_busy_ns = 0;  // StepRow::gpu_busy_ns: all of its GPU work, clipped to the step
  // Time before the collective: from the step's start to the start of the first communication
  // kernel (IsCommunicationKernel) that starts in the step; none without one.
  std::optional<uint64_t> before_collective_ns;
};

// What the distributed findings need of one input: per step numbers and a few per-input sums,
// never events (merge_findings.cpp: SummarizeDistributed).
struct MergeDistSummary {
  // The findings' window (findings_analysis.h): the steps' span, else the active part of the run.
  uint64_t window_start_ns = 0;  // absolute
  uint64_t window_ns = 0;
  bool gpu_work = false;           // some kernel, copy or memset on some device
  uint32_t busiest_device = 0;     // the device with the most busy time in the window
  uint64_t gpu_busy_ns = 0;        // its busy time (union of its kernels, copies, memsets)
  // Kernels starting in the window, split the way HTA splits them: communication (NCCL) and
  // compute (every other kernel; copies and memsets are neither). Per device the union of each
  // kind clipped to the window, and the time both ran at once, summed over the devices.
  uint64_t comm_kernels = 0;
  uint64_t comm_ns = 0;
  uint64_t compute_ns = 0;
  uint64_t overlap_ns = 0;
  std::vector<MergeStep> steps;  // by number, the first of a repeated number
};

// What the merge keeps of one input after the survey.
struct MergeInput {
  std::string file;            // where it came from (shown in the trace's metadata)
  ProfileInfo info;            // rank, host, pid, program, start, window
  uint64_t origin_ns = 0;      // TraceOriginNs: its own trace's baseTimeNanoseconds
  uint64_t events = 0;         // records in the profile (host and GPU)
  bool gpu = false;            // Profile::HasGpuData
  Counters counters;
  std::vector<EventStats> rows;  // KeyAverages(profile)
  MergeDistSummary dist;         // for the distributed findings
  // Sampled Python stacks (--python-sampling): set by the caller, which finds the process's
  // .pysamples; samples inside the profile's time range (0: none) and their rate.
  uint64_t python_samples = 0;
  uint32_t python_hz = 0;
  std::string python_file;       // the .pysamples read ("" when none)
  std::vector<CollectiveEnds> collectives;  // SurveyCollectives: for AlignMergeClocks
  ClockAlignment clock;  // set by AlignMergeClocks: add clock.offset_ns to place its times
};

MergeInput SummarizeForMerge(const Profile& profile, std::string file);
// The survey of an input read segment by segment (model/dump_segment_reader.h), so that the
// survey holds one segment, never the run: adds `segment`'s summary into `in` (`first`: it
// replaces what `in` held, but for `in->file`). Rows, per-step numbers, kernel sums and
// collectives add up; the info and counters are the latest segment's (summed by the reader).
// Across a segment boundary two things differ from a whole read: a GPU record and the range or
// step it belongs to in different segments are not joined (their CUDA totals and a step's GPU
// busy time leave it out), and a rank whose busiest device changes between segments keeps the
// busier segment's device.
void AddSegmentToMerge(const Profile& segment, bool first, MergeInput* in);

// By rank; processes without a rank after all ranked ones, by (host, pid); ties by program, file.
void SortMergeInputs(std::vector<MergeInput>* inputs);

// Lines up the clocks of `inputs` (sorted): sets each one's `clock` against the first's.
void AlignMergeClocks(std::vector<MergeInput>* inputs);
// What that alignment left: the spread of the collectives' aligned ends (ClockSpread).
ClockSpread MergeClockSpread(const std::vector<MergeInput>& inputs);

// "rank 3 (node1:4242)"; without a rank "train (node1:4242)" (the program's name).
std::string MergeInputLabel(const MergeInput& input);

// The earliest aligned origin_ns of `inputs` (0 when empty): every merged "ts" is relative to it.
uint64_t MergedOriginNs(const std::vector<MergeInput>& inputs);

// "rank 0 (node1:11), rank 2 (node1:13)": the inputs with sampled Python stacks ("" when none).
std::string MergeInputsWithPythonSamples(const std::vector<MergeInput>& inputs);

// ---- the rows across inputs (merge_rows.cpp): the merged table's and the merged page's --------

// A value across the inputs: min, median (SummarizeSamples' median: the mean of the two middle
// values for an even count) and max, and the input (index into the sorted inputs) with the max,
// the first one on a tie.
struct AcrossInputs {
  uint64_t min = 0;
  double median = 0;
  uint64_t max = 0;
  size_t max_input = 0;
};
// `values[k]` is input k's value; the median is SummarizeSamples' (as `stats` and `diff`).
AcrossInputs SummarizeAcross(std::vector<uint64_t> values);

// One row of the merged table: a KeyAverages key (name and device/host kind). An input without
// the row counts 0 (it did none of that work), so every statistic is over all inputs; `inputs`
// says how many have the row.
struct MergedRow {
  std::string name;
  bool device = false;
  size_t inputs = 0;
  AcrossInputs calls, self_cuda, self_cpu, cpu_total;
  uint64_t self_cuda_sum = 0, self_cpu_sum = 0;  // over all inputs (the sort keys)
};

// The rows, by Self CUDA summed over the inputs (when some input has GPU data), then Self CPU
// summed, descending, then by name, host rows before device rows.
std::vector<MergedRow> MergeRows(const std::vector<MergeInput>& inputs);

}  // namespace gprof
