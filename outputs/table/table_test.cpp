// Unit tests: table name width and cutting, sort keys, row limit, unknown sort key, GPU columns.
#include "outputs/table/table.h"

#include <gtest/gtest.h>

#include <map>

#include <stdexcept>

#include "analysis/tables/key_averages.h"

namespace gprof {
namespace {

TEST(TableName, WidthIsLongestPlusFourCappedAt55) {
  EXPECT_EQ(NameColumnWidth({"abc", "abcdef"}), 10u);
  EXPECT_EQ(NameColumnWidth({std::string(51, 'x')}), 55u);
  EXPECT_EQ(NameColumnWidth({std::string(80, 'x')}), 55u);
}

TEST(TableName, LongNamesAreCutTo52PlusDots) {
  const std::string longname(60, 'n');
  const std::string shown = TableName(longname, 55);
  EXPECT_EQ(shown.size(), 55u);
  EXPECT_EQ(shown, std::string(52, 'n') + "...");
  EXPECT_EQ(TableName(std::string(55, 'n'), 55), std::string(55, 'n'));
}

TEST(TableName, CutNeverSplitsACharacterAndControlsArePrintable) {
  std::string s;
  for (int i = 0; i < 30; ++i) s += "\xC3\xA9";  // é
  const std::string shown = TableName(s, 20);
  EXPECT_EQ(shown, [] { std::string r; for (int i = 0; i < 17; ++i) r += "\xC3\xA9"; return r + "..."; }());
  EXPECT_EQ(TableName("a\x01" "b", 55), "a?b");
}

Profile ThreeRows() {
  Profile p;
  p.info.pid = 1;
  const StringId a = p.strings.Intern("a");
  const StringId b = p.strings.Intern("b");
  const StringId c = p.strings.Intern("c");
  // a: one long call; b: three short calls; c: two medium calls.
  p.ranges.push_back({0, 900, a, 1, 0, 0, 0});
  for (uint64_t i = 0; i < 3; ++i) p.ranges.push_back({1000 + i * 100, 1050 + i * 100, b, 1, 0, 0, 0});
  for (uint64_t i = 0; i < 2; ++i) p.ranges.push_back({2000 + i * 1000, 2400 + i * 1000, c, 1, 0, 0, 0});
  return p;
}

// Row names in printed order.
std::vector<std::string> Order(const std::string& table) {
  std::vector<std::string> names;
  size_t pos = 0;
  int sep = 0;
  while (pos < table.size()) {
    const size_t end = table.find('\n', pos);
    const std::string line = table.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("---", 0) == 0) { ++sep; continue; }
    if (sep != 2) continue;
    const size_t first = line.find_first_not_of(' ');
    names.push_back(line.substr(first, line.find("  ", first) - first));
  }
  return names;
}

TEST(RenderTable, SortKeysOrderRowsDescending) {
  const Profile p = ThreeRows();
  EXPECT_EQ(Order(RenderTable(p, {"self_cpu_time_total", -1})), (std::vector<std::string>{"a", "c", "b"}));
  EXPECT_EQ(Order(RenderTable(p, {"count", -1})), (std::vector<std::string>{"b", "c", "a"}));
  EXPECT_EQ(Order(RenderTable(p, {"cpu_time", -1})), (std::vector<std::string>{"a", "c", "b"}));
  // auto without GPU data = self_cpu_time_total
  EXPECT_EQ(Order(RenderTable(p, {"auto", -1})), (std::vector<std::string>{"a", "c", "b"}));
}

TEST(RenderTable, RowLimitCutsRowsButNotTotals) {
  const Profile p = ThreeRows();
  const std::string t = RenderTable(p, {"count", 1});
  EXPECT_EQ(Order(t), std::vector<std::string>{"b"});
  EXPECT_NE(t.find("Self CPU time total: 1.850us"), std::string::npos) << t;
}

TEST(RenderTable, RowLimitSaysHowManyRowsWereFolded) {
  const std::string t = RenderTable(ThreeRows(), {"count", 1});
  EXPECT_NE(t.find("... 2 more rows folded: the table shows the top 1 by count"), std::string::npos)
      << t;
  EXPECT_EQ(RenderTable(ThreeRows(), {"count", 3}).find("folded"), std::string::npos);
}

// `n` distinct names, name i with 1 + i % 7 calls of 10 ns each.
Profile ManyNames(int n) {
  Profile p;
  p.info.pid = 1;
  uint64_t t = 0;
  for (int i = 0; i < n; ++i) {
    const StringId name = p.strings.Intern("n" + std::to_string(i));
    for (int k = 0; k <= i % 7; ++k, t += 20) p.ranges.push_back({t, t + 10, name, 1, 0, 0, 0});
  }
  return p;
}

TEST(RenderTable, DefaultKeepsTheTop2000OfManyNamesAndCountsTheRest) {
  const Profile p = ManyNames(2500);
  const std::string t = RenderTable(p, {"count", kAutoRowLimit});
  EXPECT_EQ(Order(t).size(), 2000u);
  EXPECT_NE(t.find("... 500 more rows folded: the table shows the top 2000 by count "
                   "(--row-limit -1 prints every row)"),
            std::string::npos);
  EXPECT_EQ(Order(RenderTable(p, {"count", -1})).size(), 2500u);
  EXPECT_EQ(Order(RenderTable(ManyNames(2000), {"count", kAutoRowLimit})).size(), 2000u);
  EXPECT_EQ(RenderTable(ManyNames(2000), {"count", kAutoRowLimit}).find("folded"),
            std::string::npos);
}

TEST(RenderTable, UnknownSortKeyThrowsAndNamesTheKeys) {
  try {
    RenderTable(ThreeRows(), {"self_cpu_time", -1});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("self_cpu_time_total"), std::string::npos);
  }
}

TEST(RenderTable, GpuColumnsOnlyWithGpuData) {
  Profile p = ThreeRows();
  EXPECT_EQ(RenderTable(p, {}).find("CUDA"), std::string::npos);
  p.launch_configs.push_back({});
  p.kernels.push_back({100, 600, 0, p.strings.Intern("k"), 0, 7});
  const std::string t = RenderTable(p, {});
  EXPECT_NE(t.find("Self CUDA %"), std::string::npos);
  EXPECT_NE(t.find("Self CUDA time total: 0.500us"), std::string::npos) << t;
  EXPECT_EQ(Order(t).front(), "k");  // auto sorts by self CUDA once GPU data exists
}

TEST(KeyAverages, ApiCallCudaTotalIsItsCorrelatedWorkAndRangesSumTheirCalls) {
  Profile p;
  const StringId launch = p.strings.Intern("cudaLaunchKernel");
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, launch});
  p.ranges.push_back({0, 1000, p.strings.Intern("outer"), 1, 0, 0, 0});
  p.ranges.push_back({100, 500, p.strings.Intern("inner"), 1, 0, 0, 0});
  p.api_calls.push_back({200, 300, 5, 1, 211, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({600, 700, 6, 2, 211, ApiDomain::kRuntime, 0, 0});  // other thread
  p.launch_configs.push_back({});
  p.kernels.push_back({400, 450, 5, p.strings.Intern("k"), 0, 7});
  p.kernels.push_back({800, 900, 6, p.strings.Intern("k"), 0, 7});
  std::map<std::string, EventStats> rows;
  for (EventStats& e : KeyAverages(p)) rows[e.name] = e;
  EXPECT_EQ(rows["cudaLaunchKernel"].cuda_total_ns, 150u);
  EXPECT_EQ(rows["outer"].cuda_total_ns, 50u);  // the other thread's launch is not inside it
  EXPECT_EQ(rows["inner"].cuda_total_ns, 50u);
  EXPECT_EQ(rows["outer"].self_cpu_ns, 600u);
  EXPECT_EQ(rows["inner"].self_cpu_ns, 300u);
  EXPECT_EQ(rows["k"].self_cuda_ns, 150u);
  EXPECT_EQ(rows["k"].self_cpu_ns, 0u);
}

}  // namespace
}  // namespace gprof

namespace gprof {
namespace {

// With shapes recorded, rows are per (name, shapes) and the last column is torch's Input Shapes,
// right-aligned, min(longest + 4, 80) wide: aten::mm twice with [[2, 4], [4, 3]] (10 + 30 us)
// and once with [[8, 8], [8, 8]] (5 us) gives two aten::mm rows; the region has no shapes.
TEST(RenderTable, RecordedShapesGroupRowsByNameAndShapesWithTorchsInputShapesColumn) {
  Profile p;
  const StringId mm = p.strings.Intern("aten::mm");
  const StringId small = p.strings.Intern("[[2, 4], [4, 3]]");
  const StringId big = p.strings.Intern("[[8, 8], [8, 8]]");
  const auto op = [&](uint64_t start, uint64_t end, StringId shapes) {
    HostRange r{start, end, mm, 1, 0, kRangeTorch | kRangeCpuOp, 0};
    r.op_id = start;
    r.shapes = shapes;
    return r;
  };
  p.ranges.push_back({0, 100'000, p.strings.Intern("region"), 1, 0, kRangeTorch, 0});
  p.ranges.push_back(op(1'000, 11'000, small));
  p.ranges.push_back(op(20'000, 50'000, small));
  p.ranges.push_back(op(60'000, 65'000, big));

  const std::string t = RenderTable(p, {});
  // "Input Shapes" right-aligned in 16 + 4 = 20 columns after the two spaces of "# of Calls".
  EXPECT_NE(t.find("# of Calls          Input Shapes  \n"), std::string::npos) << t;
  const std::vector<std::string> rows = Order(t);
  ASSERT_EQ(rows.size(), 3u) << t;
  // Self CPU order: region 100 - 45 = 55 us, mm [[2, 4], ...] 40 us, mm [[8, 8], ...] 5 us.
  EXPECT_EQ(rows[0], "region");
  EXPECT_NE(t.find("20.000us             2      [[2, 4], [4, 3]]  \n"), std::string::npos) << t;
  EXPECT_NE(t.find("5.000us             1      [[8, 8], [8, 8]]  \n"), std::string::npos) << t;
  EXPECT_NE(t.find("40.000us        40.00%"), std::string::npos) << t;

  // Grouping off: one aten::mm row with all three calls and no Input Shapes column.
  TableOptions off;
  off.group_by_input_shape = TableOptions::ByShape::kOff;
  const std::string plain = RenderTable(p, off);
  EXPECT_EQ(plain.find("Input Shapes"), std::string::npos) << plain;
  EXPECT_NE(plain.find("15.000us             3  \n"), std::string::npos) << plain;  // 45 / 3
}

// torch's _remove_dup_nodes: aten::div_ [0, 100) whose only child is aten::div_ [10, 90) (which
// holds aten::copy_ [20, 30)) is one call with Self CPU 100 - 10 = 90; an aten::add [200, 300)
// with two children, one of them an aten::add [210, 220) and an aten::mul [230, 240), keeps both
// adds (2 calls, Self CPU (100 - 20) + 10 = 90).
TEST(KeyAverages, OnlyChildOfTheSameNameIsFoldedIntoItsParentAsTorchDoes) {
  Profile p;
  const StringId div = p.strings.Intern("aten::div_");
  const StringId add = p.strings.Intern("aten::add");
  p.ranges.push_back({0, 100, div, 1, 0, 0, 0});
  p.ranges.push_back({10, 90, div, 1, 0, 0, 0});
  p.ranges.push_back({20, 30, p.strings.Intern("aten::copy_"), 1, 0, 0, 0});
  p.ranges.push_back({200, 300, add, 1, 0, 0, 0});
  p.ranges.push_back({210, 220, add, 1, 0, 0, 0});
  p.ranges.push_back({230, 240, p.strings.Intern("aten::mul"), 1, 0, 0, 0});
  std::map<std::string, EventStats> rows;
  for (const EventStats& e : KeyAverages(p)) rows[e.name] = e;
  EXPECT_EQ(rows["aten::div_"].count, 1u);
  EXPECT_EQ(rows["aten::div_"].self_cpu_ns, 90u);
  EXPECT_EQ(rows["aten::div_"].cpu_total_ns, 100u);
  EXPECT_EQ(rows["aten::copy_"].count, 1u);
  EXPECT_EQ(rows["aten::add"].count, 2u);
  EXPECT_EQ(rows["aten::add"].self_cpu_ns, 90u);
  EXPECT_EQ(rows["aten::add"].cpu_total_ns, 110u);
}

// gprof-run's Python hook makes steps as start/end ranges that start and end inside torch's
// Optimizer.step range (its post hook). Thread 1: Optimizer.step [0, 100), ProfilerStep#1
// [90, 390), aten::mm [150, 250), Optimizer.step [300, 400), and an "epoch" start/end range
// [0, 400) that is no step. The step's own time is what no op covers: 300 - (100 - 90) shared
// with the first Optimizer.step - 100 of aten::mm - (390 - 300) shared with the second = 100
// (the Python between ops, as torch's ProfilerStep#N rows have it). The self times then add up
// to the 400 ns of wall time, and the step's CPU total, 300, stays within it (75%). The epoch
// range keeps Self CPU 0.
TEST(KeyAverages, StartEndStepOwnsTheThreadTimeNoOpCoversSoItsTotalStaysWithinTheSelfTotal) {
  Profile p;
  const StringId opt = p.strings.Intern("Optimizer.step#AdamW.step");
  p.ranges.push_back({0, 100, opt, 1, 0, 0, 0});
  p.ranges.push_back({90, 390, p.strings.Intern("ProfilerStep#1"), 1, 0, kRangeStartEnd, 0});
  p.ranges.push_back({150, 250, p.strings.Intern("aten::mm"), 1, 0, 0, 0});
  p.ranges.push_back({300, 400, opt, 1, 0, 0, 0});
  p.ranges.push_back({0, 400, p.strings.Intern("epoch"), 1, 0, kRangeStartEnd, 0});
  std::map<std::string, EventStats> rows;
  uint64_t self_total = 0;
  for (const EventStats& e : KeyAverages(p)) {
    rows[e.name] = e;
    self_total += e.self_cpu_ns;
  }
  EXPECT_EQ(rows["ProfilerStep*"].count, 1u);
  EXPECT_EQ(rows["ProfilerStep*"].cpu_total_ns, 300u);
  EXPECT_EQ(rows["ProfilerStep*"].self_cpu_ns, 100u);
  EXPECT_EQ(rows["Optimizer.step#AdamW.step"].count, 2u);
  EXPECT_EQ(rows["Optimizer.step#AdamW.step"].self_cpu_ns, 200u);
  EXPECT_EQ(rows["aten::mm"].self_cpu_ns, 100u);
  EXPECT_EQ(rows["epoch"].self_cpu_ns, 0u);
  EXPECT_EQ(rows["epoch"].cpu_total_ns, 400u);
  EXPECT_EQ(self_total, 400u);
  EXPECT_LE(rows["ProfilerStep*"].cpu_total_ns, self_total);
}

}  // namespace
}  // namespace gprof

namespace gprof {
namespace {

TEST(ProfileNotes, DroppedNativeStacksAreSaidWithWhatToDo) {
  Profile p;
  EXPECT_TRUE(ProfileNotes(p).empty());
  p.stack_counters.dropped = 4;
  const std::vector<std::string> notes = ProfileNotes(p);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("4 native stacks (--backtrace) dropped", 0), 0u) << notes[0];
  EXPECT_NE(notes[0].find("GPROF_HOST_BUFFER_MIB"), std::string::npos);
}

}  // namespace
}  // namespace gprof
