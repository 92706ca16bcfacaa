// Unit tests: what the merged trace holds past its size budget (merge_trace_policy.h), with the
// budget made small. Expected values are derived by hand in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launcher/merge_trace_policy.h"

namespace gprof::launcher {
namespace {

// Five ranks (pid 100 + r on "node"), 1,000 records each: an estimate of 440,000 bytes each,
// 2,200,000 in all. Steps 1-4: 10 ms on ranks 0, 2 and 4, 11 ms on rank 1 (1.1x the others'
// median: under the straggler rule's 1.2x, never slow), 30 ms on rank 3 (3x and 20 ms over: the
// slow one in all 4 steps). Slowest first: rank 3 (4 slow steps), then rank 1 (none, but 44 ms of
// steps against 40 ms), then ranks 0, 2, 4 (equal: in rank order).
std::vector<MergeInput> Inputs() {
  std::vector<MergeInput> inputs;
  for (int32_t r = 0; r < 5; ++r) {
    MergeInput in;
    in.file = "rank" + std::to_string(r) + ".gpdump";
    in.info.rank = r;
    in.info.pid = 100 + static_cast<uint32_t>(r);
    in.info.hostname = "node";
    in.events = 1'000;
    const uint64_t wall = r == 3 ? 30'000'000 : r == 1 ? 11'000'000 : 10'000'000;
    for (uint32_t s = 1; s <= 4; ++s) {
      MergeStep step;
      step.number = s;
      step.start_ns = 1'000'000'000ull + s * 100'000'000ull;
      step.wall_ns = wall;
      in.dist.steps.push_back(step);
    }
    inputs.push_back(std::move(in));
  }
  return inputs;
}

MergedTracePlan Plan(uint64_t budget, std::vector<int32_t> ranks = {}, bool full_trace = false) {
  return PlanMergedTrace(Inputs(), MergedTraceChoice{full_trace, std::move(ranks), budget});
}

TEST(MergedTracePolicy, WithinTheBudgetEveryRankIsInFullWithoutANote) {
  const MergedTracePlan p = Plan(2'200'000);
  EXPECT_EQ(p.estimated_bytes, 2'200'000u);
  EXPECT_TRUE(p.content.full.empty());
  EXPECT_FALSE(p.content.summary);
  EXPECT_EQ(p.note, "");
  EXPECT_FALSE(p.finding.has_value());
}

// Budget 1,000,000: rank 3 (440,000), then rank 1 (880,000 in all); rank 0 would make 1,320,000.
TEST(MergedTracePolicy, PastTheBudgetTheSlowestRanksThatFitAreInFullWithASummaryOfAll) {
  const MergedTracePlan p = Plan(1'000'000);
  EXPECT_EQ(p.content.full, (std::vector<bool>{false, true, false, true, false}));
  EXPECT_TRUE(p.content.summary);
  EXPECT_NE(p.note.find("rank 1 (node:101), rank 3 (node:103)"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("the events of 3 of 5 processes"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("--full-trace"), std::string::npos);
  EXPECT_NE(p.note.find("--ranks"), std::string::npos);
  ASSERT_TRUE(p.finding.has_value());
  EXPECT_EQ(p.finding->id, "merged_trace_reduced");
  EXPECT_EQ(p.finding->Get("left_out")->n, 3u);
  EXPECT_EQ(p.finding->Get("estimated_bytes")->n, 2'200'000u);
}

// Budget 1 byte: the slowest rank alone, though it alone is past it. Budget 2,199,999: four fit
// (1,760,000), and four is the most: ranks 3, 1, 0, 2; rank 4 is left out.
TEST(MergedTracePolicy, AtLeastTheSlowestRankAndAtMostFourAreInFull) {
  EXPECT_EQ(Plan(1).content.full, (std::vector<bool>{false, false, false, true, false}));
  EXPECT_EQ(Plan(2'199'999).content.full, (std::vector<bool>{true, true, true, true, false}));
}

TEST(MergedTracePolicy, ChosenRanksOrFullTraceOverrideTheChoice) {
  const MergedTracePlan chosen = Plan(uint64_t{10} << 30, {0, 4});
  EXPECT_EQ(chosen.content.full, (std::vector<bool>{true, false, false, false, true}));
  EXPECT_TRUE(chosen.content.summary);
  const MergedTracePlan all = Plan(1, {}, /*full_trace=*/true);
  EXPECT_TRUE(all.content.full.empty());
  EXPECT_FALSE(all.content.summary);
  EXPECT_EQ(all.note, "");
}

TEST(MergedTracePolicy, RankListsParseAndBadOnesAreRefused) {
  std::vector<int32_t> ranks;
  ASSERT_TRUE(ParseRankList("0,3,5-7", &ranks));
  EXPECT_EQ(ranks, (std::vector<int32_t>{0, 3, 5, 6, 7}));
  for (const char* bad : {"", "a", "3-", "5-3", "1,,2", "-1", "2x"}) {
    EXPECT_FALSE(ParseRankList(bad, &ranks)) << bad;
  }
}

}  // namespace
}  // namespace gprof::launcher
