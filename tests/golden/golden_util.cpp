// Helpers shared by the golden tests (see golden_util.h).
#include "tests/golden/golden_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "outputs/table/table.h"
#include "outputs/trace/trace_json.h"
#include "tests/golden/profile_loader.h"

namespace gprof::golden {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path GoldenDir() { return fs::path(GPROF_SOURCE_DIR) / "tests" / "golden"; }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CaseOutputs RenderCase(const std::string& name) {
  const GoldenCase c = LoadGoldenCase((GoldenDir() / name / "input.json").string());
  const fs::path out = fs::path(testing::TempDir()) / ("expect_" + name) / "trace.json";
  fs::create_directories(out.parent_path());
  WriteTraceJson(c.profile, out.string());
  return {"fresh render", RenderTable(c.profile, c.table), json::parse(ReadFile(out))};
}

CaseOutputs ExpectedFiles(const std::string& name) {
  const fs::path dir = GoldenDir() / name;
  return {"checked-in files", ReadFile(dir / "table.txt"),
          json::parse(ReadFile(dir / "trace.json"))};
}

namespace {

std::vector<std::string> SplitCells(const std::string& line) {
  std::vector<std::string> cells;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = line.find("  ", i);
    if (j == std::string::npos) j = line.size();
    if (j > i) cells.push_back(line.substr(i, j - i));
    i = j;
  }
  return cells;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::vector<TableRow> TableRows(const std::string& table) {
  // Layout: separator, header, separator, rows..., separator, footers and notes.
  std::vector<TableRow> rows;
  std::vector<std::string> header;
  int separators = 0;
  for (const std::string& line : Lines(table)) {
    if (!line.empty() && line[0] == '-') {
      ++separators;
      continue;
    }
    if (separators == 1) header = SplitCells(line);
    if (separators != 2) continue;
    const std::vector<std::string> cells = SplitCells(line);
    EXPECT_EQ(cells.size(), header.size()) << "row '" << line << "'";
    TableRow row;
    for (size_t i = 0; i < cells.size() && i < header.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> RowNames(const std::string& table) {
  std::vector<std::string> names;
  for (TableRow& r : TableRows(table)) names.push_back(r["Name"]);
  return names;
}

TableRow Row(const std::string& table, const std::string& name) {
  for (TableRow& r : TableRows(table)) {
    if (r["Name"] == name) return r;
  }
  return {};
}

std::vector<std::string> RowCells(const std::string& table, const std::string& name) {
  for (const std::string& line : Lines(table)) {
    std::vector<std::string> cells = SplitCells(line);
    if (!cells.empty() && cells[0] == name) return cells;
  }
  return {};
}

std::map<std::string, int> CountByPhaseAndCategory(const json& trace) {
  std::map<std::string, int> counts;
  for (const json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph != "M") ++counts[ph + " " + e.value("cat", std::string())];
  }
  return counts;
}

std::vector<json> Events(const json& trace, const std::string& ph, const std::string& cat,
                         const std::string& name) {
  std::vector<json> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != ph) continue;
    if (!cat.empty() && e.value("cat", std::string()) != cat) continue;
    if (!name.empty() && e.value("name", std::string()) != name) continue;
    out.push_back(e);
  }
  return out;
}

namespace {

// The one trace event that `match` accepts; a failure naming `what` otherwise.
template <typename Match>
json One(const json& trace, const std::string& what, Match match) {
  std::vector<json> found;
  for (const json& e : trace.at("traceEvents")) {
    if (match(e)) found.push_back(e);
  }
  if (found.size() != 1) {
    ADD_FAILURE() << found.size() << " events are " << what << " (expected exactly one)";
    return json();
  }
  return found[0];
}

}  // namespace

json Slice(const json& trace, const std::string& cat, const std::string& name, double ts_us) {
  return One(trace, "X " + cat + " '" + name + "' at " + std::to_string(ts_us) + " us",
             [&](const json& e) {
               // Trace times are microseconds with three decimals: exact to the nanosecond.
               return e.at("ph") == "X" && e.value("cat", std::string()) == cat &&
                      e.value("name", std::string()) == name &&
                      std::abs(e.value("ts", -1.0) - ts_us) < 5e-4;
             });
}

json ByCorrelation(const json& trace, const std::string& cat, uint32_t correlation) {
  return One(trace, "X " + cat + " with correlation " + std::to_string(correlation),
             [&](const json& e) {
               return e.at("ph") == "X" && e.value("cat", std::string()) == cat &&
                      e.contains("args") && e["args"].value("correlation", 0u) == correlation;
             });
}

namespace {

std::string MetadataName(const json& trace, const std::string& kind, uint64_t pid,
                         const uint64_t* tid) {
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "M" || e.at("name") != kind || e.value("pid", uint64_t{0}) != pid) continue;
    if (tid != nullptr && e.value("tid", ~uint64_t{0}) != *tid) continue;
    return e.at("args").at("name");
  }
  return "";
}

}  // namespace

std::string ThreadName(const json& trace, uint64_t pid, uint64_t tid) {
  return MetadataName(trace, "thread_name", pid, &tid);
}

std::string ProcessName(const json& trace, uint64_t pid) {
  return MetadataName(trace, "process_name", pid, nullptr);
}

void ExpectInside(const json& child, const json& parent) {
  ASSERT_TRUE(child.is_object() && parent.is_object()) << child << " / " << parent;
  EXPECT_EQ(child.at("pid"), parent.at("pid")) << child << " not on the track of " << parent;
  EXPECT_EQ(child.at("tid"), parent.at("tid")) << child << " not on the track of " << parent;
  const double cs = child.at("ts"), ce = cs + child.value("dur", 0.0);
  const double ps = parent.at("ts"), pe = ps + parent.value("dur", 0.0);
  EXPECT_LE(ps, cs) << child << " starts before " << parent;
  EXPECT_LE(ce, pe + 5e-4) << child << " ends after " << parent;
}

// The flow's two ends are the call and the GPU record themselves (flow v2): bind_id 2^32 + the
// correlation id (docs/TRACE_JSON.md), "flow_out" on the call, "flow_in" on the GPU record.
void ExpectFlow(const json& trace, uint64_t host_pid, const ExpectedFlow& f) {
  SCOPED_TRACE("ac2g flow " + std::to_string(f.id));
  const uint64_t bind_id = (uint64_t{1} << 32) + f.id;
  const auto flow_end = [&](const char* dir) {
    return One(trace, std::string(dir) + " " + std::to_string(f.id), [&](const json& e) {
      return e.value("bind_id", uint64_t{0}) == bind_id && e.value(dir, false);
    });
  };
  const json call = flow_end("flow_out"), gpu = flow_end("flow_in");
  ASSERT_TRUE(call.is_object() && gpu.is_object());
  EXPECT_EQ(call.at("ph"), "X");
  EXPECT_EQ(gpu.at("ph"), "X");
  // The flow starts on the launching call and ends on the record it launched.
  EXPECT_EQ(call.at("cat"), f.host_cat);
  EXPECT_EQ(gpu.at("cat"), f.gpu_cat);
  EXPECT_EQ(call.at("args").at("correlation"), f.id);
  EXPECT_EQ(gpu.at("args").at("correlation"), f.id);
  EXPECT_EQ(call.at("pid").get<uint64_t>(), host_pid);
  EXPECT_EQ(call.at("tid").get<uint64_t>(), f.host_tid);
  EXPECT_NEAR(call.at("ts").get<double>(), f.launch_ts_us, 5e-4);
  EXPECT_EQ(gpu.at("pid").get<uint64_t>(), f.device);
  EXPECT_EQ(gpu.at("tid").get<uint64_t>(), f.gpu_tid);
  EXPECT_NEAR(gpu.at("ts").get<double>(), f.gpu_ts_us, 5e-4);
  EXPECT_FALSE(call.contains("flow_in"));
  EXPECT_FALSE(gpu.contains("flow_out"));
}

}  // namespace gprof::golden
