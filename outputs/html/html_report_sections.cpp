// The HTML report's drawn sections (html_report_model.h): step bars, the top rows of the table
// with duration distributions, memory in use (the timeline overview: html_timeline_section.cpp),
// and the text helpers the pages share. Inline SVG only; every mark comes from the bounded model,
// never from the events. Launcher process only.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "outputs/html/html_report_model.h"
#include "text/format.h"

namespace gprof::html_internal {

std::string Num(double v, int decimals) { return FormatFixed(v, decimals); }

std::string U(uint64_t v) { return std::to_string(v); }

std::string PercentOf(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  return Num(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + "%";
}

std::string BytesText(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024.0;
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++u;
  }
  return Num(v, 1) + " " + kUnits[u];
}

std::string Thousands(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// ---- Steps ----

void AppendStepsSvg(const StepsModel& m, int width, int height, bool compact, std::string* out) {
  if (m.bars.empty()) return;
  const int top = compact ? 4 : 16, bottom = compact ? 2 : 18, left = compact ? 0 : 56;
  const int plot_w = width - left - (compact ? 0 : 8), plot_h = height - top - bottom;
  uint64_t max_wall = 1;
  for (const StepBar& b : m.bars) max_wall = std::max(max_wall, b.wall_ns);
  const double slot = static_cast<double>(plot_w) / static_cast<double>(m.bars.size());
  const double bar_w = std::max(0.6, slot * (slot >= 4 ? 0.8 : 1.0));
  const auto y_of = [&](uint64_t ns) {
    return static_cast<double>(plot_h) * static_cast<double>(ns) / static_cast<double>(max_wall);
  };
  *out += "<svg class=\"steps\" viewBox=\"0 0 " + std::to_string(width) + " " +
          std::to_string(height) + "\" width=\"" + std::to_string(width) + "\" height=\"" +
          std::to_string(height) + "\" role=\"img\" aria-label=\"step times\">";
  const double base = top + plot_h;
  for (size_t i = 0; i < m.bars.size(); ++i) {
    const StepBar& b = m.bars[i];
    const double x = left + slot * static_cast<double>(i);
    const double h = std::max(1.0, y_of(b.wall_ns));
    const double busy = std::min(h, y_of(b.gpu_busy_ns));
    const std::string cls = b.cold ? " cold" : b.outlier ? " outlier" : "";
    *out += "<g class=\"step" + cls + "\"><title>";
    *out += b.steps == 1 ? "ProfilerStep#" + U(b.number)
                         : "steps " + U(b.first) + "-" + U(b.last) + ", slowest ProfilerStep#" +
                               U(b.number);
    *out += ": " + FormatDuration(b.wall_ns) + ", GPU busy " + FormatDuration(b.gpu_busy_ns) +
            " (" + PercentOf(b.gpu_busy_ns, b.wall_ns) + ")" +
            (b.cold ? ", cold start" : "") + (b.outlier ? ", outlier" : "") + "</title>";
    *out += "<rect class=\"idle\" x=\"" + Num(x, 2) + "\" y=\"" + Num(base - h, 2) +
            "\" width=\"" + Num(bar_w, 2) + "\" height=\"" + Num(h - busy, 2) + "\"/>";
    if (busy > 0) {
      *out += "<rect class=\"busy\" x=\"" + Num(x, 2) + "\" y=\"" + Num(base - busy, 2) +
              "\" width=\"" + Num(bar_w, 2) + "\" height=\"" + Num(busy, 2) + "\"/>";
    }
    if (!compact && m.bars.size() <= 40) {
      *out += "<text x=\"" + Num(x + bar_w / 2, 2) + "\" y=\"" + U(height - 4) +
              "\" text-anchor=\"middle\">" + U(b.number) + "</text>";
    }
    if ((b.cold || b.outlier) && !compact) {
      *out += "<text class=\"mark\" x=\"" + Num(x + bar_w / 2, 2) + "\" y=\"" +
              Num(base - h - 3, 2) + "\" text-anchor=\"middle\">" + (b.cold ? "C" : "!") +
              "</text>";
    }
    *out += "</g>";
  }
  if (!compact) {
    const double my = base - y_of(m.median_wall_ns);
    *out += "<line class=\"median\" x1=\"" + U(left) + "\" x2=\"" + U(left + plot_w) + "\" y1=\"" +
            Num(my, 2) + "\" y2=\"" + Num(my, 2) + "\"/>";
    *out += "<text x=\"" + U(left - 4) + "\" y=\"" + Num(my + 4, 2) +
            "\" text-anchor=\"end\">median</text>";
    *out += "<text x=\"" + U(left - 4) + "\" y=\"" + U(top + 4) + "\" text-anchor=\"end\">" +
            FormatDuration(max_wall) + "</text>";
    *out += "<text x=\"" + U(left - 4) + "\" y=\"" + Num(base, 2) +
            "\" text-anchor=\"end\">0</text>";
    if (m.bars.size() > 40) {
      *out += "<text x=\"" + U(left) + "\" y=\"" + U(height - 4) + "\">#" +
              U(m.bars.front().first) + "</text>";
      *out += "<text x=\"" + U(left + plot_w) + "\" y=\"" + U(height - 4) +
              "\" text-anchor=\"end\">#" + U(m.bars.back().last) + "</text>";
    }
  }
  *out += "</svg>";
}

void AppendStepsSection(const StepsModel& m, std::string* out) {
  *out += "<section id=\"steps\"><h2>Step times</h2>";
  if (m.count == 0) {
    *out += "<p class=\"muted\">No steps in this profile: no <code>ProfilerStep#N</code> ranges "
            "and no steps found by <code>--step</code>. The timeline below covers the active part "
            "of the run.</p></section>";
    return;
  }
  *out += "<p><b>" + U(m.count) + (m.count == 1 ? " step" : " steps") + "</b>, median " +
          FormatDuration(m.median_wall_ns) + ", " + FormatDuration(m.total_wall_ns) + " in all";
  if (m.gpu) {
    *out += ", the GPU busy " + PercentOf(m.total_gpu_busy_ns, m.total_wall_ns) +
            " of it. Each bar is a step's wall time: <span class=\"key busy\"></span> GPU busy, "
            "<span class=\"key idle\"></span> GPU idle";
  } else {
    *out += ". Each bar is a step's wall time (no GPU work was recorded)";
  }
  if (m.steps_per_bar > 1) {
    *out += "; with this many steps each bar is the slowest of " + U(m.steps_per_bar) +
            " consecutive steps";
  }
  *out += ". <b>C</b>: cold start (the cold_start finding), <b>!</b>: an outlier (" +
          Num(kStepOutlierFactor, 1) + "x the median or more, and " +
          FormatDuration(kStepOutlierMinExcessNs) + " more).</p>";
  AppendStepsSvg(m, 1000, 170, false, out);
  *out += "<table class=\"rows\"><caption>Slowest steps</caption><tr><th>Step</th><th>Wall</th>";
  if (m.gpu) *out += "<th>GPU busy</th><th>GPU idle</th><th>busy</th>";
  *out += "<th class=\"name\"></th></tr>";
  for (const StepBar& b : m.slowest) {
    *out += "<tr><td>ProfilerStep#" + U(b.number) + "</td><td>" + FormatDuration(b.wall_ns) +
            "</td>";
    if (m.gpu) {
      *out += "<td>" + FormatDuration(b.gpu_busy_ns) + "</td><td>" +
              FormatDuration(b.wall_ns - std::min(b.wall_ns, b.gpu_busy_ns)) + "</td><td>" +
              PercentOf(b.gpu_busy_ns, b.wall_ns) + "</td>";
    }
    *out += "<td class=\"name\">";
    if (b.cold) *out += "<span class=\"tag cold\">cold start</span> ";
    if (b.outlier) *out += "<span class=\"tag outlier\">outlier</span>";
    *out += "</td></tr>";
  }
  *out += "</table><p class=\"muted\">" + U(m.outliers) +
          (m.outliers == 1 ? " outlier step" : " outlier steps") + ".</p></section>";
}


// ---- Top rows and kernel distributions ----

void AppendTopRowsSection(const TableRows& t, const std::vector<KernelDistribution>& kernels,
                          std::string* out) {
  *out += "<section id=\"top\"><h2>Top kernels and ops</h2>";
  if (t.rows.empty()) {
    *out += "<p class=\"muted\">The table is empty.</p></section>";
    return;
  }
  const size_t shown = std::min(kTopRows, t.rows.size());
  // Bars for the value sorted by; a memory key's negative values (net frees) draw no bar.
  const auto bar_value = [&](const EventStats& e) {
    return static_cast<uint64_t>(std::max<int64_t>(0, TableSortValue(e, t.sort_key)));
  };
  uint64_t max_value = 1;
  for (size_t i = 0; i < shown; ++i) max_value = std::max(max_value, bar_value(t.rows[i]));
  uint64_t self_cpu_total = 0, self_cuda_total = 0;
  for (const EventStats& e : t.rows) {
    self_cpu_total += e.self_cpu_ns;
    if (e.device) self_cuda_total += e.self_cuda_ns;
  }
  *out += "<p>The table's top " + U(shown) + " of " + U(t.rows.size()) + " rows by <code>" +
          Html(t.sort_key) + "</code> (table.txt has them all), bars to scale.</p>";
  *out += "<table class=\"rows top\"><tr><th class=\"name\">Name</th><th>Calls</th>"
          "<th>Self CPU</th><th>CPU total</th>";
  if (t.gpu) *out += "<th>Self CUDA</th><th>Self CUDA %</th><th>CUDA total</th>";
  *out += "<th class=\"name\">" + Html(t.sort_key) + "</th></tr>";
  for (size_t i = 0; i < shown; ++i) {
    const EventStats& e = t.rows[i];
    const uint64_t v = bar_value(e);
    const int w = static_cast<int>(200.0 * static_cast<double>(v) / static_cast<double>(max_value) + 0.5);
    *out += "<tr><td class=\"name\" title=\"" + Html(e.name, kMaxTextChars) + "\">" +
            (e.device ? "<span class=\"tag gpu\">GPU</span> " : "") + Html(e.name, 90);
    if (!e.input_shapes.empty()) *out += " <span class=\"muted\">" + Html(e.input_shapes, 60) + "</span>";
    *out += "</td><td>" + Thousands(e.count) + "</td><td>" + FormatDuration(e.self_cpu_ns) +
            "</td><td>" + FormatDuration(e.cpu_total_ns) + "</td>";
    if (t.gpu) {
      *out += "<td>" + FormatDuration(e.self_cuda_ns) + "</td><td>" +
              (e.device ? PercentOf(e.self_cuda_ns, self_cuda_total) : std::string("")) +
              "</td><td>" + FormatDuration(e.cuda_total_ns) + "</td>";
    }
    *out += "<td class=\"name\"><svg width=\"204\" height=\"10\"><rect class=\"" +
            std::string(e.device ? "busy" : "hostbar") + "\" width=\"" + U(std::max(w, v ? 1 : 0)) +
            "\" height=\"10\"/></svg></td></tr>";
  }
  *out += "</table>";
  if (!kernels.empty()) {
    *out += "<h3>Kernel duration distributions</h3><p>The kernels with the most GPU time: "
            "per instance, <span class=\"key range\"></span> min to max, "
            "<span class=\"key box\"></span> median to p95, | the median; each on its own "
            "scale, 0 to its max.</p><table class=\"rows dist\"><tr><th class=\"name\">Kernel"
            "</th><th>Instances</th><th>Total</th><th>Min</th><th>Median</th><th>p95</th>"
            "<th>Max</th><th class=\"name\"></th></tr>";
    for (const KernelDistribution& k : kernels) {
      const double mx = static_cast<double>(std::max<uint64_t>(k.max_ns, 1));
      const auto x = [&](double ns) { return Num(4 + 292.0 * ns / mx, 1); };
      const uint64_t median = static_cast<uint64_t>(k.median_ns + 0.5);
      *out += "<tr><td class=\"name\" title=\"" + Html(k.name, kMaxTextChars) + "\">" +
              Html(k.name, 90) + "</td><td>" + Thousands(k.count) + "</td><td>" +
              FormatDuration(k.total_ns) + "</td><td>" + FormatDuration(k.min_ns) + "</td><td>" +
              FormatDuration(median) + "</td><td>" + FormatDuration(k.p95_ns) + "</td><td>" +
              FormatDuration(k.max_ns) + "</td><td class=\"name\"><svg width=\"300\" height=\"14\">"
              "<line class=\"range\" x1=\"" + x(static_cast<double>(k.min_ns)) + "\" x2=\"" +
              x(static_cast<double>(k.max_ns)) + "\" y1=\"7\" y2=\"7\"/><rect class=\"box\" x=\"" +
              x(k.median_ns) + "\" y=\"2\" width=\"" +
              Num(std::max(1.0, 292.0 * (static_cast<double>(k.p95_ns) - k.median_ns) / mx), 1) +
              "\" height=\"10\"/><line class=\"med\" x1=\"" + x(k.median_ns) + "\" x2=\"" +
              x(k.median_ns) + "\" y1=\"0\" y2=\"14\"/></svg></td></tr>";
    }
    *out += "</table>";
  }
  *out += "</section>";
}

// ---- Memory ----

void AppendMemorySection(const Model& m, uint64_t origin_ns, std::string* out) {
  *out += "<section id=\"memory\"><h2>GPU memory in use</h2>";
  if (m.memory.empty()) {
    *out += "<p class=\"muted\">No memory data: this profile has no allocation or free records "
            "(CUPTI's memory activity), so there is nothing to draw.</p></section>";
    return;
  }
  const Timeline& tl = m.timeline;
  for (const MemorySeries& s : m.memory) {
    const bool peak_in = s.peak_ns >= tl.start_ns && s.peak_ns < tl.end_ns;
    *out += "<p><b>GPU " + U(s.device) + "</b>: peak <b>" + BytesText(s.peak) + "</b> at " +
            FormatDuration(s.peak_ns - std::min(s.peak_ns, origin_ns)) +
            (peak_in ? "" : " (outside the window)");
    if (s.device_total > 0) *out += ", " + PercentOf(s.peak, s.device_total) + " of its " + BytesText(s.device_total);
    *out += "; " + BytesText(s.at_start) + " in use when the window starts; " + Thousands(s.ops) +
            " allocations and frees.</p>";
    if (tl.bins == 0) continue;
    uint64_t top = 1;
    for (uint64_t v : s.bin_max) top = std::max(top, v);
    constexpr int kH = 60, kLabelW = 230, kPlotW = 1000;
    *out += "<svg class=\"memory\" viewBox=\"0 0 " + U(kLabelW + kPlotW + 70) + " " + U(kH + 4) +
            "\" width=\"" + U(kLabelW + kPlotW + 70) + "\" height=\"" + U(kH + 4) + "\">";
    *out += "<text x=\"" + U(kLabelW - 6) + "\" y=\"12\" text-anchor=\"end\">" + BytesText(top) +
            "</text><text x=\"" + U(kLabelW - 6) + "\" y=\"" + U(kH) +
            "\" text-anchor=\"end\">0</text>";
    *out += "<rect class=\"lane\" x=\"" + U(kLabelW) + "\" y=\"2\" width=\"" + U(kPlotW) +
            "\" height=\"" + U(kH - 2) + "\"/>";
    *out += "<svg x=\"" + U(kLabelW) + "\" y=\"2\" width=\"" + U(kPlotW) + "\" height=\"" +
            U(kH - 2) + "\" viewBox=\"0 0 " + U(tl.bins) + " 100\" preserveAspectRatio=\"none\">"
            "<path class=\"mem\" d=\"M0 100";
    for (size_t b = 0; b < s.bin_max.size(); ++b) {
      const uint64_t y = 100 - (s.bin_max[b] * 100 + top / 2) / top;
      *out += "V" + U(y) + "H" + U(b + 1);
    }
    *out += "V100z\"/></svg></svg>";
  }
  if (m.memory_devices_hidden > 0) {
    *out += "<p class=\"muted\">" + U(m.memory_devices_hidden) +
            " more devices with allocations are not drawn; the trace's memory counters have "
            "them.</p>";
  }
  *out += "</section>";
}

}  // namespace gprof::html_internal