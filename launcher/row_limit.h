// --row-limit's meaning (docs/LAUNCHER.md, "Row limit"): it sets how many rows are printed on
// stderr (default kPrintedRows, as torch's row_limit); table.txt is always the whole table (every
// row up to kFoldRowsAbove, or more with --row-limit -1 or a larger N), so re-rendering with a
// short limit never shortens the file. Launcher process only.
#pragma once

#include <string>

#include "outputs/table/table.h"

namespace gprof::launcher {

inline constexpr int kPrintedRows = 20;

// The options table.txt is rendered with: `options`' row limit raised to the whole table.
TableOptions FileTableOptions(TableOptions options);

// The table printed on stderr: the top rows by `options`' row limit (kPrintedRows when none was
// given), then, when it shows fewer rows than the file, a line pointing at `table_path`.
std::string PrintedTable(const Profile& profile, const TableOptions& options,
                         const TableRows& rows, const std::string& table_path);

}  // namespace gprof::launcher
