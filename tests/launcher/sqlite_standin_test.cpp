// `gprof-run --export sqlite` on a real CUDA program (examples/cuda/matmul_bias.cu) running on
// the CUDA/CUPTI stand-in, then the queries nsys users write against nsys's exports: kernels
// joined to StringIds and summed by name, runtime calls joined to kernels by correlationId, NVTX
// push/pop ranges by text, copies by kind. Each must give the numbers of the program's own
// structure (counted from matmul_bias.cu, not from our outputs) and the numbers `gprof-run stats`
// and table.txt print for the same run (read from those outputs).
#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/launcher/sqlite_query.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

// matmul_bias 64 with 5 steps: per step ProfilerStep#N around matmul_add, which holds one
// matmul_kernel and one bias_add_kernel launch; then a device sync. Before the steps 3 HtoD
// copies (x and w: 64 * 64 floats = 16,384 bytes each, b: 64 floats = 256), after them 1 DtoH
// copy of y (16,384).
constexpr int kSteps = 5;
const char* const kMatmul = "matmul_kernel(float const*, float const*, float*, int)";
const char* const kBias = "bias_add_kernel(float*, float const*, int)";

struct StandinRun {
  std::string dir;
  std::string sqlite;  // the one .sqlite of the run
  ProcessResult process;
};

const StandinRun& TheRun() {
  static const StandinRun run = [] {
    StandinRun r;
    r.dir = MakeTempDir("sqlite_standin") + "/out";
    ProcessOptions o;
    o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
    r.process = RunProcess({LauncherPath(), "-q", "-o", r.dir, "--export", "sqlite",
                            "--cupti-lib", StandInLibDir() + "/libcupti.so.13", "--",
                            GPROF_MATMUL_BIAS, "64", std::to_string(kSteps)},
                           o);
    for (const std::string& name : ListDir(r.dir)) {
      if (name.ends_with(".sqlite")) r.sqlite = r.dir + "/" + name;
    }
    return r;
  }();
  return run;
}

// `gprof-run stats DIR --report NAME --format json`: its rows.
Json Stats(const std::string& report) {
  const ProcessResult r = RunProcess(
      {LauncherPath(), "stats", TheRun().dir, "--report", report, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out).at(report);
}

// name -> (count, total ns) of a stats report's rows.
std::map<std::string, std::pair<std::string, std::string>> ByName(const Json& rows,
                                                                 const char* name_column,
                                                                 const char* count_column) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const Json& r : rows) {
    out[r.at(name_column).get<std::string>()] = {
        std::to_string(r.at(count_column).get<uint64_t>()),
        std::to_string(r.at("Total Time (ns)").get<uint64_t>())};
  }
  return out;
}

std::map<std::string, std::pair<std::string, std::string>> ByName(
    const std::vector<SqlRow>& rows) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const SqlRow& r : rows) out[r.at(0)] = {r.at(1), r.at(2)};
  return out;
}

class SqliteStandinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const StandinRun& r = TheRun();
    ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
    ASSERT_THAT(r.process.out, HasSubstr("GPROF_EXAMPLE_DONE matmul_bias"));
    ASSERT_FALSE(r.sqlite.empty()) << "no .sqlite in " << r.dir << "\n" << r.process.err;
  }
};

TEST_F(SqliteStandinTest, TheClosingLineNamesTheExport) {
  EXPECT_THAT(TheRun().process.err, HasSubstr(", SQLite " + TheRun().sqlite + "\n"));
}

// nsys's cuda_gpu_kern_sum as users write it by hand.
TEST_F(SqliteStandinTest, KernelsSummedByNameMatchTheProgramAndStats) {
  const std::vector<SqlRow> rows = SqlQuery(
      TheRun().sqlite,
      "SELECT s.value AS name, COUNT(*), SUM(k.end - k.start) "
      "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName "
      "GROUP BY name ORDER BY name");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], kBias);
  EXPECT_EQ(rows[0][1], std::to_string(kSteps));
  EXPECT_EQ(rows[1][0], kMatmul);
  EXPECT_EQ(rows[1][1], std::to_string(kSteps));
  EXPECT_EQ(ByName(rows), ByName(Stats("cuda_gpu_kern_sum"), "Name", "Instances"));
  // The base names nsys's `:base` reports group by.
  EXPECT_EQ(SqlQuery(TheRun().sqlite,
                     "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                     "JOIN StringIds AS s ON s.id = k.shortName ORDER BY 1"),
            (std::vector<SqlRow>{{"bias_add_kernel"}, {"matmul_kernel"}}));
  // The launch configuration of matmul_bias.cu: matmul 4 x 4 blocks of 16 x 16, bias 16 x 256.
  EXPECT_EQ(SqlQuery(TheRun().sqlite,
                     "SELECT DISTINCT gridX, gridY, gridZ, blockX, blockY, blockZ "
                     "FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY gridY"),
            (std::vector<SqlRow>{{"16", "1", "1", "256", "1", "1"},
                                 {"4", "4", "1", "16", "16", "1"}}));
}

// cuda_api_sum by hand, and every kernel back to the call that launched it.
TEST_F(SqliteStandinTest, RuntimeCallsJoinTheirKernelsByCorrelationId) {
  const std::vector<SqlRow> calls = SqlQuery(
      TheRun().sqlite,
      "SELECT s.value AS name, COUNT(*), SUM(r.end - r.start) "
      "FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s ON s.id = r.nameId "
      "GROUP BY name ORDER BY name");
  EXPECT_EQ(ByName(calls), ByName(Stats("cuda_api_sum"), "Name", "Num Calls"));
  // The launching call of each kernel: one per kernel, a runtime launch (eventClass 0) that
  // started before its kernel.
  const std::vector<SqlRow> joined = SqlQuery(
      TheRun().sqlite,
      "SELECT s.value, r.eventClass, COUNT(*), SUM(r.start <= k.start) "
      "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
      "JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId "
      "JOIN StringIds AS s ON s.id = r.nameId GROUP BY s.value, r.eventClass");
  ASSERT_EQ(joined.size(), 1u) << ::testing::PrintToString(joined);
  EXPECT_THAT(joined[0][0], HasSubstr("LaunchKernel"));
  EXPECT_EQ(joined[0][1], "0");
  EXPECT_EQ(joined[0][2], std::to_string(2 * kSteps));
  EXPECT_EQ(joined[0][3], std::to_string(2 * kSteps));
  // eventClass tells runtime calls (0: cuda*, __cuda*) from driver calls (1: cu*), as in nsys.
  EXPECT_EQ(SqlQuery(TheRun().sqlite,
                     "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                     "JOIN StringIds AS s ON s.id = r.nameId "
                     "WHERE (r.eventClass = 0) != (s.value LIKE 'cuda%' OR s.value LIKE '__cuda%')"),
            (std::vector<SqlRow>{{"0"}}));
}

// nvtx_sum by hand: push/pop ranges by text.
TEST_F(SqliteStandinTest, NvtxPushPopRangesByTextMatchTheProgramStatsAndTable) {
  const std::vector<SqlRow> rows = SqlQuery(
      TheRun().sqlite,
      "SELECT text, COUNT(*), SUM(end - start) FROM NVTX_EVENTS "
      "WHERE eventType = 59 GROUP BY text ORDER BY text");
  std::vector<std::string> names;
  for (const SqlRow& r : rows) names.push_back(r[0]);
  std::vector<std::string> expected = {"matmul_add"};
  for (int s = 0; s < kSteps; ++s) expected.push_back("ProfilerStep#" + std::to_string(s));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
  for (const SqlRow& r : rows) EXPECT_EQ(r[1], r[0] == "matmul_add" ? "5" : "1") << r[0];
  EXPECT_EQ(ByName(rows), ByName(Stats("nvtx_sum"), "Range", "Instances"));
  // table.txt's # of Calls, the last column, for matmul_add (names are right-aligned).
  std::istringstream table(ReadFile(TheRun().dir + "/table.txt"));
  std::string calls;
  for (std::string line; std::getline(table, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (!w.empty() && w.front() == "matmul_add") calls = w.back();
  }
  EXPECT_EQ(calls, std::to_string(kSteps));
}

// cuda_gpu_mem_size_sum by hand, with nsys's labels for the copy kinds.
TEST_F(SqliteStandinTest, CopiesByKindWithNsysLabels) {
  EXPECT_EQ(SqlQuery(TheRun().sqlite,
                     "SELECT o.label, COUNT(*), SUM(m.bytes), MIN(m.srcKind), MIN(m.dstKind) "
                     "FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m "
                     "JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind "
                     "GROUP BY o.label ORDER BY o.label"),
            (std::vector<SqlRow>{{"Device-to-Host", "1", "16384", "2", "0"},
                                 {"Host-to-Device", "3", "33024", "0", "2"}}));
  // The copies of one process, on the device the kernels ran on.
  EXPECT_EQ(SqlQuery(TheRun().sqlite,
                     "SELECT COUNT(DISTINCT m.globalPid), COUNT(DISTINCT m.deviceId), "
                     "MIN(m.globalPid = p.globalPid) FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m, "
                     "PROCESSES AS p"),
            (std::vector<SqlRow>{{"1", "1", "1"}}));
}

}  // namespace
}  // namespace gprof::testing
