// What a user checks in the golden cases' tables, asserted directly (independent of the expected
// files): nesting semantics, the overhead-bound ms-vs-us pattern, counters and window notes.
#include <gtest/gtest.h>

#include <sstream>

#include "outputs/table/table.h"
#include "tests/golden/golden_util.h"
#include "tests/golden/profile_loader.h"

namespace gprof::golden {
namespace {

std::string Table(const std::string& name, TableOptions options = {}) {
  const GoldenCase c =
      LoadGoldenCase(std::string(GPROF_SOURCE_DIR) + "/tests/golden/" + name + "/input.json");
  return RenderTable(c.profile, options);
}

TEST(GoldenSemantics, NestedRangesSelfExcludesChildrenTotalIncludesThem) {
  const std::string t = Table("nested_two_threads");
  // forward: 10 ms on main (children 3 + 4 ms) and 4 ms on the worker (child 2 ms).
  const auto forward = RowCells(t, "forward");
  ASSERT_EQ(forward.size(), 11u) << t;
  EXPECT_EQ(forward[2], "5.000ms");   // Self CPU
  EXPECT_EQ(forward[4], "14.000ms");  // CPU total
  EXPECT_EQ(forward[10], "2");        // # of Calls
  // A range's CUDA total is the GPU work launched inside it on its thread (any depth).
  EXPECT_EQ(forward[8], "900.000us");
  const auto layer1 = RowCells(t, "layer1");
  ASSERT_FALSE(layer1.empty());
  EXPECT_EQ(layer1[2], "2.990ms");
  EXPECT_EQ(layer1[8], "500.000us");
  // Kernels are demangled and carry Self CUDA = CUDA total, no CPU time.
  const auto relu = RowCells(t, "relu_f(float*, int)");
  ASSERT_FALSE(relu.empty()) << t;
  EXPECT_EQ(relu[2], "0.000us");
  EXPECT_EQ(relu[6], "800.000us");
  EXPECT_EQ(relu[8], "800.000us");
}

// overhead_bound is a hand-written profile shaped like an overhead-bound run: this checks how the
// table shows one (units, totals), not that any program is overhead-bound. The measured verdicts
// are Collection.MatmulSmallIsCpuBoundLargeIsGpuBoundOnStandInCostModel (the stand-in's cost
// model) and GpuCollection.MatmulSmallIsCpuBoundLargeIsGpuBound (a real GPU).
TEST(GoldenSemantics, OverheadBoundRunShowsCpuInMsAndCudaInUs) {
  const std::string t = Table("overhead_bound");
  EXPECT_NE(t.find("Self CPU time total: 6.500ms"), std::string::npos) << t;
  EXPECT_NE(t.find("Self CUDA time total: 400.000us"), std::string::npos) << t;
  const auto launch = RowCells(t, "cudaLaunchKernel");
  ASSERT_FALSE(launch.empty());
  EXPECT_EQ(launch[10], "200");
  EXPECT_EQ(launch[8], "400.000us");  // CUDA total: the kernels it launched
}

TEST(GoldenSemantics, StartEndRangesAddNoSelfCpuAndCountersAreExplained) {
  const std::string t = Table("unmatched_open_ranges");
  const auto io = RowCells(t, "async_io");
  ASSERT_FALSE(io.empty()) << t;
  EXPECT_EQ(io[2], "0.000us");
  EXPECT_EQ(io[4], "6.000ms");
  EXPECT_EQ(t.find("Self CUDA"), std::string::npos) << "no GPU data, no GPU columns";
  EXPECT_NE(t.find("2 NVTX pops/ends with no open range"), std::string::npos) << t;
  EXPECT_NE(t.find("1 NVTX ranges still open at the end"), std::string::npos) << t;
}

TEST(GoldenSemantics, StepsGroupAsProfilerStepStarAndWindowIsNamed) {
  const std::string t = Table("schedule_window_steps");
  const auto steps = RowCells(t, "ProfilerStep*");
  ASSERT_FALSE(steps.empty()) << t;
  EXPECT_EQ(steps[10], "3");
  EXPECT_EQ(steps[4], "9.000ms");
  EXPECT_NE(t.find("Profile window: cycle 1, steps 3..5 (partial"), std::string::npos) << t;
}

TEST(GoldenSemantics, RowLimitAndSortKeyApply) {
  const std::string t = Table("compute_bound", {"cpu_time_total", 2});
  size_t rows = 0;
  std::istringstream in(t);
  for (std::string line; std::getline(in, line);) rows += line.find("us  ") != std::string::npos ||
                                                         line.find("ms  ") != std::string::npos;
  EXPECT_EQ(rows, 2u) << t;
  EXPECT_LT(t.find("gemm_loop"), t.find("cudaDeviceSynchronize")) << t;
}

}  // namespace
}  // namespace gprof::golden
