// A dump too long to render whole, rendered segment by segment so that the launcher's memory is
// bounded by its segments, not by the run's length (model/dump.h: a long run's dump is a sequence
// of segments of a few hundred thousand launches each). Launcher process only.
//
// Three passes over the segments (model/dump_segment_reader.h):
//   1. survey: the run's tables and counters, its trace origin, its long ranges
//      (analysis/tables/segment_rows.h), the totals of the closing line, and the GPU records in
//      flight at each cut (model/gpu_checks.h);
//   2. per segment, with its launches' work put back with them: its part of the table's rows
//      (SegmentedKeyAverages), its events in trace.json (SegmentedTraceJson) and trace.pftrace
//      (SegmentedPerfettoTrace); then it is dropped;
//   3. the findings, part by part: consecutive segments up to kFindingsPartRecords records read
//      whole and analysed alone (analysis/findings/findings_parts.h); the first part stays for
//      report.html's timeline. (The SQLite export reads the dump on its own:
//      segmented_export.h.)
// The table, the traces and the findings cover the whole run (the findings as the worst part
// shows them: the caller says so in findings.txt, findings.json and on stderr). What a whole
// render has and this does not: findings over the run as one window, memory peaks in the trace
// header (segmented_trace.h has the trace's own differences).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/samples/python_sync.h"
#include "launcher/progress.h"
#include "launcher/render/closing_line.h"
#include "launcher/report.h"
#include "model/profile.h"
#include "outputs/table/table.h"

namespace gprof {
struct PythonSliceSet;
struct PythonSamples;
}  // namespace gprof

namespace gprof::launcher {

// A findings part's size in records (ranges, API calls, GPU records, ...): about a million
// launches, whose findings take about 300 MiB.
inline constexpr uint64_t kFindingsPartRecords = 2'000'000;

struct SegmentedRender {
  // The first findings part's records under the run's tables, info and counters: report.html
  // shows it, the table's notes and the traces' header read its counters.
  Profile window;
  uint32_t segments = 0;
  uint32_t window_segments = 0;  // in the first part
  uint64_t window_end_ns = 0;    // the first part's last record end
  std::vector<Finding> findings;     // the run's, part by part (findings_parts.h)
  FindingsContext findings_context;  // the first part's (report.html's steps and timeline)
  uint32_t finding_parts = 0;
  // --cpu-sampling: the run's folded stacks (FoldedCpuStacks) and samples, for <stem>.cpu.folded.
  std::string cpu_folded;
  uint64_t cpu_samples = 0;
  // --python-sampling: the run's blocking CUDA calls by Python line, added up part by part (for
  // python_syncs.txt and report.html; no per-call indices).
  PythonSyncs python_syncs;
  TableRows rows;      // the whole run's, sorted as the table shows them
  // With --with-stack (table.group_by_stack) and the run's Python samples, `rows` are grouped by
  // source location, and these are the rows by name (report.html's op table); else empty.
  TableRows rows_by_name;
  std::vector<std::string> json_files;  // of the first JSON format asked for (json, else json.gz)
  std::vector<std::string> other_json_files;  // of json.gz when both were asked for
  bool pftrace = false;
  Totals totals;       // the whole run's counts for the closing line
};

// Whether the dump at `path` is rendered segment by segment under `traces`.
bool RenderInSegments(const std::string& path, const TraceOptions& traces);

// Renders the dump at `path`: reads it twice, writes the traces asked for in `traces` to
// `json_path` (and its .gz) and `pftrace_path`, and returns the rest for the caller to write.
// Throws std::runtime_error with the reader's message on a bad dump.
// `part_records`: a findings part's size (tests make it small). `python`: called once after the
// survey with the run's profile (its info and tables, no records), returns the run's sampled
// Python stacks (--python-sampling: the slices for the traces, the samples for the findings and
// the blocking calls by Python line), each nullptr when there are none; what it returns must
// outlive the call.
struct RunPython {
  const PythonSliceSet* slices = nullptr;
  const PythonSamples* samples = nullptr;
};
using PythonSliceLoader = std::function<RunPython(const Profile& run)>;
SegmentedRender RenderDumpInSegments(const std::string& path, const TableOptions& table,
                                     const TraceOptions& traces, const std::string& json_path,
                                     const std::string& pftrace_path, Progress* progress,
                                     const std::string& shown,
                                     uint64_t part_records = kFindingsPartRecords,
                                     const PythonSliceLoader& python = {});

// Adds a segmented render's totals to the report's (AddToTotals for a whole profile).
void AddSegmentedTotals(Totals* into, const Totals& from);

// How the findings of a segmented render were made ("" when in one part: as a whole render), for
// findings.txt, findings.json and report.html.
std::string SegmentedFindingsScope(const SegmentedRender& r);

// The lines saying what a segmented render's findings and report cover ("" for none).
std::string SegmentedRenderNote(const SegmentedRender& r, const std::string& dump);

}  // namespace gprof::launcher
