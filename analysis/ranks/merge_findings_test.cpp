// Distributed findings (merge_findings.h) on hand-built ranks: each test builds 3-4 profiles
// (times in ns after t0, findings_test_util.h), surveys them as the merge does
// (SummarizeForMerge) and checks the findings against numbers derived by hand in the comments.
#include "analysis/ranks/merge_findings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/findings/findings_test_util.h"
#include "analysis/ranks/merge.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: t0, the Add* helpers, Find, Ns, X
using ::testing::HasSubstr;

constexpr uint64_t kMs = 1'000'000;

// Rank `rank` of `world` as pid 100 + rank on testhost; collection starts at t0 for every rank,
// so the merged origin is t0 and a place's ts is its time after t0.
MergeInput Rank(Profile&& p, int32_t rank, int32_t world) {
  p.info.rank = rank;
  p.info.world_size = world;
  p.info.pid = 100 + static_cast<uint32_t>(rank);
  p.info.hostname = "testhost";
  return SummarizeForMerge(p, "rank" + std::to_string(rank) + ".gpdump");
}

// Consecutive steps 1..n starting at 1 ms, with these durations (ms).
Profile WithSteps(const std::vector<double>& durations_ms) {
  Profile p = NewProfile();
  uint64_t at = 1 * kMs;
  for (size_t i = 0; i < durations_ms.size(); ++i) {
    const uint64_t dur = static_cast<uint64_t>(durations_ms[i] * kMs);
    p.steps.push_back({t0 + at, t0 + at + dur, static_cast<uint32_t>(i + 1), kTid});
    at += dur;
  }
  return p;
}

// Ranks 0, 1, ... of the profiles (Profile is move-only: each argument is a fresh one).
template <class... P>
std::vector<MergeInput> Ranks(P&&... profiles) {
  std::vector<MergeInput> in;
  const int32_t world = sizeof...(profiles);
  int32_t r = 0;
  (in.push_back(Rank(std::move(profiles), r++, world)), ...);
  SortMergeInputs(&in);
  return in;
}

std::string TextOf(const Finding& f, const char* key) {
  const Evidence* e = f.Get(key);
  EXPECT_NE(e, nullptr) << f.id << " has no " << key;
  return e ? e->text : "";
}

TEST(CommunicationKernel, NamesAsHtaClassifiesThemPlusNcclDevKernels) {
  // HTA: "ncclKernel" in the name (NCCL before 2.19).
  EXPECT_TRUE(IsCommunicationKernel(
      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"));
  EXPECT_TRUE(IsCommunicationKernel("void ncclKernel<ncclFuncAllReduce, float>(ncclWorkElem)"));
  // NCCL 2.19 and later.
  EXPECT_TRUE(IsCommunicationKernel(
      "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(IsCommunicationKernel("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)"));
  // Any other name starting with nccl, after a template's return type.
  EXPECT_TRUE(IsCommunicationKernel("void nccl_sendrecv_copy<float>(float*)"));
  // Compute and memory.
  EXPECT_FALSE(IsCommunicationKernel("ampere_sgemm_128x64_nn"));
  EXPECT_FALSE(IsCommunicationKernel(
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)"));
  EXPECT_FALSE(IsCommunicationKernel("fused_nccl_pack_kernel"));
  EXPECT_FALSE(IsCommunicationKernel("Memcpy DtoD (Device -> Device)"));
  EXPECT_FALSE(IsCommunicationKernel(""));
}

// Four ranks, four steps. Ranks 0, 1, 3: 10 ms each. Rank 2: 13, 12.5, 10, 14 ms.
//   step 1: others 10, 10, 10 (median 10); rank 2 13: +3 ms, 1.30x -> slow
//   step 2: 12.5: +2.5 ms, 1.25x -> slow
//   step 3: everyone 10: rank 0 is the first max, +0 -> not slow
//   step 4: 14: +4 ms, 1.40x -> slow
// Rank 2: 3 of 4 steps (75 % >= 25 %); median excess of {3, 2.5, 4} = 3 ms, median factor of
// {1.30, 1.25, 1.40} = 1.30 (< 1.5: warn); its median over the 4 steps: (12.5 + 13) / 2 =
// 12.75 ms; the others' 12 values are all 10 ms. Places by excess: step 4 (rank 2's step 4 starts
// at 1 + 13 + 12.5 + 10 = 36.5 ms, lasts 14 ms), step 1 (1 ms, 13 ms), step 2 (14 ms, 12.5 ms).
TEST(MergedFindings, StragglerNamesTheRankSlowestInMostStepsAndByHowMuch) {
  const auto even = [] { return WithSteps({10, 10, 10, 10}); };
  const std::vector<MergeInput> in = Ranks(even(), even(), WithSteps({13, 12.5, 10, 14}), even());
  const std::vector<Finding> fs = MergedFindings(in);
  ASSERT_EQ(fs.size(), 1u);  // no GPU work: no imbalance, no comm_overlap
  const Finding& f = fs[0];
  EXPECT_EQ(f.id, "straggler");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(Ns(f, "rank"), 2u);
  EXPECT_EQ(TextOf(f, "process"), "rank 2 (testhost:102)");
  EXPECT_EQ(TextOf(f, "metric"), "step_time");
  EXPECT_EQ(Ns(f, "steps"), 4u);
  EXPECT_EQ(Ns(f, "slow_steps"), 3u);
  EXPECT_DOUBLE_EQ(X(f, "slow_steps_pct"), 75.0);
  EXPECT_EQ(Ns(f, "median_excess_us"), 3 * kMs);
  EXPECT_NEAR(X(f, "median_factor"), 1.30, 1e-9);
  EXPECT_EQ(Ns(f, "rank_median_us"), 12'750'000u);
  EXPECT_EQ(Ns(f, "others_median_us"), 10 * kMs);
  EXPECT_EQ(Ns(f, "other_slow_steps"), 0u);
  EXPECT_EQ(f.Get("other_stragglers"), nullptr);
  ASSERT_EQ(f.places.size(), 3u);
  EXPECT_EQ(f.places[0].step, 4u);
  EXPECT_EQ(f.places[0].ts_ns, 36'500'000u);
  EXPECT_EQ(f.places[0].dur_ns, 14 * kMs);
  EXPECT_EQ(f.places[0].name, "ProfilerStep#4");
  EXPECT_EQ(f.places[0].context,
            (std::vector<std::string>{"rank 2 (testhost:102)",
                                      "+4.000ms over the other ranks' median 10.000ms (1.40x)"}));
  EXPECT_EQ(f.places[1].step, 1u);
  EXPECT_EQ(f.places[1].ts_ns, 1 * kMs);
  EXPECT_EQ(f.places[2].step, 2u);
  EXPECT_EQ(f.places[2].ts_ns, 14 * kMs);
  EXPECT_EQ(f.places[2].dur_ns, 12'500'000u);
  ASSERT_TRUE(f.where.has_value());
  EXPECT_EQ(f.where->step, 4u);
  EXPECT_THAT(f.title, HasSubstr("rank 2 (testhost:102) has the longest step in 3 of 4 steps, "
                                 "by 3.000ms (1.30x)"));
  // The outputs of single-profile findings take them as they are.
  EXPECT_THAT(FormatFindingsJson(fs), HasSubstr("\"rank\": 2"));
  EXPECT_THAT(FormatFindingsSummary(fs), HasSubstr("warn  straggler: Straggler: rank 2"));
}

// Ranks within 0.5 ms of each other (under kStragglerMinExcessNs) and equal ranks: nothing.
TEST(MergedFindings, EqualRanksAndJitterHaveNoStraggler) {
  const auto even = [] { return WithSteps({10, 10, 10}); };
  EXPECT_TRUE(MergedFindings(Ranks(even(), even(), even())).empty());
  EXPECT_TRUE(
      MergedFindings(Ranks(even(), WithSteps({10.5, 10.2, 10}), WithSteps({10, 10.4, 10.5})))
          .empty());
  // One input alone, or a step only one rank has, compares nothing.
  EXPECT_TRUE(MergedFindings(Ranks(WithSteps({30}))).empty());
  EXPECT_TRUE(MergedFindings(Ranks(WithSteps({10}), WithSteps({10, 30}))).empty());
}

// Three ranks, four steps of 10 ms except: rank 1 takes 15 ms in steps 1, 2, 3 (+5 ms over the
// others' 10 ms, 1.50x each: high), rank 0 takes 12.5 ms in step 4 (+2.5 ms, 1.25x). Rank 1 is
// the slowest most often: 3 of 4 steps; rank 0 in one.
TEST(MergedFindings, DifferentStragglersInDifferentStepsNameTheMostFrequent) {
  const std::vector<MergeInput> in = Ranks(
      WithSteps({10, 10, 10, 12.5}), WithSteps({15, 15, 15, 10}), WithSteps({10, 10, 10, 10}));
  const std::vector<Finding> fs = MergedFindings(in);
  ASSERT_EQ(fs.size(), 1u);
  const Finding& f = fs[0];
  EXPECT_EQ(Ns(f, "rank"), 1u);
  EXPECT_EQ(f.severity, Severity::kHigh);  // median factor 1.5 >= kStragglerHighFactor
  EXPECT_EQ(Ns(f, "slow_steps"), 3u);
  EXPECT_EQ(Ns(f, "median_excess_us"), 5 * kMs);
  EXPECT_NEAR(X(f, "median_factor"), 1.5, 1e-9);
  EXPECT_EQ(Ns(f, "other_slow_steps"), 1u);
  EXPECT_EQ(TextOf(f, "other_stragglers"), "rank 0 (1 step)");
  EXPECT_THAT(f.title, HasSubstr("; also the slowest: rank 0 (1 step)"));
}

// A rank slowest in one step of five (20 % < kStragglerMinStepShare): no finding.
TEST(MergedFindings, ARankSlowInFewStepsIsNoStraggler) {
  const auto even = [] { return WithSteps({10, 10, 10, 10, 10}); };
  EXPECT_TRUE(MergedFindings(Ranks(even(), WithSteps({10, 20, 10, 10, 10}), even())).empty());
}

// One step 1-11 ms on each rank (equal: no straggler), kernels on device 0 inside it.
Profile BusyFor(uint64_t busy_ns) {
  Profile p = WithSteps({10});
  AddKernel(&p, 1 * kMs, 1 * kMs + busy_ns, 1, "_Z4gemmv");
  return p;
}

// Shares of the 10 ms window: 80, 80, 80, 20 %. Median (80 + 80) / 2 = 80 %; rank 3 is 60
// points off (>= 20): imbalanced; the others 0. Min 20 % at rank 3, max 80 % at rank 0 (the
// first). Its place: its window, 1 ms after t0, 10 ms, on device 0.
TEST(MergedFindings, ImbalanceNamesTheRankWithMuchLowerGpuBusy) {
  const std::vector<MergeInput> in =
      Ranks(BusyFor(8 * kMs), BusyFor(8 * kMs), BusyFor(8 * kMs), BusyFor(2 * kMs));
  const std::vector<Finding> fs = MergedFindings(in);
  ASSERT_EQ(fs.size(), 1u);
  const Finding& f = fs[0];
  EXPECT_EQ(f.id, "imbalance");
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(Ns(f, "processes"), 4u);
  EXPECT_EQ(Ns(f, "imbalanced"), 1u);
  EXPECT_NEAR(X(f, "min_gpu_busy_pct"), 20.0, 1e-9);
  EXPECT_NEAR(X(f, "median_gpu_busy_pct"), 80.0, 1e-9);
  EXPECT_NEAR(X(f, "max_gpu_busy_pct"), 80.0, 1e-9);
  EXPECT_EQ(TextOf(f, "min_at"), "rank 3 (testhost:103)");
  EXPECT_EQ(TextOf(f, "max_at"), "rank 0 (testhost:100)");
  EXPECT_EQ(TextOf(f, "imbalanced_ranks"), "rank 3 (20.0%)");
  ASSERT_EQ(f.places.size(), 1u);
  EXPECT_EQ(f.places[0].ts_ns, 1 * kMs);
  EXPECT_EQ(f.places[0].dur_ns, 10 * kMs);
  EXPECT_EQ(f.places[0].device, 0u);
  EXPECT_THAT(f.title, HasSubstr("rank 3 (testhost:103) is busy 20.0% of its window vs the "
                                 "median 80.0% of 4 processes"));
}

// The factor rule: 10, 10, 16 %: median 10 %, rank 2 is 6 points off (< 20) but 1.6x (>= 1.5)
// with a difference of at least 5 points: imbalanced. 2, 2, 4 %: 2x but only 2 points: nothing.
// 70, 75, 80 %: at most 5 points and 1.07x: nothing.
TEST(MergedFindings, ImbalanceByFactorNeedsAFewPointsOfDifference) {
  const std::vector<Finding> by_factor =
      MergedFindings(Ranks(BusyFor(1 * kMs), BusyFor(1 * kMs), BusyFor(1'600'000)));
  ASSERT_EQ(by_factor.size(), 1u);
  EXPECT_EQ(by_factor[0].id, "imbalance");
  EXPECT_EQ(TextOf(by_factor[0], "imbalanced_ranks"), "rank 2 (16.0%)");
  EXPECT_TRUE(MergedFindings(Ranks(BusyFor(200'000), BusyFor(200'000), BusyFor(400'000))).empty());
  EXPECT_TRUE(
      MergedFindings(Ranks(BusyFor(7 * kMs), BusyFor(7'500'000), BusyFor(8 * kMs))).empty());
}

constexpr const char* kAllReduce =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// Two 20 ms steps (1-21 ms, 21-41 ms; S = a step's start); per step a compute kernel on stream 7
// from S and an all-reduce on stream 8 until S + 18 ms, both on device 0.
Profile Collective(uint64_t compute_ms, uint64_t allreduce_at_ms) {
  Profile p = WithSteps({20, 20});
  uint32_t corr = 1;
  for (uint64_t s : {1 * kMs, 21 * kMs}) {
    AddKernel(&p, s, s + compute_ms * kMs, corr++, "_Z7forwardv", 7);
    AddKernel(&p, s + allreduce_at_ms * kMs, s + 18 * kMs, corr++, kAllReduce, 8);
  }
  return p;
}

// Ranks 0 and 1: compute 10 ms, all-reduce from S + 6 ms; rank 2: compute 13 ms, all-reduce from
// S + 12 ms. Step times are equal (20 ms): no step_time straggler. Time before the collective:
// 6, 6, 12 ms in both steps: rank 2 +6 ms over the others' median 6 ms, 2.00x (high), 2 of 2
// steps. Busy: [S, S + 18) on every rank, 36 of the 40 ms window: no imbalance.
// comm_overlap, window 40 ms:
//   rank 0 (and 1): comm 2 x 12 = 24 ms (60 %), compute 2 x 10 = 20 ms, overlap 2 x (10 - 6) =
//                   8 ms, 8 / 24 = 33.33 %
//   rank 2:         comm 2 x 6 = 12 ms (30 %), compute 2 x 13 = 26 ms, overlap 2 x 1 = 2 ms,
//                   2 / 12 = 16.67 %
TEST(MergedFindings, NcclKernelsGiveTheTimeBeforeTheCollectiveAndTheOverlap) {
  const std::vector<MergeInput> in =
      Ranks(Collective(10, 6), Collective(10, 6), Collective(13, 12));
  EXPECT_EQ(in[2].dist.comm_kernels, 2u);
  ASSERT_EQ(in[2].dist.steps.size(), 2u);
  EXPECT_EQ(in[2].dist.steps[1].before_collective_ns, 12 * kMs);
  const std::vector<Finding> fs = MergedFindings(in);
  ASSERT_EQ(fs.size(), 4u);  // straggler (high), then comm_overlap per rank (info)
  const Finding& s = fs[0];
  EXPECT_EQ(s.id, "straggler");
  EXPECT_EQ(s.severity, Severity::kHigh);
  EXPECT_EQ(TextOf(s, "metric"), "before_collective");
  EXPECT_EQ(Ns(s, "rank"), 2u);
  EXPECT_EQ(Ns(s, "steps"), 2u);
  EXPECT_EQ(Ns(s, "slow_steps"), 2u);
  EXPECT_EQ(Ns(s, "median_excess_us"), 6 * kMs);
  EXPECT_NEAR(X(s, "median_factor"), 2.0, 1e-9);
  EXPECT_EQ(Ns(s, "rank_median_us"), 12 * kMs);
  EXPECT_EQ(Ns(s, "others_median_us"), 6 * kMs);
  ASSERT_EQ(s.places.size(), 2u);
  EXPECT_EQ(s.places[0].step, 1u);  // equal excess: the earlier step first
  EXPECT_EQ(s.places[0].ts_ns, 1 * kMs);
  EXPECT_EQ(s.places[0].dur_ns, 12 * kMs);
  EXPECT_THAT(s.title, HasSubstr("rank 2 (testhost:102) reaches the first collective last in "
                                 "2 of 2 steps, by 6.000ms (2.00x)"));

  for (size_t r = 0; r < 3; ++r) {
    const Finding& c = fs[1 + r];
    EXPECT_EQ(c.id, "comm_overlap");
    EXPECT_EQ(c.severity, Severity::kInfo);
    EXPECT_EQ(Ns(c, "rank"), r);
    EXPECT_EQ(Ns(c, "comm_kernels"), 2u);
    EXPECT_EQ(Ns(c, "window_us"), 40 * kMs);
  }
  const Finding& r0 = fs[1];
  EXPECT_EQ(Ns(r0, "comm_time_us"), 24 * kMs);
  EXPECT_EQ(Ns(r0, "compute_time_us"), 20 * kMs);
  EXPECT_EQ(Ns(r0, "overlap_us"), 8 * kMs);
  EXPECT_NEAR(X(r0, "overlap_pct"), 100.0 / 3.0, 1e-9);
  EXPECT_NEAR(X(r0, "comm_pct"), 60.0, 1e-9);
  const Finding& r2 = fs[3];
  EXPECT_EQ(Ns(r2, "comm_time_us"), 12 * kMs);
  EXPECT_EQ(Ns(r2, "compute_time_us"), 26 * kMs);
  EXPECT_EQ(Ns(r2, "overlap_us"), 2 * kMs);
  EXPECT_NEAR(X(r2, "overlap_pct"), 100.0 / 6.0, 1e-9);
  EXPECT_NEAR(X(r2, "comm_pct"), 30.0, 1e-9);
  EXPECT_EQ(r2.where->ts_ns, 1 * kMs);
  EXPECT_EQ(r2.where->dur_ns, 40 * kMs);
  EXPECT_THAT(r2.title, HasSubstr("communication kernels 12.000ms (30.0% of its window), 2.000ms "
                                  "of it (16.7%) overlapped with compute kernels"));
}

}  // namespace
}  // namespace gprof
