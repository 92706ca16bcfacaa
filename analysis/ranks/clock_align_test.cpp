// Clock alignment of a merge's inputs (clock_align.h) on hand-built ranks whose clocks are off by
// known amounts. Each rank's own clock reads true time + its skew; every expected offset, residual
// and spread is worked out by hand in the comments from the true end times and skews below.
#include "analysis/ranks/clock_align.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/findings/findings_test_util.h"
#include "analysis/ranks/merge.h"
#include "analysis/ranks/merge_findings.h"

namespace gprof {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kUs = 1'000;
constexpr uint64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kMsI = 1'000'000;  // signed, for offsets
// True time of the k-th all_reduce's end: T + k * 100 ms, k = 0..4.
constexpr uint64_t T = findings_test::t0 + 10'000 * kMs;

struct Skewed {
  int32_t rank;
  int64_t skew_ns;                 // own clock = true time + skew
  std::vector<uint64_t> late_ns;   // how much later than T_k this rank truly finished instance k
};

// A rank with "gloo:all_reduce" ranges (gloo's work, 1 ms long) ending at T_k + late_k on its own
// clock, and a c10d::allreduce_ call range that ends at a different, unsynchronized time.
Profile SkewedRank(const Skewed& s, const char* host = "nodeA", const char* boot = "boot-1") {
  Profile p;
  p.info.rank = s.rank;
  p.info.world_size = 4;
  p.info.pid = 100 + static_cast<uint32_t>(s.rank);
  p.info.program = "train";
  p.info.hostname = host;
  p.info.placement.boot_id = boot;
  const auto own = [&](uint64_t true_ns) { return AlignedNs(true_ns, s.skew_ns); };
  p.info.start_ns = own(T - 50 * kMs);
  p.info.end_ns = own(T + 600 * kMs);
  const StringId work = p.strings.Intern("gloo:all_reduce");
  const StringId call = p.strings.Intern("c10d::allreduce_");
  for (size_t k = 0; k < s.late_ns.size(); ++k) {
    const uint64_t end = own(T + k * 100 * kMs + s.late_ns[k]);
    p.ranges.push_back({end - 20 * kUs * (k + 1) - kMs, end - kMs + 5 * kUs * s.rank, call, 1,
                        0, 0, 0});
    p.ranges.push_back({end - kMs, end, work, 2, 0, 0, 0});
  }
  return p;
}

std::vector<MergeInput> Merge(std::vector<Profile> profiles) {
  std::vector<MergeInput> in;
  for (Profile& p : profiles) {
    in.push_back(SummarizeForMerge(p, "rank" + std::to_string(p.info.rank) + ".gpdump"));
  }
  SortMergeInputs(&in);
  AlignMergeClocks(&in);
  return in;
}

// Ranks 1..3 of the skewed job: clocks +2 s, -1 s, +3 s off rank 0's.
std::vector<MergeInput> FourSkewedRanks() {
  std::vector<Profile> p;
  p.push_back(SkewedRank({0, 0, {0, 0, 0, 0, 0}}));
  // Rank 1 truly finishes 10, 20, 30, 40 us late and once 5 ms late (an outlier).
  p.push_back(SkewedRank({1, 2 * kS, {10 * kUs, 20 * kUs, 30 * kUs, 40 * kUs, 5 * kMs}}));
  p.push_back(SkewedRank({2, -1 * kS, {0, 0, 0, 0, 0}}));
  p.push_back(SkewedRank({3, 3 * kS, {0, 0, 0, 0, 0}}));
  return Merge(std::move(p));
}

TEST(ClockAlign, GlooWorkEndsGiveEachRanksOffsetAsTheMedianDifference) {
  const std::vector<MergeInput> in = FourSkewedRanks();
  ASSERT_EQ(in.size(), 4u);
  EXPECT_EQ(in[0].clock.method, ClockMethod::kReference);
  EXPECT_EQ(in[0].clock.offset_ns, 0);
  // Rank 1: d_k = rank 0's end - rank 1's = -(2 s + late_k) = -2 s - {10, 20, 30, 40, 5000} us;
  // the median (third of five) is -2 s - 30 us; |d_k - median| = {20, 10, 0, 10, 4970} us,
  // median 10 us. The outlier moves neither.
  EXPECT_EQ(in[1].clock.method, ClockMethod::kCollectives);
  EXPECT_EQ(in[1].clock.kind, CollectiveClass::kHostWork);  // gloo:, not the c10d:: calls
  EXPECT_EQ(in[1].clock.instances, 5u);
  EXPECT_EQ(in[1].clock.offset_ns, -2 * kS - 30'000);
  EXPECT_EQ(in[1].clock.residual_ns, 10 * kUs);
  // Ranks 2 and 3 finish with rank 0: exactly the negated skews, residual 0.
  EXPECT_EQ(in[2].clock.offset_ns, 1 * kS);
  EXPECT_EQ(in[2].clock.residual_ns, 0u);
  EXPECT_EQ(in[3].clock.offset_ns, -3 * kS);
  // The merged origin: every rank starts at true T - 50 ms; aligned, ranks 0, 2 and 3 start
  // there (rank 3's own start, 3 s later on its clock, lines up), rank 1 30 us earlier (its
  // offset carries the 30 us it truly finished late): T - 50 ms - 30 us is the earliest.
  EXPECT_EQ(MergedOriginNs(in), T - 50 * kMs - 30 * kUs);
}

TEST(ClockAlign, SpreadOfTheAlignedEndsIsWhatTheMedianLeaves) {
  const std::vector<MergeInput> in = FourSkewedRanks();
  // Aligned, ranks 0, 2 and 3 end at T_k; rank 1 at T_k + late_k - 30 us = {-20, -10, 0, +10,
  // +4970} us. Spread per k: {20, 10, 0, 10, 4970} us: median 10 us, max 4.97 ms.
  const ClockSpread s = MergeClockSpread(in);
  EXPECT_EQ(s.name, "gloo:all_reduce");
  EXPECT_EQ(s.instances, 5u);
  EXPECT_EQ(s.median_ns, 10 * kUs);
  EXPECT_EQ(s.max_ns, 4'970 * kUs);
}

TEST(ClockAlign, AnInputWithoutCollectivesTakesNoPartInTheSpread) {
  // torchrun's own process (no rank, no collective) beside the four ranks: the spread is still
  // that of the four (previous test).
  std::vector<MergeInput> in = FourSkewedRanks();
  Profile agent = SkewedRank({-1, 0, {}});
  agent.info.program = "torchrun";
  in.push_back(SummarizeForMerge(agent, "agent.gpdump"));
  SortMergeInputs(&in);
  AlignMergeClocks(&in);
  EXPECT_EQ(in[4].clock.method, ClockMethod::kNone);
  const ClockSpread s = MergeClockSpread(in);
  EXPECT_EQ(s.instances, 5u);
  EXPECT_EQ(s.median_ns, 10 * kUs);
}

TEST(ClockAlign, MergedFindingsReportTheOffsetsAndTheResidualSpread) {
  const std::vector<Finding> f = MergedFindings(FourSkewedRanks());
  const Finding* clock = nullptr;
  for (const Finding& x : f) clock = x.id == "clock_alignment" ? &x : clock;
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(clock->Get("max_offset_us")->n, 3'000'000'000u);  // rank 3's -3 s
  EXPECT_THAT(clock->Get("max_offset_at")->text, HasSubstr("rank 3"));
  EXPECT_EQ(clock->Get("by_collectives")->n, 3u);
  EXPECT_EQ(clock->Get("spread_median_us")->n, 10 * kUs);
  EXPECT_THAT(clock->Get("offsets")->text,
              HasSubstr("rank 1 (nodeA:101) -2.000s (collectives: 5 instances, residual 10"));
  EXPECT_THAT(clock->title, HasSubstr("gloo:all_reduce then ends within 10"));
}

TEST(ClockAlign, WithoutCollectivesSameHostAndBootUseTheClockPairsElseNothing) {
  // No collective anywhere; E is t0 (2023). Rank 0 at start: realtime E + 1000 s, monotonic 50 s.
  // Rank 1, same host and boot, its realtime faked 2 s ahead: E + 1002.5 s at monotonic 50.5 s,
  // so realtime - monotonic is E + 952 s against rank 0's E + 950 s: offset -2 s. Rank 2 is on
  // another host and rank 3 on another boot of the same host: their monotonic clocks say nothing,
  // offset 0. Rank 4's monotonic reads like its realtime (libfaketime fakes both): no pair either.
  constexpr uint64_t E = findings_test::t0;
  std::vector<Profile> p;
  const char* hosts[] = {"nodeA", "nodeA", "nodeB", "nodeA", "nodeA"};
  const char* boots[] = {"boot-1", "boot-1", "boot-1", "boot-2", "boot-1"};
  const uint64_t rt[] = {E + 1000'000 * kMs, E + 1002'500 * kMs, E + 1000'000 * kMs,
                         E + 1007'000 * kMs, E + 1003'000 * kMs};
  const uint64_t mono[] = {50'000 * kMs, 50'500 * kMs, 3'000 * kMs, 4'000 * kMs,
                           E + 1003'000 * kMs};
  for (int32_t r = 0; r < 5; ++r) {
    Profile x = SkewedRank({r, 0, {}}, hosts[r], boots[r]);
    x.info.placement.clock_start = {rt[r], mono[r], 60};
    p.push_back(std::move(x));
  }
  const std::vector<MergeInput> in = Merge(std::move(p));
  EXPECT_EQ(in[1].clock.method, ClockMethod::kClockPairs);
  EXPECT_EQ(in[1].clock.offset_ns, -2 * kS);
  EXPECT_EQ(in[2].clock.method, ClockMethod::kNone);
  EXPECT_EQ(in[2].clock.offset_ns, 0);
  EXPECT_EQ(in[3].clock.method, ClockMethod::kNone);
  EXPECT_EQ(in[4].clock.method, ClockMethod::kNone);
  EXPECT_EQ(MergeClockSpread(in).instances, 0u);
}

TEST(ClockAlign, SameClockOnOneHostIsZeroEvenWhenTheCollectivesEndMicrosecondsApart) {
  // Two ranks on one host and boot reading the same clock (pairs 200 ns apart in realtime -
  // monotonic, under the reads' 2 x 100 ns), rank 1 truly finishing each gloo op 40 us late: the
  // collectives say -40 us, within 1 ms of the pairs' 0, so the exact pairs win.
  Profile a = SkewedRank({0, 0, {0, 0, 0}});
  Profile b = SkewedRank({1, 0, {40 * kUs, 40 * kUs, 40 * kUs}});
  a.info.placement.clock_start = {findings_test::t0, 50'000 * kMs, 100};
  b.info.placement.clock_start = {findings_test::t0 + 200, 50'000 * kMs, 100};
  std::vector<Profile> p;
  p.push_back(std::move(a));
  p.push_back(std::move(b));
  const std::vector<MergeInput> in = Merge(std::move(p));
  EXPECT_EQ(in[1].clock.method, ClockMethod::kClockPairs);
  EXPECT_EQ(in[1].clock.offset_ns, 0);
  EXPECT_EQ(in[1].clock.collectives_offset_ns, -40 * static_cast<int64_t>(kUs));
}

TEST(ClockAlign, NcclKernelsAreBetterThanHostCallsAndC10dCallsServeWhenAlone) {
  // Rank 1 (clock +500 ms) has NCCL kernels ending with rank 0's at true 1, 2, 3 ms after T and
  // c10d::allreduce_ calls whose ends are off by a further 7 ms: the kernels decide (-500 ms).
  Profile a = SkewedRank({0, 0, {}});
  Profile b = SkewedRank({1, 500 * kMsI, {}});
  for (Profile* p : {&a, &b}) {
    const int64_t skew = p == &b ? 500 * kMsI : 0;
    const StringId nccl = p->strings.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    const StringId call = p->strings.Intern("c10d::allreduce_");
    for (uint64_t k = 1; k <= 3; ++k) {
      const uint64_t end = AlignedNs(T + k * kMs, skew);
      p->kernels.push_back({end - 300 * kUs, end, static_cast<uint32_t>(k), nccl, 0, 7});
      const uint64_t call_end = end - 900 * kUs + (p == &b ? 7 * kMs : 0);
      p->ranges.push_back({call_end - 10 * kUs, call_end, call, 1, 0, 0, 0});
    }
  }
  LaunchConfig lc{};
  a.launch_configs.push_back(lc);
  b.launch_configs.push_back(lc);
  std::vector<Profile> p;
  p.push_back(std::move(a));
  p.push_back(std::move(b));
  std::vector<MergeInput> in = Merge(std::move(p));
  EXPECT_EQ(in[1].clock.kind, CollectiveClass::kGpuKernel);
  EXPECT_EQ(in[1].clock.offset_ns, -500 * kMsI);
  // Without the kernels, the c10d:: calls are all there is: -500 ms - 7 ms.
  for (MergeInput& x : in) {
    std::erase_if(x.collectives,
                  [](const CollectiveEnds& c) { return c.kind == CollectiveClass::kGpuKernel; });
  }
  AlignMergeClocks(&in);
  EXPECT_EQ(in[1].clock.kind, CollectiveClass::kHostCall);
  EXPECT_EQ(in[1].clock.offset_ns, -507 * kMsI);
}

}  // namespace
}  // namespace gprof
