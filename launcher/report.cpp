// Rendering an output directory (see report.h). Launcher process only.
#include "launcher/report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "analysis/attribution/gpu_attribution.h"
#include "analysis/findings/findings.h"
#include "analysis/samples/native_symbols.h"
#include "analysis/tables/op_stacks.h"
#include "launcher/render/closing_line.h"
#include "launcher/render/cpu_sample_files.h"
#include "launcher/html_page.h"
#include "launcher/manifest.h"
#include "launcher/progress.h"
#include "launcher/python/python_stacks.h"
#include "launcher/python/torch_memory_file.h"
#include "launcher/recover_dumps.h"
#include "launcher/row_limit.h"
#include "launcher/render/segmented_export.h"
#include "launcher/render/segmented_render.h"
#include "launcher/render/tensorboard_link.h"
#include "model/dump.h"
#include "model/output_file.h"
#include "model/program_profiler_steps.h"
#include "outputs/perfetto/perfetto_trace.h"
#include "outputs/sqlite/sqlite_export.h"
#include "outputs/trace/gzip_file.h"
#include "outputs/trace/trace_split.h"
#include "text/format.h"

namespace gprof::launcher {
namespace {



bool WriteText(const std::string& path, const std::string& text) {
  return WriteOutputFile(path, text, /*create_dirs=*/false).empty();
}

// Writes <stem>.json and <stem>.txt (docs/FINDINGS.md) and returns the short section for stderr;
// "" when they could not be made. A failure here never costs the table or the trace. The
// findings and what they measured against are kept in `found` and `context` (for report.html).
// A segmented render (`seg`) made its findings part by part: they are written as they are.
std::string WriteFindings(const Profile& profile, const FindingsInputs& inputs,
                          const std::string& stem, std::vector<std::string>* outputs,
                          std::FILE* err, std::vector<Finding>* found, FindingsContext* context,
                          const SegmentedRender* seg) {
  const std::string scope = seg != nullptr ? SegmentedFindingsScope(*seg) : "";
  try {
    if (seg != nullptr) {
      *found = seg->findings;
      *context = seg->findings_context;
    } else {
      *found = FindFindings(profile, context, inputs);
    }
    const std::vector<Finding>& findings = *found;
    const std::vector<StepBreakdown>* steps =
        context != nullptr ? &context->step_breakdown : nullptr;
    for (const auto& [path, text] :
         {std::pair{stem + ".json", FormatFindingsJson(findings, steps, scope)},
          std::pair{stem + ".txt", FormatFindingsText(findings, scope)}}) {
      if (!WriteText(path, text)) throw std::runtime_error("cannot write " + path);
      outputs->push_back(path);
    }
    return FormatFindingsSummary(findings);
  } catch (const std::exception& e) {
    std::fprintf(err, "gprof-run: warning: %s: findings not written: %s\n", stem.c_str(),
                 e.what());
    return "";
  }
}

// Writes the SQLite export of `profile`, or of the dump `segmented` segment by segment when it
// is a long run's (rendered in segments); "" and a warning on `err` when it cannot be written
// (the table and trace are kept).
std::string WriteSqlite(const Profile& profile, const std::string& segmented,
                        const std::string& path, std::vector<std::string>* outputs,
                        std::FILE* err) {
  try {
    if (segmented.empty()) {
      WriteSqliteExport(profile, path);
    } else {
      ExportDumpInSegments(segmented, path);
    }
    outputs->push_back(path);
    return path;
  } catch (const std::exception& e) {
    std::fprintf(err, "gprof-run: warning: SQLite export not written: %s\n", e.what());
    return "";
  }
}

// The warning for a JSON trace too large for Perfetto's UI; "" when it is not.
std::string LargeTraceText(const std::string& trace, uint64_t bytes, const TraceOptions& t,
                           const std::string& pftrace) {
  if (bytes <= kJsonTraceComfortBytes) return "";
  const std::string size = std::to_string(bytes >> 20) + " MiB";
  return "gprof-run: note: " + trace + " is " + size + ": Perfetto's UI loads JSON traces of up "
         "to about 1 GiB; " + (t.pftrace ? "open " + pftrace + " instead (the same trace, "
         "smaller and loaded natively)" : "write a .pftrace too (--trace-format json,pftrace)") +
         ", or split the JSON with --max-trace-mb\n";
}

}  // namespace

RenderSummary RenderDirectory(const std::string& dir, const TableOptions& table_options,
                              const TraceOptions& traces, bool quiet, std::FILE* err,
                              const HtmlOptions& html, bool export_sqlite,
                              const std::string& only_stem) {
  RecoverPartialDumps(dir, err);
  if (html.only) return RenderHtmlPages(dir, table_options, err, traces.segmented_render_bytes);
  RenderSummary summary;
  Progress progress(err, Progress::IsTerminal(err));
  std::vector<DumpName> dumps = DumpsIn(dir);
  if (!only_stem.empty()) {
    std::erase_if(dumps, [&](const DumpName& d) { return d.stem != only_stem; });
  }
  std::sort(dumps.begin(), dumps.end(), [](const DumpName& a, const DumpName& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.window != b.window) return !a.window;
    if (a.cycle != b.cycle) return a.cycle < b.cycle;
    return a.stem < b.stem;
  });
  summary.dumps = static_cast<int>(dumps.size());

  const long main_pid = MainPid(dir, dumps);
  std::set<long> pids_with_whole_run;
  for (const DumpName& d : dumps) {
    if (!d.window) pids_with_whole_run.insert(d.pid);
  }

  Totals totals;
  std::set<long> ranked_pids;
  // TensorBoard links of the processes without a rank: dropped when others have one.
  std::vector<std::pair<std::string, std::string>> rankless_links;
  std::string main_table, main_table_source, main_table_path, main_trace_path, main_pftrace_path,
      cupti_text, main_findings, main_findings_path, large_trace_notes, main_page_path,
      main_sqlite_path, main_stacks_path;
  for (const DumpName& d : dumps) {
    const std::string path = dir + "/" + d.stem + kDumpExtension;
    const bool is_main = d.pid == main_pid && !d.window;
    const std::string table_path = dir + "/" + (is_main ? "table.txt" : d.stem + ".table.txt");
    const std::string trace_path = dir + "/" + (is_main ? "trace.json" : d.stem + ".trace.json");
    const std::string pftrace_path = dir + "/" + (is_main ? "trace.pftrace" : d.stem + ".pftrace");
    const std::string shown_dump = d.stem + kDumpExtension + ": ";
    progress.Stage(shown_dump + "reading");
    Profile profile;
    std::string error;
    // A long run's dump: table and traces segment by segment, the rest from its first segments.
    std::unique_ptr<SegmentedRender> seg;
    PythonStacks run_python;  // a segmented render's traces: the run's Python slices
    if (RenderInSegments(path, traces)) {
      const auto python_slices = [&](const Profile& run) {
        run_python = LoadPythonStacks(dir, d, is_main, run, nullptr, /*write_files=*/false);
        return RunPython{run_python.slices.get(), run_python.samples.get()};
      };
      try {
        seg = std::make_unique<SegmentedRender>(
            RenderDumpInSegments(path, table_options, traces, trace_path, pftrace_path, &progress,
                                 shown_dump, kFindingsPartRecords, python_slices));
        run_python = PythonStacks{};
      } catch (const std::exception& e) {
        progress.Print("gprof-run: error: " + std::string(e.what()) + "; not rendered\n");
        ++summary.failed;
        continue;
      }
      profile = std::move(seg->window);
      large_trace_notes += SegmentedRenderNote(*seg, d.stem + kDumpExtension);
    } else if (!ReadDump(path, &profile, &error)) {
      progress.Print("gprof-run: error: " + error + "; not rendered\n");
      ++summary.failed;
      continue;
    }
    if (const std::string text = IncompleteDumpText(profile, d.stem + kDumpExtension);
        !text.empty()) {
      progress.Print(text + "\n");
    }
    if (profile.info.rank >= 0) ranked_pids.insert(d.pid);
    large_trace_notes += AttachTorchMemoryOf(dir, d, &profile);
    const PythonStacks python =
        LoadPythonStacks(dir, d, is_main, profile, &summary.outputs, /*write_files=*/true,
                         seg != nullptr ? &seg->python_syncs : nullptr);
    const std::unique_ptr<CpuSampleNames> cpu =
        WriteCpuFolded(profile, dir, d.stem, &summary.outputs, &large_trace_notes, err,
                       seg != nullptr ? &seg->cpu_folded : nullptr,
                       seg != nullptr ? seg->cpu_samples : 0);
    large_trace_notes += python.notes;
    // The native stacks (--backtrace) named once for the .pftrace and report.html (the JSON
    // trace's plan names its own).
    std::unique_ptr<SymbolizedStacks> native;
    try {
      progress.Stage(shown_dump + "table");
      // --with-stack / --group-by-stack: rows per Python source location, from the samples.
      // (A segmented render grouped its rows itself: seg->rows.by_stack.)
      std::unique_ptr<RangeStacks> stacks;
      if (table_options.group_by_stack > 0 && python.samples == nullptr) {
        large_trace_notes += "gprof-run: note: " + shown_dump +
                             "no Python stack samples (not a Python program, or run without "
                             "--with-stack / --python-sampling): its table is not grouped by "
                             "source location\n";
      } else if (table_options.group_by_stack > 0 && seg == nullptr) {
        stacks = std::make_unique<RangeStacks>(
            StacksOfRanges(profile, *python.samples, table_options.group_by_stack));
      }
      const TableRows rows =
          seg != nullptr ? seg->rows : SortedTableRows(profile, table_options, stacks.get());
      const std::string table = RenderTable(profile, FileTableOptions(table_options), rows);
      if (!WriteText(table_path, table)) throw std::runtime_error("cannot write " + table_path);
      summary.outputs.push_back(table_path);
      HtmlReportLinks links;  // report.html's, relative to the directory
      links.table = std::filesystem::path(table_path).filename().string();
      std::string shown_trace;  // the trace the closing line names
      for (const auto& [wanted, json_path] :
           {std::pair{traces.json, trace_path}, std::pair{traces.json_gz, trace_path + ".gz"}}) {
        if (!wanted) continue;
        progress.Stage(shown_dump + std::filesystem::path(json_path).filename().string());
        const std::vector<std::string> written =
            seg == nullptr ? WriteTraceJsonCapped(profile, json_path, traces.max_json_bytes,
                                                  python.slices.get(), cpu.get())
            : IsGzipPath(json_path) && traces.json ? seg->other_json_files
                                                   : seg->json_files;
        summary.outputs.insert(summary.outputs.end(), written.begin(), written.end());
        if (written.size() > 1 && python.slices != nullptr && seg == nullptr) {
          large_trace_notes += "gprof-run: note: " + json_path +
                               " is cut into parts (--max-trace-mb), which do not have the "
                               "Python stack slices yet; the folded stacks have the samples\n";
        }
        if (shown_trace.empty()) {
          // TensorBoard's profiler plugin lists *.pt.trace.json[.gz] only: a link of that name.
          const std::string worker =
              is_main ? "gprof-run" : TensorBoardWorker(d.stem, profile.info.hostname);
          if (const std::string e = LinkTraceForTensorBoard(worker, written[0]); !e.empty()) {
            large_trace_notes += "gprof-run: note: " + e + "\n";
          } else if (profile.info.rank < 0) {
            rankless_links.emplace_back(worker, written[0]);
          }
          links.trace = std::filesystem::path(written[0]).filename().string();
          if (written.size() > 1) {
            links.trace_note = "and " + std::to_string(written.size() - 1) +
                               " more parts, cut by time";
          }
          shown_trace = written.size() == 1
                            ? written[0]
                            : written[0] + " (and " + std::to_string(written.size() - 1) +
                                  " more parts, cut by time: --max-trace-mb)";
        }
        if (traces.max_json_bytes == 0 && !IsGzipPath(json_path)) {
          std::error_code ec;
          const uint64_t bytes = std::filesystem::file_size(json_path, ec);
          large_trace_notes += LargeTraceText(json_path, ec ? 0 : bytes, traces, pftrace_path);
        }
      }
      if (traces.pftrace) {
        progress.Stage(shown_dump + std::filesystem::path(pftrace_path).filename().string());
        if (!profile.api_stacks.empty() && native == nullptr) {
          native = std::make_unique<SymbolizedStacks>(SymbolizeStacks(profile));
        }
        if (seg == nullptr) {
          WritePerfettoTrace(profile, pftrace_path, python.slices.get(), native.get(), cpu.get());
        }
        summary.outputs.push_back(pftrace_path);
        links.pftrace = std::filesystem::path(pftrace_path).filename().string();
      }
      progress.Stage(shown_dump + "findings");
      const std::string findings_stem = dir + "/" + (is_main ? "findings" : d.stem + ".findings");
      std::vector<Finding> found;
      FindingsContext context;
      FindingsInputs inputs;
      inputs.python_samples = python.samples.get();
      inputs.cpu_samples = cpu.get();
      const std::string findings =
          WriteFindings(profile, inputs, findings_stem, &summary.outputs, err, &found, &context,
                        seg.get());
      std::string page_path;
      if (html.write && !findings.empty()) {  // the page needs the findings: no page without
        progress.Stage(shown_dump + "report.html");
        const std::string base = std::filesystem::path(findings_stem).filename().string();
        links.findings_text = base + ".txt";
        links.findings_json = base + ".json";
        if (seg != nullptr) links.findings_scope = SegmentedFindingsScope(*seg);
        page_path = dir + "/" + HtmlPageName(d.stem, is_main);
        if (!profile.api_stacks.empty() && native == nullptr) {
          native = std::make_unique<SymbolizedStacks>(SymbolizeStacks(profile));
        }
        HtmlStacks page_stacks;
        page_stacks.python_samples = python.samples.get();
        page_stacks.python_syncs = python.samples ? &python.syncs : nullptr;
        page_stacks.native = native.get();
        page_stacks.cpu = cpu.get();
        // The page's op table has no source column: it gets the rows by name.
        const TableRows page_rows =
            stacks != nullptr ? SortedTableRows(profile, table_options) : TableRows{};
        const TableRows& by_name = stacks != nullptr                      ? page_rows
                                   : seg != nullptr && seg->rows.by_stack ? seg->rows_by_name
                                                                          : rows;
        if (WriteHtmlPage(profile, by_name, found, context, links, page_path, err,
                          page_stacks)) {
          summary.outputs.push_back(page_path);
        } else {
          page_path.clear();
        }
      }
      const std::string sqlite =
          export_sqlite ? WriteSqlite(profile, seg != nullptr ? path : "",
                                      SqliteExportPath(dir, d), &summary.outputs, err)
                        : "";
      ++summary.rendered;
      // Count each process once: its whole run when it has one, else its windows.
      if (!d.window || pids_with_whole_run.count(d.pid) == 0) {
        totals.pids.insert(static_cast<uint32_t>(d.pid));
        if (seg != nullptr) {
          AddSegmentedTotals(&totals, seg->totals);
        } else {
          AddToTotals(&totals, profile);
        }
      }
      if (is_main) totals.startup = StartupText(profile);
      // The table shown on stderr: the main whole run, else the main process's latest window
      // (windows sort after the whole run, by cycle).
      if (is_main || (d.pid == main_pid && main_table_source != "whole-run")) {
        main_table = PrintedTable(profile, table_options, rows, table_path);
        main_table_source = is_main ? "whole-run" : path;
        main_table_path = table_path;
        main_trace_path = shown_trace;
        main_pftrace_path = traces.pftrace ? pftrace_path : "";
        main_findings = findings;
        main_findings_path = findings.empty() ? "" : findings_stem + ".txt";
        main_sqlite_path = sqlite;
        main_page_path = page_path;
        main_stacks_path = python.folded_path;
        if (python.samples != nullptr && !main_stacks_path.empty()) {
          main_stacks_path += python.samples->sampler == "out-of-process"
                                  ? " (sampled out of process)"
                                  : " (sampled in process)";
        }
        cupti_text = CuptiText(profile);
      }
      if (cupti_text.empty()) cupti_text = CuptiText(profile);
    } catch (const std::exception& e) {
      progress.Print("gprof-run: error: " + path + ": cannot render: " + e.what() + "\n");
      ++summary.failed;
    }
  }

  progress.Done();
  if (dumps.empty()) {
    std::fprintf(err,
                 "gprof-run: no profile in %s: no dump was written there (the program never used "
                 "CUDA or NVTX, or ended without running exit handlers, e.g. SIGKILL or _exit, or "
                 "gprof-run could not write the dump: %s)\n",
                 dir.c_str(), std::filesystem::exists(dir) && ::access(dir.c_str(), W_OK) != 0
                                  ? "this directory is not writable" : "see any warning above");
    return summary;
  }
  if (!large_trace_notes.empty()) std::fputs(large_trace_notes.c_str(), err);
  if (!quiet && !main_table.empty()) {
    if (main_table_source != "whole-run") {
      std::fprintf(err, "gprof-run: table of %s\n", main_table_source.c_str());
    }
    std::fputs(main_table.c_str(), err);
    if (!main_table.empty() && main_table.back() != '\n') std::fputc('\n', err);
    std::fputs(main_findings.c_str(), err);
  }
  if (summary.rendered == 0) {
    std::fprintf(err, "gprof-run: none of the %d dump(s) in %s could be rendered\n",
                 summary.dumps, dir.c_str());
    return summary;
  }
  std::string where;
  if (!main_table_path.empty()) {
    where = "table " + main_table_path;
    if (!main_trace_path.empty()) {
      where += ", trace " + main_trace_path;
      if (!main_pftrace_path.empty()) where += " (Perfetto: " + main_pftrace_path + ")";
    } else if (!main_pftrace_path.empty()) {
      where += ", trace " + main_pftrace_path;
    }
    if (!main_findings_path.empty()) where += ", findings " + main_findings_path;
    if (!main_page_path.empty()) where += ", report " + main_page_path;
    if (!main_sqlite_path.empty()) where += ", SQLite " + main_sqlite_path;
    if (!main_stacks_path.empty()) where += ", Python stacks " + main_stacks_path;
  } else {
    where = "no dump from the main process";
  }
  const int others = summary.rendered - (main_table_path.empty() ? 0 : 1);
  if (others > 0) {
    where += "; " + std::to_string(others) + " more table/trace pair(s)" +
             (export_sqlite ? " and SQLite export(s)" : "") + " in " + dir;
  }
  if (const std::string torch = TorchProfilerText(totals, cupti_text); !torch.empty()) {
    cupti_text += "; " + torch;
  }
  if (!totals.startup.empty()) cupti_text += "; " + totals.startup;
  if (const std::string forked = ForkedWithoutExecText(dir, dumps); !forked.empty()) {
    where += "; " + forked;
  }
  summary.closing_line = "gprof-run: recorded " +
                         Plural(totals.pids.size(), "process", "processes") + ": " +
                         Plural(totals.ranges, "range", "ranges") + ", " +
                         Plural(totals.api_calls, "API call", "API calls") + ", " +
                         Plural(totals.kernels, "kernel", "kernels") + ", " +
                         Plural(totals.copies, "copy", "copies") + ", " +
                         Plural(totals.memsets, "memset", "memsets") + "; " +
                         LossText(totals.counters, totals.stacks_dropped) + "; " + cupti_text +
                         "; " + where;
  // A distributed run's tensorboard/ holds its ranks' traces only (UnlinkTraceForTensorBoard).
  if (!ranked_pids.empty()) {
    for (const auto& [worker, trace] : rankless_links) UnlinkTraceForTensorBoard(worker, trace);
  }
  summary.ranked_processes = static_cast<int>(ranked_pids.size());
  return summary;
}

}  // namespace gprof::launcher
