// report.html (outputs/html/html_report.h) for the dumps of an output directory: written by
// RenderDirectory after each dump's table, traces and findings, or alone by
// `gprof-run report DIR --html` from the dumps and the files already there. Launcher process only.
//
// Naming, as the other outputs: the main process's whole run gets <dir>/report.html, every other
// dump <stem>.gpdump gets <stem>.report.html.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/findings/findings.h"
#include "launcher/report.h"
#include "outputs/html/html_report.h"
#include "outputs/table/table.h"

namespace gprof::launcher {

// What RenderDirectory does about the page (run: --no-html; report: --html, --no-html).
struct HtmlOptions {
  bool write = true;  // write report.html
  bool only = false;  // write only the pages: the table, traces and findings files stay as they are
};

// "report.html" or "<stem>.report.html".
std::string HtmlPageName(const std::string& stem, bool is_main);

// The page's links to the files beside it that exist now (for `report --html`).
HtmlReportLinks LinksToExistingFiles(const std::string& dir, const std::string& stem, bool is_main);

// The call stacks a page shows (HtmlReportInput's), each nullptr when there are none.
struct HtmlStacks {
  const PythonSamples* python_samples = nullptr;
  const PythonSyncs* python_syncs = nullptr;
  const SymbolizedStacks* native = nullptr;
  const CpuSampleNames* cpu = nullptr;  // --cpu-sampling's samples named
};

// Writes the page to `path`; false, with a warning on `err`, when it cannot be made (a failure
// here never costs the other outputs).
bool WriteHtmlPage(const Profile& profile, const TableRows& rows,
                   const std::vector<Finding>& findings, const FindingsContext& context,
                   const HtmlReportLinks& links, const std::string& path, std::FILE* err,
                   const HtmlStacks& stacks = {});

// `gprof-run report DIR --html`: the pages of every dump in `dir`, nothing else. The closing
// line names them.
// A dump larger than `segmented_render_bytes` is read segment by segment
// (render/segmented_render.h: rows of the whole run, findings part by part, the first part's
// timeline).
RenderSummary RenderHtmlPages(const std::string& dir, const TableOptions& table, std::FILE* err,
                              uint64_t segmented_render_bytes);

}  // namespace gprof::launcher
