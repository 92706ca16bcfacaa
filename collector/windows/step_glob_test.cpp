#include "collector/windows/step_glob.h"

#include <gtest/gtest.h>

#include <cstring>

namespace gprof::collector {
namespace {

bool Match(const char* pattern, const char* name) {
  return NameMatchesGlob(pattern, name, static_cast<uint32_t>(std::strlen(name)));
}

TEST(StepGlob, DefaultPatternMatchesTorchStepNames) {
  EXPECT_TRUE(Match("ProfilerStep*", "ProfilerStep#0"));
  EXPECT_TRUE(Match("ProfilerStep*", "ProfilerStep#12345"));
  EXPECT_TRUE(Match("ProfilerStep*", "ProfilerStep"));
  EXPECT_FALSE(Match("ProfilerStep*", "profilerStep#1"));
  EXPECT_FALSE(Match("ProfilerStep*", "MyProfilerStep#1"));
}

TEST(StepGlob, StarsQuestionMarksAndLiterals) {
  EXPECT_TRUE(Match("*step*", "train_step_7"));
  EXPECT_TRUE(Match("step?", "step1"));
  EXPECT_FALSE(Match("step?", "step12"));
  EXPECT_TRUE(Match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(Match("a*b*c", "aXXbYY"));
  EXPECT_TRUE(Match("*", ""));
  EXPECT_TRUE(Match("", ""));
  EXPECT_FALSE(Match("", "x"));
  EXPECT_TRUE(Match("**x", "abx"));
}

TEST(StepGlob, NameNeedNotBeTerminatedAndNullNeverMatches) {
  const char buf[] = {'s', 't', 'e', 'p', '#', '1', 'X'};
  EXPECT_TRUE(NameMatchesGlob("step#1", buf, 6));
  EXPECT_FALSE(NameMatchesGlob("step#1", buf, 7));
  EXPECT_FALSE(NameMatchesGlob("*", nullptr, 0));
}

// torch's NVTX texts carry ", seq = N, op_id = M, sizes = ..." after the op name; a step glob
// written for the name as the table shows it matches them.
TEST(StepGlob, TorchRangeTextsMatchByTheirOpName) {
  const auto m = [](std::string_view pattern, std::string_view text) {
    return StepNameMatches(pattern, text.data(), static_cast<uint32_t>(text.size()));
  };
  EXPECT_TRUE(m("matmul_add", "matmul_add, op_id = 7"));
  EXPECT_TRUE(m("aten::mm", "aten::mm, seq = 3, op_id = 15, sizes = [[2, 4], [4, 3]]"));
  EXPECT_TRUE(m("ProfilerStep*", "ProfilerStep#3, op_id = 9"));
  EXPECT_FALSE(m("matmul_add", "matmul_add_2, op_id = 7"));
  EXPECT_FALSE(m("matmul", "matmul_add, op_id = 7"));
  EXPECT_TRUE(m("matmul_add", "matmul_add"));
  EXPECT_FALSE(m("x", ", op_id = 7"));
  EXPECT_EQ(TorchOpNameLength("a, seq = 1, op_id = 2", 21), 1u);
}

// A step named ProfilerStep#N carries the program's own number N (torch.profiler's scopes).
TEST(StepGlob, ProgramStepNumberIsTheNumberAfterProfilerStepHash) {
  const auto n = [](std::string_view text) {
    return ProgramStepNumber(text.data(), static_cast<uint32_t>(text.size()));
  };
  EXPECT_EQ(n("ProfilerStep#0"), 0);
  EXPECT_EQ(n("ProfilerStep#17"), 17);
  EXPECT_EQ(n("ProfilerStep#5, op_id = 9"), 5);              // torch's NVTX observer text
  EXPECT_EQ(n("ProfilerStep#4294967295"), 4294967295);
  EXPECT_EQ(n("ProfilerStep#4294967296"), -1);               // past a step number's range
  EXPECT_EQ(n("ProfilerStep#"), -1);
  EXPECT_EQ(n("ProfilerStep#3a"), -1);
  EXPECT_EQ(n("ProfilerStep"), -1);
  EXPECT_EQ(n("train_step#3"), -1);
  EXPECT_EQ(ProgramStepNumber(nullptr, 0), -1);
}

}  // namespace
}  // namespace gprof::collector
