// The merged view's page (html_report.h FormatMergedHtmlReport): a row per rank from the merge's
// survey, the merged findings, the top merged rows. Launcher process only.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "analysis/ranks/merge_findings.h"
#include "outputs/html/html_report.h"
#include "outputs/html/html_report_model.h"
#include "text/format.h"

namespace gprof {

using namespace html_internal;  // NOLINT: the report's own helpers

std::string FormatMergedHtmlReport(const MergedHtmlReportInput& in) {
  const std::vector<MergeInput>& inputs = *in.inputs;
  std::string out = kHead;
  out += "<title>gprof-run merged: " + U(inputs.size()) + " processes, " + Html(in.title, 80) +
         "</title>";
  out += kStyle;
  out += "<h1>gprof-run merged report <span class=\"muted\">" + U(inputs.size()) +
         " processes, " + Html(in.title, 80) + "</span></h1>";
  out += "<nav><a href=\"#findings\">Findings</a><a href=\"#ranks\">Ranks</a>"
         "<a href=\"#top\">Top rows</a><a href=\"#files\">Files</a></nav>";
  if (const Finding* f = FindId(*in.findings, "straggler")) {
    out += "<div class=\"verdict " + std::string(SeverityName(f->severity)) +
           "\"><b>Straggler</b>: " + Html(f->title, kMaxTextChars) + "</div>";
  } else {
    out += "<div class=\"verdict info\"><b>No straggler</b>: no rank is slow in a quarter of the "
           "compared steps or more.</div>";
  }
  AppendFindings(*in.findings, &out);

  // Per rank: identity, window, GPU busy share, steps, and the steps as bars on one scale.
  out += "<section id=\"ranks\"><h2>Ranks</h2>";
  uint64_t max_wall = 1;
  std::set<uint32_t> numbers;
  for (const MergeInput& r : inputs) {
    for (const MergeStep& s : r.dist.steps) {
      max_wall = std::max(max_wall, s.wall_ns);
      numbers.insert(s.number);
    }
  }
  std::vector<uint32_t> columns(numbers.begin(), numbers.end());
  const size_t per_bar = (columns.size() + kMaxStepBars - 1) / std::max<size_t>(kMaxStepBars, 1);
  std::map<uint32_t, size_t> column_of;
  for (size_t c = 0; c < columns.size(); ++c) column_of[columns[c]] = c / std::max<size_t>(per_bar, 1);
  const size_t bars = per_bar == 0 ? 0 : (columns.size() + per_bar - 1) / per_bar;
  out += "<p>One row per process in rank order. Step bars share one scale (the tallest is " +
         FormatDuration(max_wall) + ")" +
         (per_bar > 1 ? "; each bar is the slowest of " + U(per_bar) + " consecutive step numbers"
                      : std::string()) +
         ": <span class=\"key busy\"></span> GPU busy, <span class=\"key idle\"></span> idle.</p>";
  // Which ranks had sampled Python stacks (--python-sampling): their slices are in the merged
  // trace, on a sampled track per thread of that rank's process.
  const std::string sampled = MergeInputsWithPythonSamples(inputs);
  bool any_sampled = false;
  for (const MergeInput& r : inputs) any_sampled |= r.python_samples > 0;
  if (any_sampled) {
    size_t with = 0;
    for (const MergeInput& r : inputs) with += r.python_samples > 0 ? 1 : 0;
    out += "<p id=\"python-stacks\">Python stacks (sampled): " + U(with) + " of " +
           U(inputs.size()) + " processes had samples (" + Html(sampled, kMaxTextChars) +
           "); the merged trace has them on a sampled track per thread of each.</p>";
  }
  out += "<table class=\"rows\"><tr><th class=\"name\">Process</th><th>Window</th>"
         "<th>GPU busy</th><th>Steps</th><th>Median step</th>" +
         std::string(any_sampled ? "<th>Python samples</th>" : "") +
         "<th class=\"name\">Step times</th></tr>";
  for (size_t k = 0; k < inputs.size() && k < kMaxMergedRanks; ++k) {
    const MergeInput& r = inputs[k];
    std::vector<uint64_t> walls;
    for (const MergeStep& s : r.dist.steps) walls.push_back(s.wall_ns);
    const uint64_t median =
        walls.empty() ? 0 : static_cast<uint64_t>(SummarizeSamples(&walls).median + 0.5);
    out += "<tr><td class=\"name\">" + Html(MergeInputLabel(r), 120) + "</td><td>" +
           FormatDuration(r.dist.window_ns) + "</td><td>" +
           (r.dist.gpu_work ? PercentOf(r.dist.gpu_busy_ns, r.dist.window_ns) +
                                  " (GPU " + U(r.dist.busiest_device) + ")"
                            : std::string("no GPU work")) +
           "</td><td>" + U(r.dist.steps.size()) + "</td><td>" +
           (walls.empty() ? std::string("-") : FormatDuration(median)) + "</td>" +
           (any_sampled ? "<td>" + (r.python_samples > 0 ? Thousands(r.python_samples) + " at " +
                                                               U(r.python_hz) + " Hz"
                                                         : std::string("-")) +
                              "</td>"
                        : std::string()) +
           "<td class=\"name\">";
    if (bars > 0) {
      constexpr int kW = 420, kH = 28;
      out += "<svg width=\"" + U(kW) + "\" height=\"" + U(kH) + "\" viewBox=\"0 0 " + U(kW) + " " +
             U(kH) + "\">";
      std::vector<const MergeStep*> slowest(bars, nullptr);
      for (const MergeStep& s : r.dist.steps) {
        const size_t c = column_of[s.number];
        if (slowest[c] == nullptr || s.wall_ns > slowest[c]->wall_ns) slowest[c] = &s;
      }
      const double slot = static_cast<double>(kW) / static_cast<double>(bars);
      for (size_t c = 0; c < bars; ++c) {
        const MergeStep* s = slowest[c];
        if (s == nullptr) continue;
        const double h = std::max(1.0, kH * static_cast<double>(s->wall_ns) / static_cast<double>(max_wall));
        const double b = std::min(h, kH * static_cast<double>(s->gpu_busy_ns) / static_cast<double>(max_wall));
        const double x = slot * static_cast<double>(c), w = std::max(0.6, slot * 0.8);
        out += "<g><title>ProfilerStep#" + U(s->number) + ": " + FormatDuration(s->wall_ns) +
               ", GPU busy " + FormatDuration(s->gpu_busy_ns) + "</title><rect class=\"idle\" x=\"" +
               Num(x, 2) + "\" y=\"" + Num(kH - h, 2) + "\" width=\"" + Num(w, 2) + "\" height=\"" +
               Num(h - b, 2) + "\"/><rect class=\"busy\" x=\"" + Num(x, 2) + "\" y=\"" +
               Num(kH - b, 2) + "\" width=\"" + Num(w, 2) + "\" height=\"" + Num(b, 2) +
               "\"/></g>";
      }
      out += "</svg>";
    }
    out += "</td></tr>";
  }
  out += "</table>";
  if (inputs.size() > kMaxMergedRanks) {
    out += "<p class=\"muted\">" + U(inputs.size() - kMaxMergedRanks) +
           " more processes are in the merged table and trace.</p>";
  }
  out += "</section>";

  // The merged table's top rows.
  const std::vector<MergedRow> rows = MergeRows(inputs);
  bool gpu = false;
  for (const MergeInput& r : inputs) gpu |= r.gpu;
  out += "<section id=\"top\"><h2>Top rows across ranks</h2><p>The merged table's top " +
         U(std::min(kTopRows, rows.size())) + " of " + U(rows.size()) +
         " rows: each value as min / median / max across the processes, and where the max is."
         "</p><table class=\"rows\"><tr><th class=\"name\">Name</th><th>Ranks</th>" +
         std::string(gpu ? "<th>Self CUDA min / median / max</th>" : "") +
         "<th>Self CPU min / median / max</th><th class=\"name\">max at</th></tr>";
  for (size_t k = 0; k < rows.size() && k < kTopRows; ++k) {
    const MergedRow& r = rows[k];
    const AcrossInputs& key = gpu && r.device ? r.self_cuda : r.self_cpu;
    const auto triple = [](const AcrossInputs& a) {
      return FormatDuration(a.min) + " / " + FormatDuration(static_cast<uint64_t>(a.median + 0.5)) +
             " / " + FormatDuration(a.max);
    };
    out += "<tr><td class=\"name\">" + (r.device ? std::string("<span class=\"tag gpu\">GPU</span> ") : "") +
           Html(r.name, 90) + "</td><td>" + U(r.inputs) + "</td>" +
           (gpu ? "<td>" + triple(r.self_cuda) + "</td>" : "") + "<td>" + triple(r.self_cpu) +
           "</td><td class=\"name\">" +
           (key.max_input < inputs.size() ? Html(MergeInputLabel(inputs[key.max_input]), 80) : "") +
           "</td></tr>";
  }
  out += "</table></section>";
  AppendFiles(in.links, &out);
  AppendFooter(in.version, &out);
  return out;
}

}  // namespace gprof