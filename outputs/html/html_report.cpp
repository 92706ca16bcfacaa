// The HTML report pages (html_report.h): the page frame, the headline and the first screen, the
// findings, the files; the merged page is html_merged_report.cpp, the drawn sections
// html_report_sections.cpp, the numbers html_report_model.cpp. Launcher process only.
#include "outputs/html/html_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "analysis/ranks/merge_findings.h"
#include "outputs/html/html_report_model.h"
#include "text/format.h"

namespace gprof {
namespace html_internal {

// No script may run: the page has none, and the policy stops any that a name could smuggle in.
const char* const kHead = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="gprof-run">
)";

const char* const kStyle = R"(<style>
:root{--fg:#1a202c;--muted:#5a6473;--line:#d8dee6;--panel:#f5f7fa;--gpu:#2b6cb0;--gpu2:#90b4de;
--host:#2f855a;--idle:#e5e9ef;--mem:#6b46c1;--high:#c53030;--warn:#c05621;--info:#2c7a7b}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
color:var(--fg);margin:0;background:#fff}
main{max-width:1320px;margin:0 auto;padding:10px 20px 40px}
h1{font-size:20px;margin:4px 0 2px}h2{font-size:17px;margin:26px 0 8px;
border-bottom:1px solid var(--line);padding-bottom:3px}h3{font-size:14px;margin:14px 0 6px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.cmd{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;
color:var(--muted);word-break:break-all;margin:0 0 6px}
.muted{color:var(--muted)}nav{font-size:13px;margin:6px 0}nav a{margin-right:12px}
.verdict{border-left:6px solid var(--info);background:var(--panel);padding:8px 12px;
margin:8px 0;font-size:16px}.verdict.high{border-color:var(--high)}
.verdict.warn{border-color:var(--warn)}.verdict small{display:block;font-size:13px;
color:var(--muted)}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(250px,1fr));gap:2px 18px;
font-size:13px;margin:6px 0}.facts div b{color:var(--muted);font-weight:600}
.glance{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px;
margin-top:10px}.card{border:1px solid var(--line);border-radius:6px;padding:8px 12px}
.card h3{margin:0 0 4px}.card p{margin:3px 0;font-size:13px}
.sev{display:inline-block;font-size:11px;font-weight:700;text-transform:uppercase;
padding:1px 6px;border-radius:3px;color:#fff;vertical-align:1px}.sev.high{background:var(--high)}
.sev.warn{background:var(--warn)}.sev.info{background:var(--info)}
.finding{border:1px solid var(--line);border-radius:6px;padding:6px 12px;margin:8px 0}
.finding.high{border-left:5px solid var(--high)}.finding.warn{border-left:5px solid var(--warn)}
.finding.info{border-left:5px solid var(--info)}.finding h3{margin:4px 0}
.finding .advice{margin:4px 0;color:#2d3748}.places{margin:4px 0;padding-left:20px;font-size:13px}
table.ev{font-size:12.5px;border-collapse:collapse;margin:4px 0}table.ev th{text-align:left;
font-weight:normal;color:var(--muted);padding:0 10px 0 0}table.ev td{padding:0 18px 0 0}
table.rows{border-collapse:collapse;font-size:13px;margin:6px 0}table.rows th,table.rows td{
padding:2px 8px;text-align:right;border-bottom:1px solid #eef1f5;white-space:nowrap}
table.rows th{background:var(--panel)}table.rows .name{text-align:left;white-space:normal}
table.rows caption{text-align:left;font-weight:600;padding:4px 0}
.tag{font-size:11px;border-radius:3px;padding:0 5px;background:var(--idle)}
.tag.cold{background:#fbd38d}.tag.outlier{background:#feb2b2}.tag.gpu{background:#bee3f8}
.key{display:inline-block;width:11px;height:11px;vertical-align:-1px;border:1px solid #a0aec0}
.key.busy{background:var(--gpu)}.key.idle{background:var(--idle)}
.key.range{background:#4a5568;height:2px;vertical-align:3px}.key.box{background:var(--gpu2)}
svg{max-width:100%;height:auto}svg text{font:11px system-ui,-apple-system,"Segoe UI",sans-serif;
fill:var(--muted)}svg text.label.device{fill:var(--fg);font-weight:600}
svg .idle{fill:var(--idle)}svg .busy,svg path.device{fill:var(--gpu)}svg path.stream{fill:var(--gpu2)}
svg path.host,svg .hostbar{fill:var(--host)}svg .lane{fill:#fafbfc;stroke:#e2e8f0}
svg .cold rect.idle{fill:#fbd38d}svg .outlier rect.idle{fill:#feb2b2}
svg .mark{font-weight:700;fill:var(--fg)}svg .median{stroke:#718096;stroke-dasharray:4 3}
svg .stepline{stroke:#cbd5e0;stroke-width:1}svg .gap{fill:#e53e3e;fill-opacity:.12;
stroke:#e53e3e;stroke-opacity:.5}svg .gapmark{fill:#c53030;font-weight:700}
svg .tick{stroke:#a0aec0}svg .mem{fill:var(--mem);fill-opacity:.75}
svg .range{stroke:#4a5568;stroke-width:2}svg .box{fill:var(--gpu2)}svg .med{stroke:#1a202c;
stroke-width:2}.gaps{font-size:13px;padding-left:8px;list-style:none}.gapno{color:#c53030;
font-weight:700}footer{margin-top:30px;font-size:12px;color:var(--muted)}
</style></head><body><main>
)";

const Finding* FindId(const std::vector<Finding>& findings, std::string_view id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

namespace {

std::string EvidenceValue(const Evidence& e) {
  switch (e.kind) {
    case Evidence::Kind::kCount: return Thousands(e.n);
    case Evidence::Kind::kBytes: return Thousands(e.n) + " B (" + BytesText(e.n) + ")";
    case Evidence::Kind::kDuration: return FormatDuration(e.n);
    case Evidence::Kind::kPercent: return Num(e.x, 2) + "%";
    case Evidence::Kind::kFactor: return Num(e.x, 2) + "x";
    case Evidence::Kind::kText: return Html(e.text, kMaxTextChars);
  }
  return "";
}

std::string PlaceText(const Place& pl) {
  std::string s = "at " + FormatDuration(pl.ts_ns) + " for " + FormatDuration(pl.dur_ns);
  if (pl.step) s += " &middot; ProfilerStep#" + U(*pl.step);
  if (pl.device) s += " &middot; GPU " + U(*pl.device);
  if (pl.stream) s += " &middot; stream " + U(*pl.stream);
  if (pl.thread) s += " &middot; thread " + U(*pl.thread);
  if (!pl.name.empty()) s += ": <span class=\"mono\">" + Html(pl.name, kMaxNameChars) + "</span>";
  for (size_t i = 0; i < pl.context.size(); ++i) {
    s += (i == 0 ? " &mdash; " : "; ") + Html(pl.context[i], kMaxTextChars);
  }
  return s;
}

void AppendFinding(const Finding& f, std::string* out) {
  const std::string sev(SeverityName(f.severity));
  *out += "<article class=\"finding " + sev + "\"><h3><span class=\"sev " + sev + "\">" + sev +
          "</span> <code>" + Html(f.id, 40) + "</code> " + Html(f.title, kMaxTextChars) + "</h3>";
  if (!f.evidence.empty()) {
    // Two key-value pairs per line keeps a dozen numbers to six lines.
    *out += "<table class=\"ev\">";
    for (size_t i = 0; i < f.evidence.size(); i += 3) {
      *out += "<tr>";
      for (size_t j = i; j < i + 3 && j < f.evidence.size(); ++j) {
        *out += "<th>" + Html(f.evidence[j].key, 60) + "</th><td>" + EvidenceValue(f.evidence[j]) +
                "</td>";
      }
      *out += "</tr>";
    }
    *out += "</table>";
  }
  if (!f.places.empty()) {
    *out += "<ul class=\"places\">";
    for (const Place& pl : f.places) *out += "<li>" + PlaceText(pl) + "</li>";
    *out += "</ul>";
  } else if (f.where) {
    *out += "<ul class=\"places\"><li>" + PlaceText(*f.where) + "</li></ul>";
  }
  *out += "<p class=\"advice\">" + Html(f.advice, kMaxAdviceChars) + "</p>";
  if (f.saving) {
    const Saving& s = *f.saving;
    *out += "<p class=\"saving\">Fixing it saves up to <b>" +
            (s.step_ns ? FormatDuration(*s.step_ns) + "</b> of " + FormatDuration(s.whole_ns) +
                             " per step (" + FormatDuration(s.run_ns) + " in the window)"
                       : FormatDuration(s.run_ns) + "</b> of the " + FormatDuration(s.whole_ns) +
                             " window") +
            ": " + Html(s.method, kMaxTextChars) + ".</p>";
  }
  *out += "</article>";
}

}  // namespace

void AppendFindings(const std::vector<Finding>& findings, std::string* out) {
  *out += "<section id=\"findings\"><h2>Findings</h2>";
  if (findings.empty()) {
    *out += "<p>None: no pattern of docs/FINDINGS.md in this profile (each rule has a threshold, "
            "and a profile under it says nothing).</p></section>";
    return;
  }
  if (const std::string headline = SavingHeadline(findings); !headline.empty()) {
    *out += "<p class=\"fixfirst\"><b>" + Html(headline, kMaxTextChars) + "</b></p>";
  }
  *out += "<p>" + U(findings.size()) + (findings.size() == 1 ? " finding" : " findings") +
          ", the largest estimated saving first (an upper bound each, docs/FINDINGS.md); times "
          "are the trace's timestamps.</p>";
  for (size_t i = 0; i < findings.size() && i < kMaxFindingsShown; ++i) {
    AppendFinding(findings[i], out);
  }
  if (findings.size() > kMaxFindingsShown) {
    *out += "<p class=\"muted\">" + U(findings.size() - kMaxFindingsShown) +
            " more in findings.txt.</p>";
  }
  *out += "</section>";
}

// A link to a file beside the page: "./" first, so that a name can never read as a scheme
// ("javascript:...") or a host ("//...").
std::string FileHref(const std::string& name) { return "./" + Html(name, kMaxTextChars); }

void AppendFiles(const HtmlReportLinks& l, std::string* out) {
  *out += "<section id=\"files\"><h2>Files</h2><ul>";
  const auto link = [&](const std::string& href, const char* what) {
    if (href.empty()) return;
    *out += "<li><a href=\"" + FileHref(href) + "\">" + Html(href, kMaxTextChars) +
            "</a> &mdash; " + what + "</li>";
  };
  link(l.pftrace, "the trace as Perfetto protobuf: every event, the same times as this page");
  if (!l.trace.empty()) {
    *out += "<li><a href=\"" + FileHref(l.trace) + "\">" + Html(l.trace, kMaxTextChars) +
            "</a>" + (l.trace_note.empty() ? "" : " (" + Html(l.trace_note, kMaxTextChars) + ")") +
            " &mdash; the trace as Chrome/Kineto JSON (Perfetto, chrome://tracing, HTA, "
            "TensorBoard)</li>";
  }
  link(l.table, "the whole table (torch's key_averages().table() layout)");
  link(l.findings_text, "the findings as text");
  link(l.findings_json, "the findings as JSON, with every place");
  *out += "</ul><p>To open a trace in Perfetto: go to <span class=\"mono\">https://ui.perfetto.dev"
          "</span> in Chrome or Firefox, choose <i>Open trace file</i> and pick the ";
  *out += l.pftrace.empty() ? "trace file" : "<span class=\"mono\">" + Html(l.pftrace) + "</span>";
  *out += " (the UI reads it inside the browser; nothing is uploaded). Without network, "
          "<span class=\"mono\">trace_processor --httpd FILE</span> serves it to a UI opened "
          "from a local copy. The times on this page are the trace's: search for a finding's "
          "time in the timeline.</p></section>";
}

void AppendFooter(const std::string& version, std::string* out) {
  *out += "<footer>Written by gprof-run" + (version.empty() ? "" : " " + Html(version, 40)) +
          " from the profile's dump; no scripts, no network: everything on this page is in this "
          "file.</footer></main></body></html>\n";
}

}  // namespace html_internal

namespace {

using namespace html_internal;  // NOLINT: the report's own helpers

// ---- The single-profile page ----

std::string Headline(const HtmlReportInput& in, const Model& m) {
  const Profile& p = *in.profile;
  const FindingsContext& ctx = *in.context;
  const ProfileInfo& i = p.info;
  std::string out;
  out += "<title>gprof-run: " + Html(i.program, 80) + " (pid " + U(i.pid) + ")</title>";
  out += kStyle;
  out += "<h1>gprof-run report: " + Html(i.program, 120) + " <span class=\"muted\">pid " +
         U(i.pid) + (i.hostname.empty() ? "" : " on " + Html(i.hostname, 80)) +
         (i.rank >= 0 ? ", rank " + std::to_string(i.rank) +
                            (i.world_size > 0 ? " of " + std::to_string(i.world_size) : "")
                      : "") +
         "</span></h1>";
  out += "<p class=\"cmd\">$ " + Html(i.command_line.empty() ? i.program : i.command_line, 2000) +
         "</p>";
  out += "<nav><a href=\"#findings\">Findings</a><a href=\"#steps\">Steps</a>" +
         std::string(ctx.step_breakdown.empty() ? "" : "<a href=\"#breakdown\">Breakdown</a>") +
         "<a href=\"#timeline\">Timeline</a><a href=\"#top\">Kernels &amp; ops</a>"
         "<a href=\"#memory\">Memory</a>" +
         std::string(m.stacks.any() ? "<a href=\"#stacks\">Stacks</a>" : "") +
         std::string(m.cpu.any() ? "<a href=\"#cpu\">CPU samples</a>" : "") +
         "<a href=\"#files\">Files</a></nav>";

  // The verdict.
  const uint64_t window = ctx.window_end_ns - ctx.window_start_ns;
  std::string cls = "info", head, rest;
  if (const Finding* f = FindId(*in.findings, "overhead_bound")) {
    cls = std::string(SeverityName(f->severity));
    head = "Overhead-bound";
    rest = f->title;
  } else if (const Finding* f = FindId(*in.findings, "compute_bound")) {
    head = "Compute-bound";
    rest = f->title;
  } else if (!p.HasGpuData()) {
    head = "No GPU work recorded";
    rest = i.gpu_status.empty() ? "" : "GPU: " + i.gpu_status;
  } else {
    head = "Neither overhead- nor compute-bound";
    rest = "GPU " + U(ctx.busiest_device) + " is busy " + PercentOf(ctx.gpu_busy_ns, window) +
           " of the " + FormatDuration(window) + " window and the host " +
           PercentOf(ctx.host_busy_ns, window) +
           ": between the two verdicts' thresholds (under 25% with the host busy, 80% or more)";
  }
  if (rest.rfind(head + ": ", 0) == 0) rest = rest.substr(head.size() + 2);
  out += "<div class=\"verdict " + cls + "\"><b>" + head + "</b>" +
         (rest.empty() ? "" : ": " + Html(rest, kMaxTextChars));
  if (p.HasGpuData()) {
    out += "<small>GPU " + U(ctx.busiest_device) + " busy " + FormatDuration(ctx.gpu_busy_ns) +
           " (" + PercentOf(ctx.gpu_busy_ns, window) + ") and the host busy " +
           FormatDuration(ctx.host_busy_ns) + " (" + PercentOf(ctx.host_busy_ns, window) +
           ") of the window</small>";
  }
  out += "</div>";

  // Facts.
  out += "<div class=\"facts\">";
  const auto fact = [&](const char* k, const std::string& v) {
    out += "<div><b>" + std::string(k) + "</b> " + v + "</div>";
  };
  fact("Collected", FormatDuration(i.end_ns > i.start_ns ? i.end_ns - i.start_ns : 0) +
                        (i.cycle != 0 || i.first_step != 0 || i.last_step != 0
                             ? " (schedule window: cycle " + U(i.cycle) + ", steps " +
                                   U(i.first_step) + "-" + U(i.last_step) +
                                   (i.partial_window ? ", partial" : "") + ")"
                             : " (whole run)"));
  fact("Window", FormatDuration(window) +
                     (ctx.steps.empty()
                          ? std::string(" (the active part: first to last GPU work and launch)")
                          : " (steps #" + U(ctx.steps.front().number) + " to #" +
                                U(ctx.steps.back().number) + ")"));
  std::string gpu = i.cupti_library.empty() ? Html(i.gpu_status.empty() ? "not collected"
                                                                         : i.gpu_status, 300)
                                            : "collected (CUPTI " + Html(i.cupti_library, 200) + ")";
  for (const DeviceInfo& d : p.devices) {
    gpu += "; GPU " + U(d.id) + " " + Html(p.strings.Get(d.name), 80);
  }
  fact("GPU", gpu);
  const auto count = [](uint64_t n, const char* one, const char* many) {
    return Thousands(n) + " " + (n == 1 ? one : many);
  };
  fact("Recorded", count(p.ranges.size(), "range", "ranges") + ", " +
                       count(p.api_calls.size(), "CUDA call", "CUDA calls") + ", " +
                       count(p.kernels.size(), "kernel", "kernels") + ", " +
                       count(p.memcpys.size(), "copy", "copies") + ", " +
                       count(p.memsets.size(), "memset", "memsets") + ", " +
                       count(p.memory_ops.size(), "memory operation", "memory operations") +
                       ", " + count(ctx.steps.size(), "step", "steps") + ", " +
                       count(p.threads.size(), "named thread", "named threads"));
  std::string lost;
  ForEachCounter(p.counters, [&](const char* name, uint64_t v, const char* meaning) {
    if (v == 0) return;
    lost += std::string(lost.empty() ? "" : "; ") + "<span title=\"" + Html(meaning, 400) +
            "\"><code>" + name + "</code> " + Thousands(v) + "</span>";
  });
  if (p.stack_counters.dropped != 0) {
    lost += std::string(lost.empty() ? "" : "; ") +
            "<span title=\"native stacks (--backtrace) dropped, host buffer full: those CUDA "
            "calls show no stack (raise GPROF_HOST_BUFFER_MIB)\"><code>stacks_dropped</code> " +
            Thousands(p.stack_counters.dropped) + "</span>";
  }
  fact("Lost", lost.empty() ? "nothing (every loss counter is 0)" : "<b>" + lost + "</b>");
  out += "</div>";

  // The first screen: steps, kernels, idle.
  out += "<div class=\"glance\">";
  out += "<div class=\"card\"><h3>Steps</h3>";
  if (m.steps.count == 0) {
    out += "<p class=\"muted\">No steps (no ProfilerStep#N ranges).</p>";
  } else {
    out += "<p>" + U(m.steps.count) + " steps, median " + FormatDuration(m.steps.median_wall_ns) +
           "; slowest ";
    for (size_t k = 0; k < m.steps.slowest.size() && k < 2; ++k) {
      const StepBar& b = m.steps.slowest[k];
      out += std::string(k ? ", " : "") + "#" + U(b.number) + " " + FormatDuration(b.wall_ns) +
             (b.cold ? " (cold start)" : b.outlier ? " (outlier)" : "");
    }
    out += "</p>";
    AppendStepsSvg(m.steps, 360, 60, true, &out);
  }
  if (!m.kernels.empty()) {
    out += "</div><div class=\"card\"><h3>Slowest kernels</h3>";
    uint64_t all = 0;
    for (const Kernel& k : p.kernels) all += k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    for (size_t k = 0; k < m.kernels.size() && k < 3; ++k) {
      const KernelDistribution& d = m.kernels[k];
      out += "<p><span class=\"mono\" title=\"" + Html(d.name, kMaxTextChars) + "\">" +
             Html(d.name, 48) + "</span><br>" + FormatDuration(d.total_ns) + " (" +
             PercentOf(d.total_ns, all) + " of GPU time), " + Thousands(d.count) + " x median " +
             FormatDuration(static_cast<uint64_t>(d.median_ns + 0.5)) + ", max " +
             FormatDuration(d.max_ns) + "</p>";
    }
  } else {
    // No kernels: the table's top rows (ranges and calls) say where the time went.
    out += "</div><div class=\"card\"><h3>Top rows by " + Html(in.table->sort_key) + "</h3>";
    const std::vector<EventStats>& rows = in.table->rows;
    if (rows.empty()) out += "<p class=\"muted\">The table is empty.</p>";
    for (size_t k = 0; k < rows.size() && k < 3; ++k) {
      out += "<p><span class=\"mono\" title=\"" + Html(rows[k].name, kMaxTextChars) + "\">" +
             Html(rows[k].name, 48) + "</span><br>Self CPU " +
             FormatDuration(rows[k].self_cpu_ns) + ", CPU total " +
             FormatDuration(rows[k].cpu_total_ns) + ", " + Thousands(rows[k].count) +
             (rows[k].count == 1 ? " call" : " calls") + "</p>";
    }
  }
  const uint64_t span = m.timeline.end_ns - m.timeline.start_ns;
  if (!p.HasGpuData()) {
    out += "</div><div class=\"card\"><h3>Host threads</h3><p class=\"muted\">No GPU work was "
           "recorded; the busiest threads in the window:</p>";
    size_t shown = 0;
    for (const TimelineTrack& t : m.timeline.tracks) {
      if (t.kind != TimelineTrack::Kind::kHost || shown++ == 3) continue;
      out += "<p>" + Html(t.label, 60) + " busy " + FormatDuration(t.busy_ns) + " (" +
             PercentOf(t.busy_ns, span) + ")</p>";
    }
  } else {
    out += "</div><div class=\"card\"><h3>Where the GPU sat idle</h3>";
    bool any_device = false;
    for (const TimelineTrack& t : m.timeline.tracks) {
      if (t.kind != TimelineTrack::Kind::kDevice) continue;
      any_device = true;
      const uint64_t idle = span - std::min(span, t.busy_ns);
      out += "<p>GPU " + U(t.device) + " idle " + FormatDuration(idle) + ", " +
             PercentOf(idle, span) + " of the window (gaps of every length)</p>";
    }
    if (!any_device) out += "<p class=\"muted\">No GPU work in the window.</p>";
    AppendDeviceStrip(m.timeline, 360, &out);
    if (!m.timeline.gaps.empty()) {
      const TimelineGap& g = m.timeline.gaps.front();
      out += "<p>Largest gap: <b>" + FormatDuration(g.dur_ns) + "</b> at " +
             FormatDuration(g.start_ns - std::min(g.start_ns, ctx.origin_ns)) +
             (g.step ? " (ProfilerStep#" + U(*g.step) + ")" : "") + ", while the host ran " +
             (g.context.empty() ? std::string("nothing recorded") : Html(g.context.front(), 200)) +
             "</p>";
    } else if (any_device) {
      out += "<p class=\"muted\">No idle-gap finding: the gaps of 100 us or more stay under 5% "
             "of the window.</p>";
    }
  }
  out += "</div></div>";
  return out;
}

}  // namespace

std::string FormatHtmlReport(const HtmlReportInput& in) {
  const Model m = BuildModel(in);
  std::string out = kHead;
  out += Headline(in, m);
  if (!in.links.findings_scope.empty()) {
    out += "<p class=\"note\">Findings and timeline of " + Html(in.links.findings_scope, 400) +
           ".</p>\n";
  }
  AppendFindings(*in.findings, &out);
  AppendStepsSection(m.steps, &out);
  AppendStepBreakdownSection(in.context->step_breakdown, &out);
  AppendTimelineSection(m.timeline, in.context->origin_ns, &out);
  AppendTopRowsSection(*in.table, m.kernels, &out);
  AppendMemorySection(m, in.context->origin_ns, &out);
  AppendStacksSection(m.stacks, &out);
  AppendCpuSamplesSection(m.cpu, &out);
  AppendFiles(in.links, &out);
  AppendFooter(in.version, &out);
  return out;
}

}  // namespace gprof
