// Estimated savings (findings.h: Saving, savings.h; docs/FINDINGS.md "Estimated saving") on
// hand-built profiles, each expected figure derived by hand in the comment above the test, and
// the order by saving with its "fix this first" headline.
#include "analysis/findings/savings.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/findings/findings_test_util.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: the profile builders

// Four steps of 10 ms, each (ms after 10 i): range load_batch [0, 7); cudaLaunchKernel
// [7, 7.01) -> train [7.02, 10). GPU busy 2.98 of 10 ms (29.8 %: not overhead-bound).
Profile LoadsThenTrains() {
  Profile p = NewProfile();
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t b = i * 10'000'000ull;
    p.steps.push_back({t0 + b, t0 + b + 10'000'000, i, kTid});
    AddRange(&p, b, b + 7'000'000, "load_batch");
    AddApi(&p, b + 7'000'000, b + 7'010'000, i + 1, kLaunch);
    AddKernel(&p, b + 7'020'000, b + 10'000'000, i + 1, "train");
  }
  return p;
}

// Window [0, 40) ms; idle gaps [0, 7.02) and [10 i, 10 i + 7.02): 4 x 7.02 = 28.08 ms per run,
// 7.02 ms of each 10 ms step.
TEST(FindingsSaving, GpuIdleSavesItsGapsPerRunAndPerStep) {
  const std::vector<Finding> fs = FindFindings(LoadsThenTrains());
  ASSERT_EQ(fs.size(), 1u);
  ASSERT_EQ(fs[0].id, "gpu_idle");
  ASSERT_TRUE(fs[0].saving.has_value());
  EXPECT_EQ(fs[0].saving->run_ns, 28'080'000u);
  EXPECT_EQ(fs[0].saving->step_ns, 7'020'000u);
  EXPECT_EQ(fs[0].saving->whole_ns, 10'000'000u);
  EXPECT_EQ(SavingHeadline(fs).rfind("Fix this first: gpu_idle, up to 7.020ms of 10.000ms per "
                                     "step (the counted idle gaps",
                                     0),
            0u)
      << SavingHeadline(fs);
  const nlohmann::json doc = nlohmann::json::parse(FormatFindingsJson(fs));
  EXPECT_EQ(doc.at("headline"), SavingHeadline(fs));
  EXPECT_EQ(doc["findings"][0].at("saving").at("per_step_us"), 7020.0);
  EXPECT_EQ(doc["findings"][0]["saving"].at("per_run_us"), 28080.0);
  EXPECT_EQ(doc["findings"][0]["saving"].at("of_us"), 10000.0);
  const std::string summary = FormatFindingsSummary(fs);
  EXPECT_EQ(summary.substr(summary.find("\n  Fix this first")),
            "\n  " + SavingHeadline(fs) + "\n");  // the stderr section ends with it
  const std::string text = FormatFindingsText(fs);
  EXPECT_NE(text.find("\nFix this first: gpu_idle, up to 7.020ms of 10.000ms per step"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  saving: up to 28.080ms per run, 7.020ms of 10.000ms per step ("),
            std::string::npos)
      << text;
}

// An async HtoD copy of 1,000,000 bytes from pageable memory in 100 us [20, 120), and a pinned
// HtoD copy of 4,000,000 bytes in 80 us [200, 280) (50 bytes/ns). At pinned bandwidth the
// pageable copy takes 1,000,000 / 50 = 20 us: 80 us saved. Without the pinned copy, twice its own
// bandwidth: 50 us saved. No steps: the saving is per run only, of the 280 us window.
TEST(FindingsSaving, PageableCopyAtThePinnedBandwidthSeenInTheProfile) {
  Profile p = NewProfile();
  AddApi(&p, 0, 50'000, 1, kMemcpyAsync);
  AddCopy(&p, 20'000, 120'000, 1, CopyKind::kHtoD, MemKind::kPageable, MemKind::kDevice,
          1'000'000, true);
  AddApi(&p, 150'000, 160'000, 2, kMemcpyAsync);
  AddCopy(&p, 200'000, 280'000, 2, CopyKind::kHtoD, MemKind::kPinned, MemKind::kDevice,
          4'000'000, true);
  std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "pageable_memcpy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->saving->run_ns, 80'000u);
  EXPECT_FALSE(f->saving->step_ns.has_value());
  EXPECT_EQ(f->saving->whole_ns, 280'000u);
  EXPECT_EQ(fs.front().id, "pageable_memcpy");  // the largest saving first
  EXPECT_EQ(SavingHeadline(fs).rfind("Fix this first: pageable_memcpy, up to 80.000us of the "
                                     "280.000us window",
                                     0),
            0u)
      << SavingHeadline(fs);

  p.memcpys.pop_back();
  fs = FindFindings(p);
  f = Find(fs, "pageable_memcpy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->saving->run_ns, 50'000u);
}

// One step [0, 1000) us: cudaLaunchKernel [10, 20) -> k [30, 830); cudaStreamSynchronize
// [30, 840). sync: blocked 810 us. gpu_idle: the one gap of 100 us or more, [830, 1000) = 170 us.
// kernel_spread: gemm x6 (no calls) at 2 ms apart after the step, 500, 520, 580, 600, 620,
// 1500 us: mean 720, median 590: 6 x 130 = 780 us. sync (810 us) comes before gpu_idle.
TEST(FindingsSaving, SyncBlockedTimeSpreadExcessOverTheMedianAndTheOrder) {
  Profile p = NewProfile();
  p.steps.push_back({t0, t0 + 1'000'000, 0, kTid});
  AddApi(&p, 10'000, 20'000, 1, kLaunch);
  AddKernel(&p, 30'000, 830'000, 1, "k");
  AddApi(&p, 30'000, 840'000, 2, kStreamSync);
  std::vector<Finding> fs = FindFindings(p);
  const Finding* sync = Find(fs, "sync");
  const Finding* idle = Find(fs, "gpu_idle");
  ASSERT_NE(sync, nullptr);
  ASSERT_NE(idle, nullptr);
  EXPECT_EQ(sync->saving->run_ns, 810'000u);
  EXPECT_EQ(sync->saving->step_ns, 810'000u);
  EXPECT_EQ(idle->saving->run_ns, 170'000u);
  EXPECT_EQ(fs.front().id, "sync");

  Profile spread = NewProfile();
  const uint64_t us[] = {500, 520, 580, 600, 620, 1500};
  for (uint32_t i = 0; i < 6; ++i) {
    AddKernel(&spread, i * 2'000'000ull, i * 2'000'000ull + us[i] * 1000, 100 + i, "gemm");
  }
  fs = FindFindings(spread);
  const Finding* f = Find(fs, "kernel_spread");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->saving->run_ns, 780'000u);
}

// A rule that brings its own estimate (a dataloader_bound of 20 ms per run) keeps it and gets
// its per-step figure from the profile's four 10 ms steps: 5 ms of 10 ms; an id without a method
// (a distributed finding) gets none and goes last; the rest by saving, largest first.
TEST(FindingsSaving, ARuleMayBringItsOwnEstimateAndIdsWithoutOneGoLast) {
  const Profile p = LoadsThenTrains();
  findings_internal::Analysis a(p);
  std::vector<Finding> fs(3);
  fs[0].id = "straggler";
  fs[0].severity = Severity::kHigh;
  fs[1].id = "dataloader_bound";
  fs[1].saving = Saving{20'000'000, std::nullopt, 0, "the DataLoader's share"};
  fs[2].id = "gpu_idle";
  fs[2].evidence.push_back({"idle_us", Evidence::Kind::kDuration, 28'080'000, 0, {}});
  findings_internal::EstimateSavings(a, &fs);
  EXPECT_FALSE(fs[0].saving.has_value());
  EXPECT_EQ(fs[1].saving->step_ns, 5'000'000u);
  EXPECT_EQ(fs[1].saving->whole_ns, 10'000'000u);
  EXPECT_EQ(fs[1].saving->method, "the DataLoader's share");
  OrderBySaving(&fs);
  EXPECT_EQ(fs[0].id, "gpu_idle");
  EXPECT_EQ(fs[1].id, "dataloader_bound");
  EXPECT_EQ(fs[2].id, "straggler");
}

}  // namespace
}  // namespace gprof
