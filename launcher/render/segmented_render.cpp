// A dump rendered segment by segment (see segmented_render.h).
#include "launcher/render/segmented_render.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

#include "analysis/findings/findings_parts.h"
#include "analysis/samples/cpu_samples.h"
#include "analysis/tables/key_averages.h"
#include "analysis/tables/segment_rows.h"
#include "analysis/timeline/trace_plan.h"
#include "launcher/python/python_stacks.h"
#include "launcher/render/segment_passes.h"
#include "model/dump_segment_reader.h"
#include "model/gpu_checks.h"
#include "outputs/perfetto/perfetto_trace.h"
#include "outputs/trace/segmented_trace.h"

namespace gprof::launcher {
namespace {

// The latest end of a profile's records.
uint64_t LastEndNs(const Profile& p) {
  uint64_t end = 0;
  for (const HostRange& r : p.ranges) end = std::max(end, r.end_ns);
  for (const ApiCall& c : p.api_calls) end = std::max(end, c.end_ns);
  for (const Kernel& k : p.kernels) end = std::max(end, k.end_ns);
  for (const Memcpy& m : p.memcpys) end = std::max(end, m.end_ns);
  return end;
}

struct Survey {
  std::vector<LongRange> long_ranges;
  SegmentedGpuChecks checks;  // GPU records against calls across segments, as ReadDump does
  uint64_t origin_ns = UINT64_MAX;
  bool shapes = false;
  bool gpu = false;
};

// Pass 1: the run's tables, counters and totals, the window, what pass 2 needs.
Survey SurveySegments(const std::string& path, SegmentedRender* r) {
  Survey s;
  DumpSegmentReader reader;
  OpenSegments(&reader, path);
  LongRangeFinder long_ranges;
  SegmentedGpuChecks& checks = s.checks;
  while (NextSegment(&reader)) {
    Profile* p = reader.mutable_profile();
    long_ranges.Add(*p);
    checks.Add(*p);
    s.origin_ns = std::min(s.origin_ns, TraceOriginNs(*p));
    s.shapes = s.shapes || HasInputShapes(*p);
    s.gpu = s.gpu || p->HasGpuData();
    AddToTotals(&r->totals, *p);
    r->totals.counters = Counters{};  // the run's so far, in every segment: added once, below
    ++r->segments;
  }
  // The run's tables and counters (the last segment's records dropped): each part's records come
  // under them in pass 3 (FindingsInParts).
  Profile* run = reader.mutable_profile();
  DropRecords(run);
  if (r->segments > 1 || !run->info.complete) checks.Finish(run);
  AddCounters(&r->totals.counters, run->counters);
  r->totals.stacks_dropped = run->stack_counters.dropped;
  r->window = std::move(*run);
  s.long_ranges = long_ranges.Take();
  if (s.origin_ns == UINT64_MAX) s.origin_ns = 0;
  return s;
}

// The first `segments` segments whole, each launch's work with it, under the run's tables in
// `into` (which holds no records).
void ReadPart(DumpSegmentReader* reader, const Survey& s, uint32_t first, uint32_t segments,
              Profile* into) {
  for (uint32_t k = first; k < first + segments && NextSegment(reader); ++k) {
    s.checks.PlaceInFlight(k, reader->mutable_profile());
    AppendRecords(reader->profile(), into);
  }
  SortRangesAndMarks(into);
}

// Pass 3: the findings, part by part: consecutive segments up to `part_records` records, read
// whole under the run's tables with each launch's work, analysed alone (PartFindings). The first
// part is read again at the end (not held meanwhile): report.html shows it.
void FindingsInParts(const std::string& path, const Survey& s, uint64_t part_records,
                     const PythonSamples* python, Progress* progress, const std::string& shown,
                     SegmentedRender* r) {
  DumpSegmentReader reader;
  OpenSegments(&reader, path);
  PartFindings parts;
  uint64_t records = 0;
  uint32_t k = 0, in_part = 0;
  const auto analyse = [&] {
    progress->Stage(shown + "findings of part " + std::to_string(parts.parts() + 1) +
                    " (to segment " + std::to_string(k) + " of " +
                    std::to_string(r->segments) + ")");
    SortRangesAndMarks(&r->window);
    FindingsContext context;
    FindingsInputs inputs;  // --cpu-sampling: gpu_idle names the functions sampled in its gaps
    inputs.python_samples = python;  // --python-sampling: sync names the Python line
    if (python != nullptr) {
      const ProfileInfo& run = r->window.info;
      AddPythonSyncs(SyncsByPythonLine(r->window, *python, run.start_ns, run.end_ns),
                     &r->python_syncs);
    }
    std::unique_ptr<CpuSampleNames> cpu;
    if (!r->window.cpu_samples.empty()) {
      cpu = std::make_unique<CpuSampleNames>(NameCpuSamples(r->window));
      inputs.cpu_samples = cpu.get();
    }
    std::vector<Finding> found = FindFindings(r->window, &context, inputs);
    parts.AddPart(std::move(found), context.origin_ns - s.origin_ns);
    if (parts.parts() == 1) r->findings_context = std::move(context);
    DropRecords(&r->window);
    records = 0, in_part = 0;
  };
  while (NextSegment(&reader)) {
    s.checks.PlaceInFlight(k, reader.mutable_profile());
    AppendRecords(reader.profile(), &r->window);
    records += RecordCount(reader.profile());
    ++in_part, ++k;
    if (parts.parts() == 0) {
      r->window_segments = k;
      r->window_end_ns = std::max(r->window_end_ns, LastEndNs(reader.profile()));
    }
    if (records >= part_records) analyse();
  }
  if (in_part > 0) analyse();
  DumpSegmentReader again;
  OpenSegments(&again, path);
  ReadPart(&again, s, 0, r->window_segments, &r->window);
  r->findings = parts.Take();
  r->finding_parts = parts.parts();
}

}  // namespace

bool RenderInSegments(const std::string& path, const TraceOptions& traces) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return static_cast<uint64_t>(st.st_size) > traces.segmented_render_bytes;
}

SegmentedRender RenderDumpInSegments(const std::string& path, const TableOptions& table,
                                     const TraceOptions& traces, const std::string& json_path,
                                     const std::string& pftrace_path, Progress* progress,
                                     const std::string& shown, uint64_t part_records,
                                     const PythonSliceLoader& python) {
  SegmentedRender r;
  progress->Stage(shown + "reading (segment by segment)");
  const Survey survey = SurveySegments(path, &r);

  const RunPython run_python = python ? python(r.window) : RunPython{};
  const PythonSliceSet* slices = run_python.slices;
  KeyAveragesOptions ka;
  ka.group_by_input_shape = TableByShape(table, survey.shapes);
  SegmentedKeyAverages rows(ka, survey.long_ranges);
  // --with-stack: rows by source location (report.html's by name are merged from them).
  const bool by_stack = table.group_by_stack > 0 && run_python.samples != nullptr;
  if (by_stack) rows.GroupByStack(run_python.samples, table.group_by_stack);
  std::vector<std::unique_ptr<SegmentedTraceJson>> json;
  for (const auto& [wanted, p] : {std::pair{traces.json, json_path},
                                  std::pair{traces.json_gz, json_path + ".gz"}}) {
    if (!wanted) continue;
    json.push_back(std::make_unique<SegmentedTraceJson>(p, traces.max_json_bytes));
    json.back()->Begin(r.window, survey.origin_ns, slices);
  }
  std::unique_ptr<SegmentedPerfettoTrace> pftrace;
  if (traces.pftrace) pftrace = std::make_unique<SegmentedPerfettoTrace>(pftrace_path);

  DumpSegmentReader reader;
  OpenSegments(&reader, path);
  std::map<std::string, uint64_t> folded;
  uint32_t done = 0;
  while (NextSegment(&reader)) {
    progress->Stage(shown + "segment " + std::to_string(++done) + " of " +
                    std::to_string(r.segments));
    Profile* p = reader.mutable_profile();
    survey.checks.PlaceInFlight(done - 1, p);  // each launch's work with it
    rows.Add(*p, &r.window);  // the window holds the run's whole tables
    // --cpu-sampling: this segment's samples named (its stacks symbolized), folded for the run.
    std::unique_ptr<CpuSampleNames> cpu;
    if (!p->cpu_samples.empty()) {
      cpu = std::make_unique<CpuSampleNames>(NameCpuSamples(*p));
      AddFoldedCpuStacks(*p, *cpu, &folded);
      r.cpu_samples += p->cpu_samples.size();
    }
    if (!json.empty()) {
      // --python-sampling: this segment's blocking calls with their Python lines, as a whole
      // render gives them (each call is attributed from the samples around it alone).
      std::unique_ptr<PythonSliceSet> lines;
      if (run_python.samples != nullptr) {
        lines = std::make_unique<PythonSliceSet>();
        const ProfileInfo& run = r.window.info;
        AddApiPythonLines(SyncsByPythonLine(*p, *run_python.samples, run.start_ns, run.end_ns),
                          *run_python.samples, lines.get());
      }
      const TracePlan plan(*p);
      for (auto& j : json) j->Add(plan, cpu.get(), lines.get());
    }
    if (pftrace != nullptr) pftrace->Add(*p, cpu.get(), done == 1 ? slices : nullptr);
  }
  if (done != r.segments) throw std::runtime_error(path + " changed while it was being rendered");
  for (size_t k = 0; k < json.size(); ++k) {
    (k == 0 ? r.json_files : r.other_json_files) = json[k]->Close();
  }
  if (pftrace != nullptr) {
    pftrace->Close();
    r.pftrace = true;
  }
  r.cpu_folded = FormatFoldedCpuStacks(folded);
  r.rows = SortTableRows(rows.Rows(), table, survey.gpu, ka.group_by_input_shape);
  if (by_stack) {
    r.rows.by_stack = true;
    r.rows.stack_note = RangeStacksNote(rows.StackCounts());
    r.rows_by_name = SortTableRows(RowsWithoutStacks(r.rows.rows), table, survey.gpu,
                                   ka.group_by_input_shape);
  }
  FindingsInParts(path, survey, part_records, run_python.samples, progress, shown, &r);
  return r;
}

void AddSegmentedTotals(Totals* into, const Totals& from) {
  into->ranges += from.ranges, into->api_calls += from.api_calls;
  into->kernels += from.kernels, into->copies += from.copies, into->memsets += from.memsets;
  AddCounters(&into->counters, from.counters);
  into->stacks_dropped += from.stacks_dropped;
  into->torch_profiler_spans += from.torch_profiler_spans;
  into->torch_profiler_ns += from.torch_profiler_ns;
  into->own_steps = into->own_steps || from.own_steps;
  into->program_profiler_steps.insert(into->program_profiler_steps.end(),
                                      from.program_profiler_steps.begin(),
                                      from.program_profiler_steps.end());
}

std::string SegmentedFindingsScope(const SegmentedRender& r) {
  if (r.finding_parts <= 1) return "";
  return "the run in " + std::to_string(r.finding_parts) + " parts of about a million launches " +
         "each, each analysed alone (the run is long and was rendered segment by segment); a "
         "finding seen in several parts is shown from the part where it saves the most, with "
         "parts_seen of parts; report.html's timeline is of the first "
         "part (" + std::to_string(r.window_segments) + " of " + std::to_string(r.segments) +
         " segments)";
}

std::string SegmentedRenderNote(const SegmentedRender& r, const std::string& dump) {
  std::string text = "gprof-run: note: " + dump + " is long (" + std::to_string(r.segments) +
                     " segments): rendered segment by segment in bounded memory; the table, "
                     "traces and findings cover the whole run";
  if (r.finding_parts > 1) {
    text += " (the findings part by part, " + std::to_string(r.finding_parts) +
            " parts), report.html's timeline its first " +
            std::to_string(r.window_segments) + " segments";
  }
  return text + "\n";
}

}  // namespace gprof::launcher
