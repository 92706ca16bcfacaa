// The merged table (see merge_table.h): per row across inputs (MergeRows), Calls, Self CUDA,
// Self CPU and CPU total as min / median / max across the inputs, and where the max is. Built
// from the per-input row vectors the survey kept; never from the profiles.
#include "outputs/table/merge_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "analysis/ranks/merge.h"
#include "analysis/tables/stats.h"
#include "outputs/table/table.h"
#include "text/format.h"

namespace gprof {
namespace {

constexpr size_t kSpacing = 2;

// The max column: the rank, or host:pid for a process without one.
std::string MaxAt(const MergeInput& in) {
  if (in.info.rank >= 0) return std::to_string(in.info.rank);
  return in.info.hostname + ":" + std::to_string(in.info.pid);
}

// The same in a sentence: "rank 3", "node1:4242".
std::string MaxWhere(const MergeInput& in) {
  return (in.info.rank >= 0 ? "rank " : "") + MaxAt(in);
}

std::string Count(double v) {
  if (v == std::floor(v)) return std::to_string(static_cast<uint64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Time(double ns) { return FormatDuration(static_cast<uint64_t>(std::llround(ns))); }

// "ranks 0-3", "ranks 0, 2, 5", plus "and 2 processes without a rank".
std::string InputsText(const std::vector<MergeInput>& inputs) {
  std::vector<int32_t> ranks;
  size_t unranked = 0;
  for (const MergeInput& in : inputs) {
    if (in.info.rank >= 0) ranks.push_back(in.info.rank);
    else ++unranked;
  }
  std::string out = std::to_string(inputs.size()) +
                    (inputs.size() == 1 ? " process" : " processes");
  std::sort(ranks.begin(), ranks.end());
  const bool contiguous = !ranks.empty() && ranks.back() - ranks.front() + 1 ==
                                                static_cast<int32_t>(ranks.size());
  if (ranks.size() > 2 && contiguous) {
    out += ": ranks " + std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
  } else if (!ranks.empty()) {
    out += ranks.size() == 1 ? ": rank " : ": ranks ";
    for (size_t i = 0; i < ranks.size(); ++i) {
      out += (i ? ", " : "") + std::to_string(ranks[i]);
    }
  }
  if (unranked > 0) {
    out += (ranks.empty() ? ": " : " and ") + std::to_string(unranked) +
           (unranked == 1 ? " process" : " processes") + " without a rank";
  }
  return out;
}

// Lays out cells in columns: the first left-aligned, the others right-aligned.
struct Grid {
  std::vector<std::vector<std::string>> rows;  // a row of only "-" cells is a separator
  std::vector<size_t> widths;

  void Add(std::vector<std::string> row) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], DisplayWidth(row[i]));
    }
    rows.push_back(std::move(row));
  }
  static size_t DisplayWidth(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }
  std::string Line(const std::vector<std::string>& row) const {
    std::string l;
    for (size_t i = 0; i < row.size(); ++i) {
      const size_t pad = widths[i] - DisplayWidth(row[i]);
      if (i == 0) l += row[i] + std::string(pad, ' ');
      else l += std::string(pad, ' ') + row[i];
      if (i + 1 < row.size()) l.append(kSpacing, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return l;
  }
  std::string Separator() const {
    std::string l;
    for (size_t i = 0; i < widths.size(); ++i) {
      l.append(widths[i], '-');
      if (i + 1 < widths.size()) l.append(kSpacing, ' ');
    }
    return l;
  }
};

}  // namespace

std::string FormatMergedTable(const std::vector<MergeInput>& inputs, const std::string& title,
                              int row_limit) {
  bool gpu = false;
  for (const MergeInput& in : inputs) gpu = gpu || in.gpu;
  const std::vector<MergedRow> rows = MergeRows(inputs);

  std::vector<std::string_view> names;
  for (const MergedRow& r : rows) names.push_back(r.name);
  const size_t name_width = std::max<size_t>(NameColumnWidth(names), 4);

  std::vector<const char*> groups = {"Calls"};
  if (gpu) groups.push_back("Self CUDA");
  groups.push_back("Self CPU");
  groups.push_back("CPU total");

  Grid grid;
  {
    std::vector<std::string> head = {"Name", "Kind", "Ranks"};
    for (size_t g = 0; g < groups.size(); ++g) {
      for (const char* h : {"min", "median", "max", "max at"}) head.push_back(h);
    }
    grid.Add(std::move(head));
  }
  const size_t limit = TableRowsShown(rows.size(), row_limit);
  size_t shown = 0;
  for (const MergedRow& r : rows) {
    if (shown == limit) break;
    ++shown;
    std::vector<std::string> cells = {TableName(r.name, name_width), r.device ? "GPU" : "CPU",
                                      std::to_string(r.inputs)};
    const auto add = [&](const AcrossInputs& a, bool time) {
      cells.push_back(time ? FormatDuration(a.min) : std::to_string(a.min));
      cells.push_back(time ? Time(a.median) : Count(a.median));
      cells.push_back(time ? FormatDuration(a.max) : std::to_string(a.max));
      cells.push_back(inputs.empty() ? "-" : MaxAt(inputs[a.max_input]));
    };
    add(r.calls, false);
    if (gpu) add(r.self_cuda, true);
    add(r.self_cpu, true);
    add(r.cpu_total, true);
    grid.Add(std::move(cells));
  }

  // The group line: each group's name left-aligned over its four columns.
  std::string group_line(grid.widths[0] + grid.widths[1] + grid.widths[2] + 3 * kSpacing, ' ');
  for (size_t g = 0; g < groups.size(); ++g) {
    size_t span = 3 * kSpacing;
    for (size_t c = 0; c < 4; ++c) span += grid.widths[3 + 4 * g + c];
    std::string cell = "| " + std::string(groups[g]);
    cell.resize(std::max(span, cell.size()), ' ');
    group_line += cell;
    if (g + 1 < groups.size()) group_line.append(kSpacing, ' ');
  }
  while (!group_line.empty() && group_line.back() == ' ') group_line.pop_back();

  std::string out = title + "\n";
  out += InputsText(inputs) + "; per row min / median / max across them (a process without the "
                              "row counts 0; Ranks: how many have it), max at: the rank (host:pid "
                              "without a rank) with the max.\n";
  const std::string sep = grid.Separator();
  out += sep + "\n" + group_line + "\n" + grid.Line(grid.rows[0]) + "\n" + sep + "\n";
  for (size_t i = 1; i < grid.rows.size(); ++i) out += grid.Line(grid.rows[i]) + "\n";
  out += sep + "\n";
  if (shown < rows.size()) {
    out += FoldedRowsLine(rows.size() - shown, shown,
                          gpu ? "summed Self CUDA" : "summed Self CPU") + "\n";
  }

  // Per-input totals, as each one's own table footer has them.
  std::vector<uint64_t> self_cpu(inputs.size(), 0), self_cuda(inputs.size(), 0);
  for (size_t k = 0; k < inputs.size(); ++k) {
    for (const EventStats& e : inputs[k].rows) {
      self_cpu[k] += e.self_cpu_ns;
      if (e.device) self_cuda[k] += e.self_cuda_ns;
    }
  }
  const auto total_line = [&](const char* what, const std::vector<uint64_t>& v) {
    const AcrossInputs a = SummarizeAcross(v);
    out += std::string(what) + " per process: min " + FormatDuration(a.min) + ", median " +
           Time(a.median) + ", max " + FormatDuration(a.max) +
           (inputs.empty() ? "" : " at " + MaxWhere(inputs[a.max_input])) + "\n";
  };
  total_line("Self CPU time total", self_cpu);
  if (gpu) total_line("Self CUDA time total", self_cuda);
  return out;
}

}  // namespace gprof
