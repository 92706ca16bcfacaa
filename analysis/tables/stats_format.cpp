// The stats reports' text, CSV and JSON (see stats.h). Launcher process only.
#include "analysis/tables/stats.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "text/format.h"

namespace gprof {
namespace {

// "1234567.8" -> "1,234,567.8".
std::string Grouped(const std::string& plain) {
  size_t digits_end = plain.find('.');
  if (digits_end == std::string::npos) digits_end = plain.size();
  const size_t digits_start = !plain.empty() && plain[0] == '-' ? 1 : 0;
  std::string out = plain.substr(0, digits_start);
  for (size_t i = digits_start; i < digits_end; ++i) {
    out += plain[i];
    const size_t left = digits_end - i - 1;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return out + plain.substr(digits_end);
}

std::string CellText(const StatsCell& cell, const StatsColumn& col, bool table) {
  if (const auto* u = std::get_if<uint64_t>(&cell)) {
    return table ? Grouped(std::to_string(*u)) : std::to_string(*u);
  }
  if (const auto* d = std::get_if<double>(&cell)) {
    const std::string plain = FormatFixed(*d, table ? col.table_decimals : col.csv_decimals);
    return table ? Grouped(plain) : plain;
  }
  return std::get<std::string>(cell);
}

std::string Heading(const StatsTable& t) { return " ** " + t.title + " (" + t.name + "):\n"; }

}  // namespace

std::string FormatStatsTables(const std::vector<StatsTable>& tables) {
  std::string out;
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    const StatsTable& t = tables[ti];
    if (ti > 0) out += "\n";
    out += Heading(t) + "\n";
    if (t.rows.empty()) {
      out += " SKIPPED: the profile has no data for this report.\n";
      continue;
    }
    std::vector<std::vector<std::string>> text;
    std::vector<size_t> width;
    for (const StatsColumn& c : t.columns) width.push_back(c.header.size());
    for (const auto& row : t.rows) {
      std::vector<std::string> line;
      for (size_t i = 0; i < row.size(); ++i) {
        line.push_back(CellText(row[i], t.columns[i], true));
        width[i] = std::max(width[i], line.back().size());
      }
      text.push_back(std::move(line));
    }
    auto emit = [&](const std::vector<std::string>& cells, bool header) {
      std::string line;
      for (size_t i = 0; i < cells.size(); ++i) {
        const bool left = header || t.columns[i].kind == StatsColumn::kText;
        const std::string pad(width[i] - cells[i].size(), ' ');
        line += " " + (left ? cells[i] + pad : pad + cells[i]) + (i + 1 < cells.size() ? " " : "");
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    };
    std::vector<std::string> headers, dashes;
    for (size_t i = 0; i < t.columns.size(); ++i) {
      headers.push_back(t.columns[i].header);
      dashes.push_back(std::string(width[i], '-'));
    }
    emit(headers, true);
    emit(dashes, true);
    for (const auto& line : text) emit(line, false);
  }
  return out;
}

std::string FormatStatsCsv(const std::vector<StatsTable>& tables) {
  std::string out;
  for (size_t ti = 0; ti < tables.size(); ++ti) {
    const StatsTable& t = tables[ti];
    if (tables.size() > 1) out += (ti > 0 ? "\n" : "") + Heading(t) + "\n";
    for (size_t i = 0; i < t.columns.size(); ++i) {
      out += (i > 0 ? "," : "") + CsvQuote(t.columns[i].header);
    }
    out += "\n";
    for (const auto& row : t.rows) {
      for (size_t i = 0; i < row.size(); ++i) {
        out += (i > 0 ? "," : "") + CsvQuote(CellText(row[i], t.columns[i], false));
      }
      out += "\n";
    }
  }
  return out;
}

std::string FormatStatsJson(const std::vector<StatsTable>& tables) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const StatsTable& t : tables) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& row : t.rows) {
      nlohmann::ordered_json obj = nlohmann::ordered_json::object();
      for (size_t i = 0; i < row.size(); ++i) {
        std::visit([&](const auto& v) { obj[t.columns[i].header] = v; }, row[i]);
      }
      rows.push_back(std::move(obj));
    }
    doc[t.name] = std::move(rows);
  }
  // Invalid UTF-8 in a name is replaced rather than thrown on.
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gprof