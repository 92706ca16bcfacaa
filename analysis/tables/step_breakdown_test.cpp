// The step-time breakdown (step_breakdown.h) on a hand-built profile, each slice derived by hand
// in the comment: a moment goes to the first category running then, in TensorBoard's order
// Kernel, Memcpy, Memset, Runtime, DataLoader, CPU Exec, and the rest of the step is Other.
#include "analysis/tables/step_breakdown.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <variant>
#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_test_util.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: the profile builders

// Step 5 [0, 1000) us and step 6 [1000, 2000) us (us after t0):
//   range enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ [0, 300), holding a
//     cudaMemcpyAsync [100, 150) with no copy recorded;
//   range aten::linear [300, 700): cudaLaunchKernel [350, 400) -> kernel [420, 620);
//     cudaMemcpyAsync [650, 660) -> HtoD copy [660, 760);
//   a memset [740, 800);
//   step 6: a kernel [1900, 2100) that runs past the step's end.
Profile Breakdown() {
  Profile p = NewProfile();
  p.steps.push_back({t0, t0 + 1'000'000, 5, kTid});
  p.steps.push_back({t0 + 1'000'000, t0 + 2'000'000, 6, kTid});
  AddRange(&p, 0, 300'000, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  AddApi(&p, 100'000, 150'000, 3, kMemcpyAsync);
  AddRange(&p, 300'000, 700'000, "aten::linear");
  AddApi(&p, 350'000, 400'000, 1, kLaunch);
  AddKernel(&p, 420'000, 620'000, 1, "gemm");
  AddApi(&p, 650'000, 660'000, 2, kMemcpyAsync);
  AddCopy(&p, 660'000, 760'000, 2, CopyKind::kHtoD, MemKind::kPinned, MemKind::kDevice, 4096,
          true);
  p.memsets.push_back({t0 + 740'000, t0 + 800'000, 4096, 0, kStream, 0, 0, MemKind::kDevice, 1, 0});
  AddApi(&p, 1'850'000, 1'860'000, 4, kLaunch);
  AddKernel(&p, 1'900'000, 2'100'000, 4, "late");
  return p;
}

// Step 5: Kernel [420, 620) 200; Memcpy [660, 760) 100; Memset [760, 800) 40 (its first 20 us
// under the copy); Runtime [100, 150) + [350, 400) + [650, 660) = 110; DataLoader [0, 300) less
// the call in it = 250; CPU Exec: aten::linear's [300, 350) + [400, 420) + [620, 650) = 100;
// Other [800, 1000) = 200. 200+100+40+110+250+100+200 = 1000.
// Step 6: Kernel [1900, 2000) 100 (clipped to the step); Runtime [1850, 1860) 10; Other 890.
TEST(StepBreakdown, EachMomentGoesToTheFirstCategoryRunningInTensorBoardsOrder) {
  const std::vector<StepBreakdown> b = StepBreakdowns(Breakdown());
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].number, 5u);
  EXPECT_EQ(b[0].wall_ns, 1'000'000u);
  EXPECT_EQ(StepSlices(b[0]), (std::vector<uint64_t>{200'000, 100'000, 40'000, 110'000, 250'000,
                                                     100'000, 200'000}));
  EXPECT_EQ(b[1].number, 6u);
  EXPECT_EQ(StepSlices(b[1]),
            (std::vector<uint64_t>{100'000, 0, 0, 10'000, 0, 0, 890'000}));
}

TEST(StepBreakdown, StatsTableAndFindingsJsonCarryTheSlices) {
  const Profile p = Breakdown();
  const StatsTable t = StepBreakdownTable(StepBreakdowns(p));
  EXPECT_EQ(t.name, "step_breakdown");
  ASSERT_EQ(t.columns.size(), 10u);
  EXPECT_EQ(t.columns[3].header, "Kernel (ns)");
  EXPECT_EQ(t.columns[7].header, "DataLoader (ns)");
  EXPECT_EQ(t.columns[8].header, "CPU Exec (ns)");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(std::get<uint64_t>(t.rows[0][7]), 250'000u);

  FindingsContext context;
  const std::vector<Finding> fs = FindFindings(p, &context);
  const nlohmann::json doc =
      nlohmann::json::parse(FormatFindingsJson(fs, &context.step_breakdown));
  ASSERT_EQ(doc.at("step_breakdown").size(), 2u);
  const nlohmann::json& s = doc["step_breakdown"][0];
  EXPECT_EQ(s.at("step"), 5);
  EXPECT_EQ(s.at("wall_us"), 1000.0);
  EXPECT_EQ(s.at("kernel_us"), 200.0);
  EXPECT_EQ(s.at("memset_us"), 40.0);
  EXPECT_EQ(s.at("dataloader_us"), 250.0);
  EXPECT_EQ(s.at("cpu_exec_us"), 100.0);
  EXPECT_EQ(s.at("other_us"), 200.0);
}

TEST(StepBreakdown, NoStepsNoBreakdown) {
  Profile p = Breakdown();
  p.steps.clear();
  EXPECT_TRUE(StepBreakdowns(p).empty());
  EXPECT_EQ(nlohmann::json::parse(FormatFindingsJson({}, nullptr)).count("step_breakdown"), 0u);
}

}  // namespace
}  // namespace gprof
