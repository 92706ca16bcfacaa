// Golden tests for the exporters: each tests/golden/<case>/ holds input.json (a readable Profile),
// table.txt (expected RenderTable) and trace.json (expected WriteTraceJson). Every expected trace
// must also pass CheckTrace. GPROF_UPDATE_GOLDEN=1 rewrites the expected files and fails the run,
// so a regenerated file is always reviewed (README.md); what the outputs must say is checked
// independently of these files in golden_expectations_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "outputs/table/table.h"
#include "outputs/trace/trace_check.h"
#include "outputs/trace/trace_json.h"
#include "tests/golden/golden_util.h"
#include "tests/golden/profile_loader.h"

namespace gprof::golden {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = GoldenDir();

std::vector<std::string> Cases() {
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
    if (fs::exists(entry.path() / "input.json")) cases.push_back(entry.path().filename().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
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
    ADD_FAILURE() << "golden files rewritten; rerun without GPROF_UPDATE_GOLDEN and review the "
                  << "diff (wrote " << expected.string() << ")";
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

// The same profile with its record lists and its string table in another order, as a collector
// that drained its per-thread buffers and CUPTI's buffers in another order would build it. Kept
// as the collector keeps them: ranges parents first (by start, longest first, then thread) and
// marks by time, as collector/host/profile_builder.cpp sorts them; domains, because ranges and
// marks refer to them by index; devices, because deviceProperties lists them in Profile order
// (the collector's: first CUPTI device record first).
void Reorder(Profile& p, uint32_t seed) {
  std::mt19937 rng(seed);
  StringTable strings;  // interned in reverse id order: every non-empty string gets a new id
  std::vector<StringId> id(p.strings.size(), kNoString);
  for (size_t i = p.strings.size(); i-- > 1;) {
    id[i] = strings.Intern(p.strings.Get(static_cast<StringId>(i)));
  }
  for (StringId& d : p.domains) d = id[d];
  for (ThreadInfo& t : p.threads) t.name = id[t.name];
  for (DeviceInfo& d : p.devices) d.name = id[d.name];
  for (HostRange& r : p.ranges) r.name = id[r.name];
  for (HostMark& m : p.marks) m.name = id[m.name];
  for (ApiName& n : p.api_names) n.name = id[n.name];
  for (Kernel& k : p.kernels) k.name = id[k.name];
  p.strings = std::move(strings);
  // Launch configurations in another order, kernels pointing at their new places.
  std::vector<uint32_t> order(p.launch_configs.size());
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<LaunchConfig> configs(order.size());
  std::vector<uint32_t> moved_to(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    configs[i] = p.launch_configs[order[i]];
    moved_to[order[i]] = i;
  }
  p.launch_configs = std::move(configs);
  for (Kernel& k : p.kernels) k.launch_config = moved_to[k.launch_config];
  const auto shuffle = [&](auto& v) { std::shuffle(v.begin(), v.end(), rng); };
  shuffle(p.threads);
  shuffle(p.ranges);
  shuffle(p.marks);
  shuffle(p.api_calls);
  shuffle(p.api_names);
  shuffle(p.kernels);
  shuffle(p.memcpys);
  shuffle(p.memsets);
  shuffle(p.syncs);
  shuffle(p.memory_ops);
  shuffle(p.overheads);
  shuffle(p.steps);
  std::sort(p.ranges.begin(), p.ranges.end(), [](const HostRange& a, const HostRange& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
    return a.tid < b.tid;
  });
  std::stable_sort(p.marks.begin(), p.marks.end(),
                   [](const HostMark& a, const HostMark& b) { return a.ts_ns < b.ts_ns; });
}

std::string TraceBytes(const Profile& p, const fs::path& dir) {
  fs::create_directories(dir);
  WriteTraceJson(p, (dir / "trace.json").string());  // the name is part of the output
  return ReadFile(dir / "trace.json");
}

// "" when equal, else the first line that differs in each.
std::string FirstDifference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const auto line = [&](const std::string& s) {
    const size_t from = s.rfind('\n', i == 0 ? 0 : i - 1);
    const size_t begin = from == std::string::npos ? 0 : from + 1;
    return s.substr(begin, s.find('\n', begin) - begin);
  };
  return "first difference at byte " + std::to_string(i) + ":\n  original: " + line(a) +
         "\n  shuffled: " + line(b);
}

// Outputs depend on what was recorded, not on the order the records arrived in: the same
// profile with every list shuffled (three seeds) gives the same table and trace, byte for byte.
TEST_P(Golden, ShuffledRecordOrderSameBytes) {
  const fs::path input = kGoldenDir / GetParam() / "input.json";
  const GoldenCase c = LoadGoldenCase(input.string());
  const fs::path tmp = fs::path(testing::TempDir()) / ("shuffled_" + GetParam());
  const std::string table = RenderTable(c.profile, c.table);
  const std::string trace = TraceBytes(c.profile, tmp / "original");
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("shuffle seed " + std::to_string(seed));
    GoldenCase shuffled = LoadGoldenCase(input.string());
    Reorder(shuffled.profile, seed);
    EXPECT_EQ(FirstDifference(table, RenderTable(shuffled.profile, shuffled.table)), "");
    EXPECT_EQ(FirstDifference(trace, TraceBytes(shuffled.profile, tmp / std::to_string(seed))), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace gprof::golden
