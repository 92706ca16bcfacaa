// report.html pages of an output directory (see html_page.h). Launcher process only.
#include "launcher/html_page.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <system_error>

#include "analysis/samples/cpu_samples.h"
#include "analysis/samples/native_symbols.h"
#include "launcher/progress.h"
#include "launcher/render/segmented_render.h"
#include "launcher/python/python_stacks.h"
#include "launcher/python/torch_memory_file.h"
#include "model/dump.h"
#include "model/output_file.h"

namespace gprof::launcher {
namespace {

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

}  // namespace

std::string HtmlPageName(const std::string& stem, bool is_main) {
  return is_main ? "report.html" : stem + ".report.html";
}

HtmlReportLinks LinksToExistingFiles(const std::string& dir, const std::string& stem,
                                     bool is_main) {
  const std::string prefix = is_main ? "" : stem + ".";
  HtmlReportLinks l;
  const auto if_there = [&](const std::string& name) {
    return Exists(dir + "/" + name) ? name : std::string();
  };
  l.table = if_there(prefix + "table.txt");
  const std::string trace = prefix + "trace";
  for (const std::string& name : {trace + ".json", trace + ".json.gz", trace + ".part1.json",
                                  trace + ".part1.json.gz"}) {
    if (!l.trace.empty() || !Exists(dir + "/" + name)) continue;
    l.trace = name;
    if (name.find(".part1.") != std::string::npos) l.trace_note = "the first part, cut by time";
  }
  l.pftrace = if_there(is_main ? "trace.pftrace" : stem + ".pftrace");
  l.findings_text = if_there(prefix + "findings.txt");
  l.findings_json = if_there(prefix + "findings.json");
  return l;
}

bool WriteHtmlPage(const Profile& profile, const TableRows& rows,
                   const std::vector<Finding>& findings, const FindingsContext& context,
                   const HtmlReportLinks& links, const std::string& path, std::FILE* err,
                   const HtmlStacks& stacks) {
  try {
    HtmlReportInput in;
    in.profile = &profile;
    in.findings = &findings;
    in.context = &context;
    in.table = &rows;
    in.links = links;
    in.version = GPROF_VERSION;
    in.python_samples = stacks.python_samples;
    in.python_syncs = stacks.python_syncs;
    in.native_stacks = stacks.native;
    in.cpu_samples = stacks.cpu;
    const std::string page = FormatHtmlReport(in);
    if (std::string e = WriteOutputFile(path, page, /*create_dirs=*/false); !e.empty()) {
      throw std::runtime_error(e);
    }
    return true;
  } catch (const std::exception& e) {
    std::fprintf(err, "gprof-run: warning: %s not written: %s\n", path.c_str(), e.what());
    return false;
  }
}

RenderSummary RenderHtmlPages(const std::string& dir, const TableOptions& table_options,
                              std::FILE* err, uint64_t segmented_render_bytes) {
  RenderSummary summary;
  std::vector<DumpName> dumps = DumpsIn(dir);
  std::sort(dumps.begin(), dumps.end(),
            [](const DumpName& a, const DumpName& b) { return a.stem < b.stem; });
  summary.dumps = static_cast<int>(dumps.size());
  if (dumps.empty()) {
    std::fprintf(err, "gprof-run: no profile in %s: no .gpdump to make a page of\n", dir.c_str());
    return summary;
  }
  const long main_pid = MainPid(dir, dumps);
  Progress progress(err, Progress::IsTerminal(err));
  std::string pages;
  for (const DumpName& d : dumps) {
    const std::string path = dir + "/" + d.stem + kDumpExtension;
    const bool is_main = d.pid == main_pid && !d.window;
    progress.Stage(d.stem + kDumpExtension + ": reading");
    Profile profile;
    std::string error;
    TraceOptions segments;  // a long run's dump: segment by segment, no trace written
    segments.json = segments.json_gz = segments.pftrace = false;
    segments.segmented_render_bytes = segmented_render_bytes;
    std::unique_ptr<SegmentedRender> seg;
    if (RenderInSegments(path, segments)) {
      try {
        seg = std::make_unique<SegmentedRender>(RenderDumpInSegments(
            path, table_options, segments, "", "", &progress, d.stem + kDumpExtension + ": "));
        profile = std::move(seg->window);
      } catch (const std::exception& e) {
        progress.Print("gprof-run: error: " + std::string(e.what()) + "; no page\n");
        ++summary.failed;
        continue;
      }
    } else if (!ReadDump(path, &profile, &error)) {
      progress.Print("gprof-run: error: " + error + "; no page\n");
      ++summary.failed;
      continue;
    }
    if (const std::string note = AttachTorchMemoryOf(dir, d, &profile); !note.empty()) {
      progress.Print(note);
    }
    try {
      progress.Stage(d.stem + kDumpExtension + ": table rows and findings");
      const TableRows rows = seg != nullptr ? seg->rows : SortedTableRows(profile, table_options);
      FindingsContext context = seg != nullptr ? seg->findings_context : FindingsContext{};
      const std::vector<Finding> findings =
          seg != nullptr ? seg->findings : FindFindings(profile, &context);
      progress.Stage(d.stem + kDumpExtension + ": report.html");
      const std::string page = dir + "/" + HtmlPageName(d.stem, is_main);
      // The stacks as a full report shows them; nothing else is written (no stacks.folded).
      const PythonStacks python = LoadPythonStacks(dir, d, is_main, profile, nullptr, false);
      if (!python.notes.empty()) progress.Print(python.notes);
      const SymbolizedStacks native =
          profile.api_stacks.empty() ? SymbolizedStacks{} : SymbolizeStacks(profile);
      HtmlStacks stacks;
      stacks.python_samples = python.samples.get();
      stacks.python_syncs = python.samples ? &python.syncs : nullptr;
      stacks.native = profile.api_stacks.empty() ? nullptr : &native;
      const CpuSampleNames cpu =
          profile.cpu_samples.empty() ? CpuSampleNames{} : NameCpuSamples(profile);
      stacks.cpu = profile.cpu_samples.empty() ? nullptr : &cpu;
      HtmlReportLinks links = LinksToExistingFiles(dir, d.stem, is_main);
      if (seg != nullptr) links.findings_scope = SegmentedFindingsScope(*seg);
      if (WriteHtmlPage(profile, rows, findings, context, links, page, err, stacks)) {
        summary.outputs.push_back(page);
        ++summary.rendered;
        pages += (pages.empty() ? "" : ", ") + page;
      } else {
        ++summary.failed;
      }
    } catch (const std::exception& e) {
      progress.Print("gprof-run: error: " + path + ": no page: " + e.what() + "\n");
      ++summary.failed;
    }
  }
  progress.Done();
  if (summary.rendered > 0) {
    summary.closing_line = "gprof-run: wrote " + std::to_string(summary.rendered) +
                           (summary.rendered == 1 ? " report page: " : " report pages: ") + pages;
  }
  return summary;
}

}  // namespace gprof::launcher
