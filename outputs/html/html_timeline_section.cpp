// The HTML report's timeline overview (html_report_model.h): busy columns per track, the device
// strip of the first screen and the gpu_idle gaps with their notes. Inline SVG only; every mark
// comes from the bounded model, never from the events. Launcher process only.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "outputs/html/html_report_model.h"
#include "text/format.h"

namespace gprof::html_internal {
namespace {

// Circled digits for the gap notes: (1) .. (20), then [21] ...
std::string Marker(size_t i) {
  if (i < 20) {
    // U+2460 CIRCLED DIGIT ONE onwards.
    const uint32_t cp = 0x2460 + static_cast<uint32_t>(i);
    std::string s;
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
    return s;
  }
  return "[" + std::to_string(i + 1) + "]";
}

}  // namespace

void AppendBusyPath(const Timeline& tl, const TimelineTrack& tr, int row_h, std::string* out) {
  // One run per stretch of columns of equal height; a busy column is at least 1 unit high, so
  // that a lone short kernel still shows.
  const auto height_of = [&](size_t i) -> int {
    const uint64_t w = tl.BinEnd(i) - tl.BinStart(i);
    if (tr.bins[i] == 0 || w == 0) return 0;
    const int h = static_cast<int>((tr.bins[i] * static_cast<uint64_t>(row_h) + w / 2) / w);
    return std::clamp(h, 1, row_h);
  };
  size_t b = 0;
  while (b < tl.bins) {
    const int h = height_of(b);
    size_t e = b + 1;
    while (e < tl.bins && height_of(e) == h) ++e;
    if (h > 0) {
      *out += "M" + U(b) + " " + U(row_h) + "v-" + U(h) + "h" + U(e - b) + "v" + U(h) + "z";
    }
    b = e;
  }
}

void AppendDeviceStrip(const Timeline& tl, int width, std::string* out) {
  constexpr int kRowH = 16, kGap = 3;
  int rows = 0;
  for (const TimelineTrack& tr : tl.tracks) rows += tr.kind == TimelineTrack::Kind::kDevice ? 1 : 0;
  rows = std::min(rows, 2);
  if (rows == 0 || tl.bins == 0) return;
  const int height = rows * (kRowH + kGap);
  *out += "<svg class=\"strip\" viewBox=\"0 0 " + U(width) + " " + U(height) + "\" width=\"" +
          U(width) + "\" height=\"" + U(height) + "\" role=\"img\" aria-label=\"GPU busy\">";
  int r = 0;
  for (const TimelineTrack& tr : tl.tracks) {
    if (tr.kind != TimelineTrack::Kind::kDevice || r == rows) continue;
    const int y = r++ * (kRowH + kGap);
    *out += "<rect class=\"lane\" x=\"0\" y=\"" + U(y) + "\" width=\"" + U(width) +
            "\" height=\"" + U(kRowH) + "\"/><svg x=\"0\" y=\"" + U(y) + "\" width=\"" +
            U(width) + "\" height=\"" + U(kRowH) + "\" viewBox=\"0 0 " + U(tl.bins) + " " +
            U(kRowH) + "\" preserveAspectRatio=\"none\"><path class=\"device\" d=\"";
    AppendBusyPath(tl, tr, kRowH, out);
    *out += "\"/></svg>";
  }
  // The gaps named by gpu_idle, over the strip.
  const uint64_t span = tl.end_ns - tl.start_ns;
  for (const TimelineGap& g : tl.gaps) {
    const double x0 = static_cast<double>(width) * static_cast<double>(g.start_ns - std::min(g.start_ns, tl.start_ns)) /
                      static_cast<double>(span);
    const double w = std::max(1.5, static_cast<double>(width) * static_cast<double>(g.dur_ns) /
                                       static_cast<double>(span));
    *out += "<rect class=\"gap\" x=\"" + Num(x0, 1) + "\" y=\"0\" width=\"" + Num(w, 1) +
            "\" height=\"" + U(height) + "\"/>";
  }
  *out += "</svg>";
}

void AppendTimelineSection(const Timeline& tl, uint64_t origin_ns, std::string* out) {
  *out += "<section id=\"timeline\"><h2>Timeline overview</h2>";
  if (tl.bins == 0 || tl.tracks.empty()) {
    *out += "<p class=\"muted\">Nothing to draw: no host ranges, CUDA calls or GPU work in the "
            "window.</p></section>";
    return;
  }
  const uint64_t span = tl.end_ns - tl.start_ns;
  const uint64_t bin_ns = tl.bin_ns;
  *out += "<p>The window from " + FormatDuration(tl.start_ns - std::min(tl.start_ns, origin_ns)) +
          " to " + FormatDuration(tl.end_ns - std::min(tl.end_ns, origin_ns)) + " (" +
          FormatDuration(span) +
          ", times as the trace shows them), in " + U(tl.bins) + " columns of " +
          FormatDuration(bin_ns) +
          ": the height in a column is the share of it the row was busy (host: ranges and CUDA "
          "calls; GPU: kernels, copies, memsets), so white is idle.";
  if (!tl.gaps.empty()) *out += " Shaded and numbered: the largest GPU idle gaps (gpu_idle).";
  *out += "</p>";
  constexpr int kLabelW = 230, kPlotW = 1000, kRightW = 70, kRowH = 20, kRowGap = 4, kTop = 16;
  const int rows = static_cast<int>(tl.tracks.size());
  const int plot_h = rows * (kRowH + kRowGap);
  const int height = kTop + plot_h + 22;
  const int width = kLabelW + kPlotW + kRightW;
  *out += "<svg class=\"timeline\" viewBox=\"0 0 " + U(width) + " " + U(height) + "\" width=\"" +
          U(width) + "\" height=\"" + U(height) + "\" role=\"img\" aria-label=\"timeline\">";
  // Rows: label, idle background, busy columns (in bin units through a nested viewBox).
  for (int r = 0; r < rows; ++r) {
    const TimelineTrack& tr = tl.tracks[static_cast<size_t>(r)];
    const int y = kTop + r * (kRowH + kRowGap);
    const char* cls = tr.kind == TimelineTrack::Kind::kHost     ? "host"
                      : tr.kind == TimelineTrack::Kind::kDevice ? "device"
                                                                : "stream";
    *out += "<text class=\"label " + std::string(cls) + "\" x=\"" + U(kLabelW - 6) + "\" y=\"" +
            U(y + 14) + "\" text-anchor=\"end\">" + Html(tr.label, 34) + "<title>" +
            Html(tr.label) + ": " + Thousands(tr.events) + " records, busy " +
            FormatDuration(tr.busy_ns) + "</title></text>";
    *out += "<rect class=\"lane\" x=\"" + U(kLabelW) + "\" y=\"" + U(y) + "\" width=\"" +
            U(kPlotW) + "\" height=\"" + U(kRowH) + "\"/>";
    *out += "<svg x=\"" + U(kLabelW) + "\" y=\"" + U(y) + "\" width=\"" + U(kPlotW) +
            "\" height=\"" + U(kRowH) + "\" viewBox=\"0 0 " + U(tl.bins) + " " + U(kRowH) +
            "\" preserveAspectRatio=\"none\"><path class=\"" + cls + "\" d=\"";
    AppendBusyPath(tl, tr, kRowH, out);
    *out += "\"/></svg>";
    *out += "<text x=\"" + U(kLabelW + kPlotW + 6) + "\" y=\"" + U(y + 14) + "\">" +
            PercentOf(tr.busy_ns, span) + "</text>";
  }
  // Step boundaries.
  const auto x_of = [&](uint64_t t) {
    t = std::clamp(t, tl.start_ns, tl.end_ns);
    return kLabelW + static_cast<double>(kPlotW) * static_cast<double>(t - tl.start_ns) /
                         static_cast<double>(span);
  };
  for (uint64_t s : tl.step_starts) {
    const double x = x_of(s);
    *out += "<line class=\"stepline\" x1=\"" + Num(x, 1) + "\" x2=\"" + Num(x, 1) + "\" y1=\"" +
            U(kTop - 4) + "\" y2=\"" + U(kTop + plot_h) + "\"/>";
  }
  // The gaps: a band over every row, numbered above.
  for (size_t i = 0; i < tl.gaps.size(); ++i) {
    const TimelineGap& g = tl.gaps[i];
    const double x0 = x_of(g.start_ns), x1 = std::max(x0 + 1.5, x_of(g.start_ns + g.dur_ns));
    *out += "<rect class=\"gap\" x=\"" + Num(x0, 1) + "\" y=\"" + U(kTop - 2) + "\" width=\"" +
            Num(x1 - x0, 1) + "\" height=\"" + U(plot_h) + "\"><title>GPU " + U(g.device) +
            " idle " + FormatDuration(g.dur_ns) + "</title></rect>";
    *out += "<text class=\"gapmark\" x=\"" + Num((x0 + x1) / 2, 1) + "\" y=\"" + U(kTop - 5) +
            "\" text-anchor=\"middle\">" + Marker(i) + "</text>";
  }
  // The time axis, as trace timestamps.
  for (int k = 0; k <= 4; ++k) {
    const uint64_t t = tl.start_ns + span / 4 * static_cast<uint64_t>(k);
    const double x = kLabelW + kPlotW * k / 4.0;
    *out += "<line class=\"tick\" x1=\"" + Num(x, 1) + "\" x2=\"" + Num(x, 1) + "\" y1=\"" +
            U(kTop + plot_h) + "\" y2=\"" + U(kTop + plot_h + 4) + "\"/>";
    *out += "<text x=\"" + Num(x, 1) + "\" y=\"" + U(kTop + plot_h + 16) + "\" text-anchor=\"" +
            (k == 0 ? "start" : k == 4 ? "end" : "middle") + "\">" +
            FormatDuration(t - std::min(t, origin_ns)) + "</text>";
  }
  *out += "</svg>";
  if (tl.hidden_host + tl.hidden_streams + tl.hidden_devices > 0) {
    *out += "<p class=\"muted\">Not drawn: ";
    std::string parts;
    if (tl.hidden_host > 0) {
      parts += U(tl.hidden_host) + " less busy host thread" + (tl.hidden_host == 1 ? "" : "s") +
               " (busy " + FormatDuration(tl.hidden_host_busy_ns) + " in all)";
    }
    if (tl.hidden_streams > 0) {
      parts += std::string(parts.empty() ? "" : ", ") + U(tl.hidden_streams) + " less busy stream" +
               (tl.hidden_streams == 1 ? "" : "s") + " (busy " +
               FormatDuration(tl.hidden_streams_busy_ns) + " in all)";
    }
    if (tl.hidden_devices > 0) {
      parts += std::string(parts.empty() ? "" : ", ") + U(tl.hidden_devices) +
               " less busy GPU row" + (tl.hidden_devices == 1 ? "" : "s");
    }
    *out += parts + "; the trace has every one.</p>";
  }
  if (!tl.gaps.empty()) {
    *out += "<ol class=\"gaps\">";
    for (size_t i = 0; i < tl.gaps.size(); ++i) {
      const TimelineGap& g = tl.gaps[i];
      *out += "<li><span class=\"gapno\">" + Marker(i) + "</span> GPU " + U(g.device) +
              " idle <b>" + FormatDuration(g.dur_ns) + "</b> at " +
              FormatDuration(g.start_ns - std::min(g.start_ns, origin_ns));
      if (g.step) *out += " (ProfilerStep#" + U(*g.step) + ")";
      *out += "; the host meanwhile: ";
      for (size_t c = 0; c < g.context.size(); ++c) {
        *out += (c == 0 ? "" : "; ") + Html(g.context[c], kMaxTextChars);
      }
      *out += "</li>";
    }
    *out += "</ol>";
  } else {
    *out += "<p class=\"muted\">No GPU idle gaps to name: gpu_idle reports gaps of 100 us or "
            "more only when they add up to 5% of the window.</p>";
  }
  *out += "</section>";
}

}  // namespace gprof::html_internal
