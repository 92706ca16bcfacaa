// RenderTable: torch's key_averages().table() text from KeyAverages (launcher process only).
#include "outputs/table/table.h"

#include <algorithm>
#include <stdexcept>

#include "analysis/tables/key_averages.h"
#include "analysis/tables/op_stacks.h"
#include "text/format.h"
#include "text/utf8.h"

namespace gprof {
namespace {

constexpr size_t kColumnWidth = 12;  // torch's DEFAULT_COLUMN_WIDTH
constexpr size_t kSpacing = 2;

// Characters (code points) in a valid UTF-8 string, which is what the terminal shows.
size_t DisplayLength(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Printable(std::string_view name) {
  std::string s = RepairUtf8(name);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return s;
}

// Prefix of valid UTF-8 `s` holding `chars` code points.
std::string_view PrefixChars(std::string_view s, size_t chars) {
  size_t i = 0;
  for (size_t n = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (n == chars) break;
      ++n;
    }
  }
  return s.substr(0, i);
}

void Cell(std::string& line, std::string_view text, size_t width) {
  const size_t len = DisplayLength(text);
  if (len < width) line.append(width - len, ' ');
  line += text;
  line.append(kSpacing, ' ');
}

// torch's Source Location cells are left-aligned.
void LeftCell(std::string& line, std::string_view text, size_t width) {
  const size_t len = DisplayLength(text);
  line += text;
  if (len < width) line.append(width - len, ' ');
  line.append(kSpacing, ' ');
}

// torch's trim_path: a longer entry keeps its last `width` characters, the first three of them
// replaced by "...".
std::string TrimSourcePath(const std::string& entry, size_t width) {
  const size_t len = DisplayLength(entry);
  if (len <= width) return entry;
  std::string_view tail = std::string_view(entry).substr(PrefixChars(entry, len - width).size());
  if (width > 3) return "..." + std::string(tail.substr(PrefixChars(tail, 3).size()));
  return std::string(tail);
}

}  // namespace

// Signed: memory keys can be negative (a row that frees more than it allocates sorts last).
int64_t TableSortValue(const EventStats& e, std::string_view key) {
  const uint64_t n = std::max<uint64_t>(e.count, 1);
  if (key == "self_cpu_memory_usage") return e.self_cpu_mem;
  if (key == "cpu_memory_usage") return e.cpu_mem;
  if (key == "self_cuda_memory_usage" || key == "self_device_memory_usage") return e.self_cuda_mem;
  if (key == "cuda_memory_usage" || key == "device_memory_usage") return e.cuda_mem;
  uint64_t v = e.count;  // "count"
  if (key == "self_cpu_time_total") v = e.self_cpu_ns;
  if (key == "cpu_time_total") v = e.cpu_total_ns;
  if (key == "self_cuda_time_total" || key == "self_device_time_total") v = e.self_cuda_ns;
  if (key == "cuda_time_total" || key == "device_time_total") v = e.cuda_total_ns;
  if (key == "cpu_time") v = e.cpu_total_ns / n;
  if (key == "cuda_time" || key == "device_time") v = e.cuda_total_ns / n;
  return static_cast<int64_t>(v);
}

namespace {

std::string CounterLine(uint64_t n, const char* what) { return std::to_string(n) + " " + what; }

}  // namespace

const std::vector<std::string_view>& TableSortKeys() {
  static const std::vector<std::string_view> keys = {
      "auto",          "self_cpu_time_total", "cpu_time_total",         "self_cuda_time_total",
      "cuda_time_total", "cpu_time",          "cuda_time",              "count",
      "self_device_time_total", "device_time_total", "device_time",
      "self_cpu_memory_usage", "cpu_memory_usage", "self_cuda_memory_usage", "cuda_memory_usage",
      "self_device_memory_usage", "device_memory_usage"};
  return keys;
}

size_t NameColumnWidth(const std::vector<std::string_view>& names) {
  size_t longest = 0;
  for (std::string_view n : names) longest = std::max(longest, DisplayLength(Printable(n)));
  return std::min(longest + 4, kMaxNameColumnWidth);
}

std::string TableName(std::string_view name, size_t width) {
  std::string s = Printable(name);
  if (DisplayLength(s) <= width) return s;
  return std::string(PrefixChars(s, width - 3)) + "...";
}

std::vector<std::string> ProfileNotes(const Profile& p) {
  std::vector<std::string> notes;
  const ProfileInfo& i = p.info;
  if (i.cycle != 0 || i.first_step != 0 || i.last_step != 0 || i.partial_window) {
    std::string s = "Profile window: cycle " + std::to_string(i.cycle) + ", steps " +
                    std::to_string(i.first_step) + ".." + std::to_string(i.last_step);
    if (i.partial_window) s += " (partial: the program exited before the active window ended)";
    notes.push_back(std::move(s));
  }
  ForEachCounter(p.counters, [&](const char* name, uint64_t value, const char* meaning) {
    if (value == 0) return;
    if (std::string_view(name) == "nvtx_unmatched_pops" && p.counters.host_events_dropped != 0) {
      // Not the program's fault: the pushes of these pops were among the dropped events.
      meaning = "NVTX pops/ends with no open range, expected when host events are dropped: their "
                "pushes were among them";
    }
    notes.push_back(CounterLine(value, meaning));
  });
  if (p.stack_counters.dropped != 0) {
    // Also in host_events_dropped (the same full buffer); said apart because of what it costs.
    notes.push_back(CounterLine(p.stack_counters.dropped,
                                "native stacks (--backtrace) dropped, host buffer full: those CUDA "
                                "calls show no stack (raise GPROF_HOST_BUFFER_MIB)"));
  }
  return notes;
}

std::string FoldedRowsLine(size_t folded, size_t shown, const std::string& sort_key) {
  if (folded == 0) return "";
  return "... " + std::to_string(folded) + (folded == 1 ? " more row" : " more rows") +
         " folded: the table shows the top " + std::to_string(shown) + " by " + sort_key +
         " (--row-limit -1 prints every row)";
}

namespace {

void CheckSortKey(const TableOptions& options) {
  const auto& keys = TableSortKeys();
  if (std::find(keys.begin(), keys.end(), options.sort_by) == keys.end()) {
    std::string msg = "unknown sort key '" + options.sort_by + "'; expected one of:";
    for (std::string_view k : keys) msg += " " + std::string(k);
    throw std::invalid_argument(msg);
  }
}

std::string ResolvedSortKey(const TableOptions& options, bool gpu) {
  if (options.sort_by != "auto") return options.sort_by;
  return gpu ? "self_cuda_time_total" : "self_cpu_time_total";
}

void SortRows(TableRows* t) {
  // Descending, stable over the name order KeyAverages returns: deterministic ties.
  std::stable_sort(t->rows.begin(), t->rows.end(), [&](const EventStats& a, const EventStats& b) {
    return TableSortValue(a, t->sort_key) > TableSortValue(b, t->sort_key);
  });
}

}  // namespace

bool TableByShape(const TableOptions& options, bool has_shapes) {
  return options.group_by_input_shape == TableOptions::ByShape::kOn ||
         (options.group_by_input_shape == TableOptions::ByShape::kAuto && has_shapes);
}

TableRows SortedTableRows(const Profile& profile, const TableOptions& options,
                          const RangeStacks* stacks) {
  CheckSortKey(options);
  TableRows t;
  t.gpu = profile.HasGpuData();
  t.sort_key = ResolvedSortKey(options, t.gpu);
  t.by_shape = TableByShape(options, HasInputShapes(profile));
  KeyAveragesOptions ka;
  ka.group_by_input_shape = t.by_shape;
  ka.stacks = stacks;
  t.by_stack = stacks != nullptr;
  if (t.by_stack) t.stack_note = RangeStacksNote(*stacks);
  t.rows = KeyAverages(profile, ka);
  SortRows(&t);
  return t;
}

TableRows SortTableRows(std::vector<EventStats> rows, const TableOptions& options, bool gpu,
                        bool by_shape) {
  CheckSortKey(options);
  TableRows t;
  t.gpu = gpu;
  t.sort_key = ResolvedSortKey(options, gpu);
  t.by_shape = by_shape;
  t.rows = std::move(rows);
  SortRows(&t);
  return t;
}

std::string RenderTable(const Profile& profile, const TableOptions& options) {
  return RenderTable(profile, options, SortedTableRows(profile, options));
}

std::string RenderTable(const Profile& profile, const TableOptions& options,
                        const TableRows& sorted) {
  const bool gpu = sorted.gpu;
  const std::string& key = sorted.sort_key;
  const bool by_shape = sorted.by_shape;
  const std::vector<EventStats>& events = sorted.rows;

  // torch sums "Self CUDA time total" over the device rows only: an op's Self CUDA is the same
  // time as its kernels' rows.
  uint64_t self_cpu_total = 0, self_cuda_total = 0;
  std::vector<std::string_view> names;
  size_t shapes_width = 0;
  for (const EventStats& e : events) {
    self_cpu_total += e.self_cpu_ns;
    if (e.device) self_cuda_total += e.self_cuda_ns;
    names.push_back(e.name);
    shapes_width = std::max(shapes_width, e.input_shapes.size() + 4);
  }
  const size_t name_width = NameColumnWidth(names);
  shapes_width = std::min(shapes_width, kMaxShapesColumnWidth);
  // torch: the longest stack entry + 4, at most max_src_column_width (75).
  const bool by_stack = sorted.by_stack;
  size_t source_width = 0;
  for (const EventStats& e : events) {
    for (const std::string& frame : e.stack) {
      source_width = std::max(source_width, DisplayLength(Printable(frame)) + 4);
    }
  }
  source_width = std::min(source_width, kMaxSourceColumnWidth);

  std::vector<std::string> header = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                     "CPU time avg"};
  if (gpu) {
    for (const char* h : {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"}) header.push_back(h);
  }
  // torch: the memory columns with profile_memory; the device ones when some row has device
  // memory. CPU Mem only when some row has host memory: gprof-run counts pinned host memory (CUDA's
  // allocation records) and not the host allocator, so a column of zeros would read as "this op
  // allocated nothing" where torch shows its CPU allocations; a line under the table says so.
  const bool memory = options.profile_memory;
  bool device_memory = false;
  bool host_memory = false;
  for (const EventStats& e : events) {
    device_memory = device_memory || e.cuda_mem != 0;
    host_memory = host_memory || e.cpu_mem != 0 || e.self_cpu_mem != 0;
  }
  if (memory) {
    if (host_memory) {
      header.push_back("CPU Mem");
      header.push_back("Self CPU Mem");
    }
    if (device_memory) {
      header.push_back("CUDA Mem");
      header.push_back("Self CUDA Mem");
    }
  }
  header.push_back("# of Calls");
  if (by_shape) header.push_back("Input Shapes");
  const size_t shapes_column = header.size() - 1;
  if (by_stack) header.push_back("Source Location");

  std::string sep;
  sep.append(name_width, '-').append(kSpacing, ' ');
  const auto width_of = [&](size_t column) {
    if (by_stack && column + 1 == header.size()) return source_width;
    return by_shape && column == shapes_column ? shapes_width : kColumnWidth;
  };
  for (size_t i = 1; i < header.size(); ++i) sep.append(width_of(i), '-').append(kSpacing, ' ');

  std::string out;
  const auto line = [&](const std::string& l) { out += l; out += '\n'; };
  if (by_stack) line(sorted.stack_note);
  line(sep);
  {
    std::string l;
    Cell(l, header[0], name_width);
    const size_t right_aligned = header.size() - (by_stack ? 1 : 0);
    for (size_t i = 1; i < right_aligned; ++i) Cell(l, header[i], width_of(i));
    if (by_stack) LeftCell(l, header.back(), source_width);
    line(l);
  }
  // torch's rows under a row with a stack: empty cells, then one stack entry (or nothing).
  const auto source_line = [&](std::string_view entry) {
    std::string l;
    Cell(l, "", name_width);
    for (size_t i = 1; i + 1 < header.size(); ++i) Cell(l, "", width_of(i));
    LeftCell(l, TrimSourcePath(Printable(entry), source_width), source_width);
    line(l);
  };
  line(sep);
  const size_t limit = TableRowsShown(events.size(), options.row_limit);
  size_t shown = 0;
  for (const EventStats& e : events) {
    if (shown == limit) break;
    ++shown;
    const uint64_t n = std::max<uint64_t>(e.count, 1);
    std::string l;
    Cell(l, TableName(e.name, name_width), name_width);
    Cell(l, FormatPercent(e.self_cpu_ns, self_cpu_total), kColumnWidth);
    Cell(l, FormatDuration(e.self_cpu_ns), kColumnWidth);
    Cell(l, FormatPercent(e.cpu_total_ns, self_cpu_total), kColumnWidth);
    Cell(l, FormatDuration(e.cpu_total_ns), kColumnWidth);
    Cell(l, FormatDuration(e.cpu_total_ns / n), kColumnWidth);
    if (gpu) {
      Cell(l, FormatDuration(e.self_cuda_ns), kColumnWidth);
      Cell(l, FormatPercent(e.self_cuda_ns, self_cuda_total), kColumnWidth);
      Cell(l, FormatDuration(e.cuda_total_ns), kColumnWidth);
      Cell(l, FormatDuration(e.cuda_total_ns / n), kColumnWidth);
    }
    if (memory) {
      if (host_memory) {
        Cell(l, FormatMemory(e.cpu_mem), kColumnWidth);
        Cell(l, FormatMemory(e.self_cpu_mem), kColumnWidth);
      }
      if (device_memory) {
        Cell(l, FormatMemory(e.cuda_mem), kColumnWidth);
        Cell(l, FormatMemory(e.self_cuda_mem), kColumnWidth);
      }
    }
    Cell(l, std::to_string(e.count), kColumnWidth);
    // torch cuts the shapes to the column width, without "...".
    if (by_shape) Cell(l, e.input_shapes.substr(0, shapes_width), shapes_width);
    if (by_stack) {
      LeftCell(l, e.stack.empty() ? "" : TrimSourcePath(Printable(e.stack[0]), source_width),
               source_width);
    }
    line(l);
    if (by_stack) {
      for (size_t k = 1; k < e.stack.size(); ++k) source_line(e.stack[k]);
      source_line("");
    }
  }
  line(sep);
  if (shown < events.size()) line(FoldedRowsLine(events.size() - shown, shown, key));
  line("Self CPU time total: " + FormatDuration(self_cpu_total));
  if (gpu) line("Self CUDA time total: " + FormatDuration(self_cuda_total));
  if (memory && !host_memory) {
    line("CPU Mem columns left out: no row holds pinned host memory, the only host memory "
         "gprof-run counts (the host allocator, torch's CPU one included, is not tracked)");
  }
  for (const std::string& note : ProfileNotes(profile)) line(note);
  return out;
}

}  // namespace gprof
