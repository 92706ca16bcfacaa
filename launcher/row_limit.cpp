// The printed table and table.txt's row limits (see row_limit.h). Launcher process only.
#include "launcher/row_limit.h"

namespace gprof::launcher {

TableOptions FileTableOptions(TableOptions options) {
  if (options.row_limit != -1 && options.row_limit < static_cast<int>(kFoldRowsAbove)) {
    options.row_limit = kAutoRowLimit;
  }
  return options;
}

std::string PrintedTable(const Profile& profile, const TableOptions& options,
                         const TableRows& rows, const std::string& table_path) {
  TableOptions printed = options;
  if (printed.row_limit == kAutoRowLimit) printed.row_limit = kPrintedRows;
  std::string text = RenderTable(profile, printed, rows);
  const size_t total = rows.rows.size();
  const size_t shown = TableRowsShown(total, printed.row_limit);
  const size_t in_file = TableRowsShown(total, FileTableOptions(options).row_limit);
  if (shown < in_file) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += "gprof-run: the top " + std::to_string(shown) + " of " + std::to_string(total) +
            " rows are printed; " + table_path + " has " +
            (in_file == total ? "all of them" : "the top " + std::to_string(in_file)) +
            " (--row-limit N prints N)\n";
  }
  return text;
}

}  // namespace gprof::launcher
