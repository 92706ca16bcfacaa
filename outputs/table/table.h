// The table output: a Profile as key_averages().table()-style text (REFERENCE.md §2), from the
// rows KeyAverages (analysis/tables/key_averages.h) computes. May throw; callers (the launcher)
// catch in main. Below RenderTable, the layout helpers behind it, exposed for unit tests
// (launcher process only).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/tables/key_averages.h"
#include "model/profile.h"

namespace gprof {

// A table of a long run can have hundreds of thousands of distinct names (one per kernel
// template instance, per NVTX step name): by default it keeps the top rows, never a 100 MB file.
inline constexpr int kAutoRowLimit = -2;
inline constexpr size_t kFoldRowsAbove = 2000;

// How many of `rows` rows a table with `row_limit` shows.
inline size_t TableRowsShown(size_t rows, int row_limit) {
  if (row_limit == -1) return rows;
  const size_t limit = row_limit >= 0 ? static_cast<size_t>(row_limit) : kFoldRowsAbove;
  return rows < limit ? rows : limit;
}
// The line under a table that left out `folded` rows ("" when none).
std::string FoldedRowsLine(size_t folded, size_t shown, const std::string& sort_key);

struct TableOptions {
  // torch sort keys: self_cpu_time_total, cpu_time_total, self_cuda_time_total, cuda_time_total,
  // cpu_time (avg), cuda_time (avg), count; "auto" = self_cuda_time_total when the profile has GPU
  // data, else self_cpu_time_total.
  std::string sort_by = "auto";
  // -1 = all rows; N >= 0 = the top N; kAutoRowLimit = all up to kFoldRowsAbove rows, else the
  // top kFoldRowsAbove. Rows left out are counted in one line under the table.
  int row_limit = kAutoRowLimit;
  // Rows per (name, input shapes) with torch's "Input Shapes" column, as
  // key_averages(group_by_input_shape=True).table(): auto = when the profile has shapes
  // (recorded with --record-shapes).
  enum class ByShape { kAuto, kOn, kOff } group_by_input_shape = ByShape::kAuto;
  // torch's profile_memory=True columns (CPU Mem, Self CPU Mem, and CUDA Mem, Self CUDA Mem when
  // some row has device memory), from the allocation records (key_averages.h).
  bool profile_memory = false;
  // Rows per (name, Python source location) with torch's "Source Location" column, as
  // key_averages(group_by_stack_n=N).table(): N frames (op_stacks.h; --with-stack,
  // --group-by-stack N), 0 = not grouped. Needs the Python samples: the caller makes the
  // RangeStacks and passes them to SortedTableRows.
  uint32_t group_by_stack = 0;
};

// The sort keys RenderTable accepts (for the launcher's flag validation and --help).
const std::vector<std::string_view>& TableSortKeys();

// Throws std::invalid_argument on an unknown sort key.
std::string RenderTable(const Profile& profile, const TableOptions& options);

// The table's rows before formatting, in its order, so that other views of the same profile (the
// HTML report) show the same rows without computing KeyAverages again.
struct TableRows {
  std::string sort_key;  // the resolved key ("auto" chosen: self_cuda_time_total or self_cpu_...)
  bool gpu = false;      // the profile has GPU data (the CUDA columns are shown)
  bool by_shape = false; // rows per (name, input shapes)
  bool by_stack = false; // rows per (name, Python source location): the Source Location column
  std::string stack_note;  // by_stack: RangeStacksNote, printed above the table
  std::vector<EventStats> rows;  // every row, sorted by sort_key descending (stable by name)
};
// Throws std::invalid_argument on an unknown sort key. `stacks` (StacksOfRanges of `profile`,
// op_stacks.h): group by Python source location; nullptr: not grouped, whatever
// options.group_by_stack says.
struct RangeStacks;
TableRows SortedTableRows(const Profile& profile, const TableOptions& options,
                          const RangeStacks* stacks = nullptr);
// The same from rows made elsewhere (a run added up segment by segment: segment_rows.h), ordered
// as KeyAverages orders them; `gpu`: the run has GPU data; `by_shape`: they are grouped by input
// shape (TableByShape).
TableRows SortTableRows(std::vector<EventStats> rows, const TableOptions& options, bool gpu,
                        bool by_shape);
// Whether rows are grouped by input shape under `options` for a profile that has shapes or not.
bool TableByShape(const TableOptions& options, bool has_shapes);
// RenderTable from rows SortedTableRows made of `profile` with the same `options`.
std::string RenderTable(const Profile& profile, const TableOptions& options,
                        const TableRows& rows);
// The value a row is sorted by under `key` (one of TableSortKeys(), not "auto").
int64_t TableSortValue(const EventStats& row, std::string_view key);  // memory keys may be < 0

// ---- layout helpers -----------------------------------------------------------------------

inline constexpr size_t kMaxNameColumnWidth = 55;  // torch's MAX_NAME_COLUMN_WIDTH
inline constexpr size_t kMaxShapesColumnWidth = 80;  // torch's max_shapes_column_width
inline constexpr size_t kMaxSourceColumnWidth = 75;  // torch's max_src_column_width

// Name column width for these names: min(longest + 4, 55), as torch computes it.
size_t NameColumnWidth(const std::vector<std::string_view>& names);

// A name as it appears in the table: printable (invalid UTF-8 repaired, control characters shown
// as '?'), cut to width - 3 characters + "..." when longer than `width`.
std::string TableName(std::string_view name, size_t width);

// The lines after the footers: one per non-zero counter and one for a schedule window, each
// saying what it means for the profile.
std::vector<std::string> ProfileNotes(const Profile& profile);

}  // namespace gprof
