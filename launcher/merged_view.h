// The merged view of the dumps in one or more output directories (analysis/ranks/merge.h): which dumps
// are merged together, and the files it writes. Shared by `gprof-run merge DIR...` and the end of
// a run whose directory holds dumps of several ranks. Launcher process only.
//
// Sampled Python stacks: a dump <dir>/<program>.<pid>[...].gpdump has those of
// <dir>/<program>.<pid>.pysamples (launcher/python/python_stacks.h), the samples inside its time range;
// they go on that process's sampled tracks in the merged trace, and the trace's metadata, the
// merged page and MergedViewText say which processes had them.
//
// Groups: the whole-run dumps (<program>.<pid>.gpdump) of all the directories form one group;
// window dumps (<program>.<pid>.cycle<C>.steps<A>-<B>.gpdump) form one group per cycle C. Each
// group gives <out>/<prefix>trace.json, <out>/<prefix>table.txt and the distributed findings
// (analysis/ranks/merge_findings.h) as <out>/<prefix>findings.json and <out>/<prefix>findings.txt,
// and the merged page <out>/<prefix>report.html, prefix "" for the whole run and "cycle<C>." for
// a cycle.
//
// All or nothing: every dump of every group is read (surveyed) before anything is written, and
// the outputs go to temporary files renamed into place only when all of them are complete.
//
// Memory: the survey holds one segment of one dump at a time, the trace one segment of every
// dump in full at a time (model/dump_segment_reader.h); neither grows with a rank's run length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launcher/merge_trace_policy.h"
#include "launcher/report.h"

namespace gprof::launcher {

struct MergeGroup {
  bool window = false;
  uint32_t cycle = 0;
  std::string prefix;               // of its output files: "" or "cycle3."
  std::vector<std::string> dumps;   // paths, ordered by directory, then name
};

// The directories whose dumps `dir` stands for: itself when it holds dumps, else its immediate
// subdirectories that do (one per host or rank copied into one place: run/nodeA, run/nodeB),
// sorted by name, leaving out `merged`, and links; none when neither holds any.
std::vector<std::string> DumpDirsUnder(const std::string& dir);

// The groups of the dumps in `dirs` (DumpDirsUnder each; whole run first, then cycles
// ascending); `error` names a path that is not a directory. A directory without dumps adds
// nothing.
std::vector<MergeGroup> FindMergeGroups(const std::vector<std::string>& dirs, std::string* error);

struct MergedGroupOutput {
  std::string title;       // "whole run", "cycle 3, steps 4-5"
  std::string trace_path;
  std::string table_path;
  std::string findings_path;  // findings.txt (findings.json beside it)
  std::string page_path;      // report.html ("" with html off)
  // What stderr shows of the group: the table's text (table.txt), then the findings' short
  // section (FormatFindingsSummary). One string, so that every caller that prints the table
  // prints the findings after it.
  std::string table;
  size_t processes = 0;
  // The processes whose sampled Python stacks (their .pysamples, beside each dump) are in the
  // merged trace: "rank 0 (node1:11), rank 1 (node1:12)"; "" when none.
  std::string python_sampled;
};

struct MergeResult {
  std::string error;        // "" when everything was written; else nothing was
  bool bad_input = false;   // the error is an unreadable dump (not an output failure)
  std::vector<MergedGroupOutput> groups;
  uint64_t events = 0;      // records merged, all groups
  // Warnings for stderr, each line ending in '\n': a .pysamples that could not be used (the
  // merge goes on without that process's Python stacks).
  std::string notes;
};

// Merges every group into `out_dir` (created when missing); tables show at most `row_limit`
// rows (-1 = all); `html`: also <prefix>report.html (outputs/html/html_report.h), the merged page;
// `choice`: what each trace holds past its budget (merge_trace_policy.h: a note in `notes` and a
// merged finding say what was left out).
MergeResult WriteMergedView(const std::vector<MergeGroup>& groups, const std::string& out_dir,
                            int row_limit, bool html = true,
                            const MergedTraceChoice& choice = {false, {}, kJsonTraceComfortBytes});

// "merged view: whole run of 4 processes: trace OUT/trace.json, table OUT/table.txt, findings
// OUT/findings.txt, report OUT/report.html; cycle 1, ..." for the closing lines.
std::string MergedViewText(const MergeResult& result);

}  // namespace gprof::launcher
