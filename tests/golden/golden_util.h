// Helpers shared by the golden tests (test-only): where the cases live, the outputs of a case
// (freshly rendered, or the checked-in expected files), the table's rows by column header, and a
// parsed trace.json with lookups by phase, category, name and time.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gprof::golden {

std::filesystem::path GoldenDir();  // tests/golden in the source tree
std::string ReadFile(const std::filesystem::path& p);

// A case's table and trace, from one source.
struct CaseOutputs {
  std::string source;  // "fresh render" or "checked-in files", for failure messages
  std::string table;
  nlohmann::json trace;
};

// The outputs RenderTable / WriteTraceJson produce now from <case>/input.json.
CaseOutputs RenderCase(const std::string& name);
// <case>/table.txt and <case>/trace.json as checked in.
CaseOutputs ExpectedFiles(const std::string& name);

// One table row: column header ("Name", "Self CPU", "# of Calls", ...) -> cell text.
using TableRow = std::map<std::string, std::string>;
// The body rows of a RenderTable output, top to bottom (cells split on runs of 2+ spaces).
std::vector<TableRow> TableRows(const std::string& table);
// Names of the body rows, top to bottom.
std::vector<std::string> RowNames(const std::string& table);
// The row named `name`, or an empty row.
TableRow Row(const std::string& table, const std::string& name);
// The cells of the row whose first cell is `name` on any line (split on runs of 2+ spaces).
std::vector<std::string> RowCells(const std::string& table, const std::string& name);

// Trace events (traceEvents) other than metadata ("M"), counted by "<ph> <cat>", e.g.
// "X kernel", "s fwdbwd", "C gpu_memory", "i user_annotation".
std::map<std::string, int> CountByPhaseAndCategory(const nlohmann::json& trace);
// Events with this phase (and category / name when not empty), in file order.
std::vector<nlohmann::json> Events(const nlohmann::json& trace, const std::string& ph,
                                   const std::string& cat = "", const std::string& name = "");
// The one "X" event with this category and name starting at `ts_us`; a failure and a null
// object when there is none or more than one.
nlohmann::json Slice(const nlohmann::json& trace, const std::string& cat, const std::string& name,
                     double ts_us);
// The one "X" event of category `cat` whose args.correlation is `correlation`.
nlohmann::json ByCorrelation(const nlohmann::json& trace, const std::string& cat,
                             uint32_t correlation);
// The name of a thread or a process from the "M" events (thread_name / process_name), or "".
std::string ThreadName(const nlohmann::json& trace, uint64_t pid, uint64_t tid);
std::string ProcessName(const nlohmann::json& trace, uint64_t pid);

// `child` lies within `parent` on the same (pid, tid) track.
void ExpectInside(const nlohmann::json& child, const nlohmann::json& parent);

// An ac2g flow as a user follows it: the launching call on (host pid, host tid) at launch_ts, the
// GPU record on (device, gpu tid) at gpu_ts. Checks the one slice with this flow's bind_id and
// "flow_out" (the call) and the one with "flow_in" (the GPU record): categories, correlation
// ids and places.
struct ExpectedFlow {
  uint32_t id;
  uint64_t host_tid;
  double launch_ts_us;
  uint64_t device;
  uint64_t gpu_tid;
  double gpu_ts_us;
  std::string host_cat = "cuda_runtime";
  std::string gpu_cat = "kernel";
};
void ExpectFlow(const nlohmann::json& trace, uint64_t host_pid, const ExpectedFlow& flow);

}  // namespace gprof::golden
