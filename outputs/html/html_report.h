// The HTML report (report.html): one self-contained page per profile that says, in its first
// screen, whether the run is overhead- or compute-bound, which steps and kernels are slow and
// where the GPU sat idle; below, the findings with their evidence, the step times, a timeline
// overview, the top rows of the table with duration distributions, memory in use and links to
// the other outputs. Launcher process and benchmarks only. Pure: text out, no file access.
//
// The page works from disk with no network: inline CSS and SVG, no script at all (a
// Content-Security-Policy forbids every script, so a name that slipped through escaping could not
// run either), native tooltips (SVG <title>) for details. Every name from the profile is escaped,
// its UTF-8 repaired and its length capped.
//
// Cost: the page reuses what the run computed anyway (the findings and their window, the
// table's rows); its own work is a few linear passes over the records (binning busy time to the
// page's width, per-kernel durations of the top kernels, memory operations sorted by time), so
// its time grows with the event count only by those passes, and its size not at all: every
// section draws a bounded number of marks (kTimelineBins bins per track, at most kMaxHostTracks +
// kMaxGpuTracks + kMaxDeviceRows tracks, kMaxStepBars step bars, kTopRows table rows, ...), so
// a page never exceeds kHtmlReportMaxBytes whatever the profile (html_report_test checks an
// adversarial one).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/ranks/merge.h"
#include "model/profile.h"
#include "outputs/table/table.h"

namespace gprof {

// The page's upper bound in bytes, for any profile (see above).
inline constexpr size_t kHtmlReportMaxBytes = 1u << 20;

// Files next to the page that it links to, by relative name ("trace.json"); "" = not written.
struct HtmlReportLinks {
  std::string table;     // table.txt
  std::string trace;     // trace.json, trace.json.gz or the first part of a cut trace
  std::string trace_note;  // e.g. "and 3 more parts, cut by time" ("" when one file)
  std::string pftrace;   // trace.pftrace
  std::string findings_text;  // findings.txt
  std::string findings_json;  // findings.json
  // What the findings (and the page's timeline) analysed when not the whole run (a long run
  // rendered segment by segment: findings.txt's "Scope:" line); "" for the whole run.
  std::string findings_scope;
};

struct PythonSamples;     // python_samples.h
struct PythonSyncs;       // python_sync.h
struct SymbolizedStacks;  // native_symbols.h
struct CpuSampleNames;    // cpu_samples.h

struct HtmlReportInput {
  const Profile* profile = nullptr;
  const std::vector<Finding>* findings = nullptr;  // FindFindings(*profile, context)
  const FindingsContext* context = nullptr;        // ... and what it measured against
  const TableRows* table = nullptr;                // SortedTableRows(*profile, options)
  HtmlReportLinks links;
  std::string version;  // gprof-run's version, for the footer ("" = left out)
  // Call stacks, each nullptr when there are none: the dump's sampled Python stacks
  // (--python-sampling: the process's .pysamples, of which the samples inside the profile's
  // time range count), the blocking calls by Python line made of them (SyncsByPythonLine over
  // the same range, as python_syncs.txt), and the profile's native stacks symbolized
  // (SymbolizeStacks, --backtrace). They add the "Python stacks (sampled)" section.
  const PythonSamples* python_samples = nullptr;
  const PythonSyncs* python_syncs = nullptr;
  const SymbolizedStacks* native_stacks = nullptr;
  // --cpu-sampling's samples named (NameCpuSamples), or nullptr: the "Host CPU samples" section.
  const CpuSampleNames* cpu_samples = nullptr;
};

// The page. Deterministic: the same input gives the same bytes.
std::string FormatHtmlReport(const HtmlReportInput& input);

// The merged view's page (merged/report.html) from the merge's survey: per rank a row with its
// window, GPU busy share and its step times as bars, the merged findings, the top merged rows
// (min / median / max across ranks), and links to the merged trace, table and findings.
struct MergedHtmlReportInput {
  const std::vector<MergeInput>* inputs = nullptr;  // sorted (SortMergeInputs)
  const std::vector<Finding>* findings = nullptr;   // MergedFindings(*inputs)
  std::string title;  // "whole run", "cycle 1, steps 4-5"
  HtmlReportLinks links;
  std::string version;
};
std::string FormatMergedHtmlReport(const MergedHtmlReportInput& input);

}  // namespace gprof
