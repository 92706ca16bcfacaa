// report.html's "Step time breakdown" section (html_report_model.h): each step's wall time as a
// stacked bar of TensorBoard's overview categories (analysis/tables/step_breakdown.h), the mean
// step's split in a table under it. Bars taller than kBreakdownCutFactor times the median step
// are cut at that height and marked, so that a slow first step does not flatten the others; the
// bar's tooltip keeps its full figures. At most kMaxStepBars bars: beyond that each bar is the
// mean of that many consecutive steps.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "analysis/tables/step_breakdown.h"
#include "outputs/html/html_report_model.h"
#include "text/format.h"

namespace gprof::html_internal {
namespace {

constexpr double kBreakdownCutFactor = 2.0;
constexpr size_t kSlices = std::size(kStepSliceNames);
// One fill per slice, in kStepSliceNames' order (SVG presentation attributes: no inline style).
constexpr std::array<const char*, kSlices> kFill = {"#2b6cb0", "#38a169", "#9ae6b4", "#d69e2e",
                                                    "#e53e3e", "#805ad5", "#cbd5e0"};

struct Bar {
  uint32_t first = 0, last = 0;
  uint64_t wall_ns = 0;
  std::array<uint64_t, kSlices> slice{};
};

std::vector<Bar> Bars(const std::vector<StepBreakdown>& steps) {
  const size_t per = (steps.size() + kMaxStepBars - 1) / kMaxStepBars;
  std::vector<Bar> bars;
  for (size_t i = 0; i < steps.size(); i += per) {
    Bar b;
    const size_t end = std::min(steps.size(), i + per);
    b.first = steps[i].number;
    b.last = steps[end - 1].number;
    for (size_t j = i; j < end; ++j) {
      b.wall_ns += steps[j].wall_ns;
      const std::vector<uint64_t> s = StepSlices(steps[j]);
      for (size_t k = 0; k < kSlices; ++k) b.slice[k] += s[k];
    }
    const uint64_t n = end - i;
    b.wall_ns /= n;
    for (uint64_t& v : b.slice) v /= n;
    bars.push_back(b);
  }
  return bars;
}

std::string Swatch(size_t k) {
  return "<svg width=\"11\" height=\"11\" aria-hidden=\"true\"><rect width=\"11\" height=\"11\" "
         "fill=\"" + std::string(kFill[k]) + "\"/></svg>";
}

void AppendSvg(const std::vector<Bar>& bars, uint64_t cap, std::string* out) {
  const int width = 1000, height = 190, top = 16, bottom = 18, left = 56;
  const int plot_w = width - left - 8, plot_h = height - top - bottom;
  const double slot = static_cast<double>(plot_w) / static_cast<double>(bars.size());
  const double bar_w = std::max(0.6, slot * (slot >= 4 ? 0.8 : 1.0));
  const double base = top + plot_h;
  const auto y_of = [&](uint64_t ns) {
    return static_cast<double>(plot_h) * static_cast<double>(std::min(ns, cap)) /
           static_cast<double>(cap);
  };
  *out += "<svg class=\"steps\" viewBox=\"0 0 " + U(width) + " " + U(height) + "\" width=\"" +
          U(width) + "\" height=\"" + U(height) + "\" role=\"img\" aria-label=\"step time "
          "breakdown\">";
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double x = left + slot * static_cast<double>(i);
    *out += "<g><title>" +
            (b.first == b.last ? "ProfilerStep#" + U(b.first)
                               : "steps " + U(b.first) + "-" + U(b.last) + " (mean)") +
            ": " + FormatDuration(b.wall_ns);
    for (size_t k = 0; k < kSlices; ++k) {
      *out += ", " + std::string(kStepSliceNames[k]) + " " + FormatDuration(b.slice[k]);
    }
    *out += "</title>";
    uint64_t below = 0;
    for (size_t k = 0; k < kSlices; ++k) {
      const double y0 = y_of(below), y1 = y_of(below + b.slice[k]);
      below += b.slice[k];
      if (y1 - y0 <= 0) continue;
      *out += "<rect x=\"" + Num(x, 2) + "\" y=\"" + Num(base - y1, 2) + "\" width=\"" +
              Num(bar_w, 2) + "\" height=\"" + Num(y1 - y0, 2) + "\" fill=\"" + kFill[k] + "\"/>";
    }
    if (b.wall_ns > cap) {
      *out += "<text class=\"mark\" x=\"" + Num(x + bar_w / 2, 2) + "\" y=\"" + U(top - 4) +
              "\" text-anchor=\"middle\">&#8673;</text>";
    }
    if (bars.size() <= 40) {
      *out += "<text x=\"" + Num(x + bar_w / 2, 2) + "\" y=\"" + U(height - 4) +
              "\" text-anchor=\"middle\">" + U(b.first) + "</text>";
    }
    *out += "</g>";
  }
  *out += "<text x=\"" + U(left - 4) + "\" y=\"" + U(top + 4) + "\" text-anchor=\"end\">" +
          FormatDuration(cap) + "</text><text x=\"" + U(left - 4) + "\" y=\"" + Num(base, 2) +
          "\" text-anchor=\"end\">0</text></svg>";
}

}  // namespace

void AppendStepBreakdownSection(const std::vector<StepBreakdown>& steps, std::string* out) {
  if (steps.empty()) return;  // the steps section already says there are none
  *out += "<section id=\"breakdown\"><h2>Step time breakdown</h2>";
  std::vector<uint64_t> walls;
  std::array<uint64_t, kSlices> total{};
  uint64_t total_wall = 0;
  for (const StepBreakdown& s : steps) {
    walls.push_back(s.wall_ns);
    total_wall += s.wall_ns;
    const std::vector<uint64_t> v = StepSlices(s);
    for (size_t k = 0; k < kSlices; ++k) total[k] += v[k];
  }
  std::sort(walls.begin(), walls.end());
  const uint64_t median = walls[walls.size() / 2];
  const uint64_t cap = std::max<uint64_t>(
      1, std::min(walls.back(), static_cast<uint64_t>(kBreakdownCutFactor * median)));
  *out += "<p>Each step's wall time by what ran in it, as TensorBoard's overview splits it: a "
          "moment counts for the first of";
  for (size_t k = 0; k < kSlices; ++k) {
    *out += std::string(k == 0 ? " " : k + 1 == kSlices ? " and " : ", ") + Swatch(k) + " " +
            std::string(kStepSliceNames[k]);
  }
  *out += " that was running then (docs/FINDINGS.md, &ldquo;Step-time breakdown&rdquo;).";
  if (walls.back() > cap) {
    *out += " Bars over " + FormatDuration(cap) + " (" + Num(kBreakdownCutFactor, 0) +
            "x the median step) are cut there and marked &#8673;; their tooltip has the full "
            "figures.";
  }
  *out += "</p>";
  AppendSvg(Bars(steps), cap, out);
  const uint64_t n = steps.size();
  *out += "<table class=\"rows\"><caption>The mean step (" + FormatDuration(total_wall / n) +
          ")</caption><tr><th class=\"name\">Category</th><th>Time</th><th>Share</th></tr>";
  for (size_t k = 0; k < kSlices; ++k) {
    *out += "<tr><td class=\"name\">" + Swatch(k) + " " + std::string(kStepSliceNames[k]) +
            "</td><td>" + FormatDuration(total[k] / n) + "</td><td>" +
            PercentOf(total[k], total_wall) + "</td></tr>";
  }
  *out += "</table></section>";
}

}  // namespace gprof::html_internal
