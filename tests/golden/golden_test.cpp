// Golden tests for the exporters: each tests/golden/<case>/ holds input.json (a readable Profile),
// table.txt (expected RenderTable) and trace.json (expected WriteTraceJson). Every expected trace
// must also pass CheckTrace. GPROF_UPDATE_GOLDEN=1 rewrites the expected files and fails the run,
// so a regenerated file is always reviewed (README.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "exporters/exporters.h"
#include "tests/golden/profile_loader.h"

namespace gprof::golden {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = fs::path(GPROF_SOURCE_DIR) / "tests" / "golden";

std::vector<std::string> Cases() {
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
    if (fs::exists(entry.path() / "input.json")) cases.push_back(entry.path().filename().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Updating() {
  const char* v = std::getenv("GPROF_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// Compares `actual` with the expected file. When updating, rewrites the file and fails: a run
// that rewrote its own expectations has checked nothing.
void ExpectGolden(const fs::path& expected, const std::string& actual) {
  if (Updating()) {
    std::ofstream(expected, std::ios::binary) << actual;
    ADD_FAILURE() << "golden files rewritten (" << expected.filename().string()
                  << "); rerun without GPROF_UPDATE_GOLDEN and review the diff";
    return;
  }
  ASSERT_TRUE(fs::exists(expected)) << expected << " is missing; run with GPROF_UPDATE_GOLDEN=1";
  EXPECT_EQ(ReadFile(expected), actual)
      << "output differs from " << expected << "; if the change is intended, regenerate with "
      << "GPROF_UPDATE_GOLDEN=1 and review the diff";
}

class Golden : public testing::TestWithParam<std::string> {};

TEST_P(Golden, TableMatches) {
  const fs::path dir = kGoldenDir / GetParam();
  const GoldenCase c = LoadGoldenCase((dir / "input.json").string());
  ExpectGolden(dir / "table.txt", RenderTable(c.profile, c.table));
}

TEST_P(Golden, TraceMatchesAndPassesCheckTrace) {
  const fs::path dir = kGoldenDir / GetParam();
  const GoldenCase c = LoadGoldenCase((dir / "input.json").string());
  const fs::path out = fs::path(testing::TempDir()) / ("golden_" + GetParam()) / "trace.json";
  fs::create_directories(out.parent_path());
  const TraceStats stats = WriteTraceJson(c.profile, out.string());
  const std::string actual = ReadFile(out);
  EXPECT_EQ(stats.bytes, actual.size());
  for (const TraceViolation& v : CheckTrace(out.string())) ADD_FAILURE() << v.rule << ": " << v.message;
  ExpectGolden(dir / "trace.json", actual);
  // The checked-in file itself must load cleanly too.
  for (const TraceViolation& v : CheckTrace((dir / "trace.json").string())) {
    ADD_FAILURE() << "expected file: " << v.rule << ": " << v.message;
  }
}

TEST_P(Golden, SameProfileSameBytes) {
  const fs::path dir = kGoldenDir / GetParam();
  const GoldenCase c = LoadGoldenCase((dir / "input.json").string());
  const fs::path tmp = fs::path(testing::TempDir()) / ("again_" + GetParam());
  fs::create_directories(tmp);
  WriteTraceJson(c.profile, (tmp / "trace.json").string());
  const std::string first = ReadFile(tmp / "trace.json");
  WriteTraceJson(c.profile, (tmp / "trace.json").string());
  EXPECT_EQ(first, ReadFile(tmp / "trace.json"));
  EXPECT_EQ(RenderTable(c.profile, c.table), RenderTable(c.profile, c.table));
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace gprof::golden
