// dataloader_bound (findings_dataloader.cpp, docs/FINDINGS.md): hand-built profiles of a training
// thread whose steps hold torch's DataLoader __next__ ranges, values derived by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_test_util.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: the tests' profile builders

constexpr const char* kNext = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

// Three 10 ms steps on kTid (ProfilerStep#0..2 over [0, 30 ms)), each opening with a __next__ of
// `next_us`; the hook's mark of the loader 1 ms before the first step.
Profile Loop(uint64_t next_us) {
  Profile p = NewProfile();
  p.info.start_ns = t0 - 2'000'000;
  p.marks.push_back({t0 - 1'000'000,
                     p.strings.Intern("gprof-run: DataLoader dataset=HeavyDataset batch_size=8 "
                                      "num_workers=0 pin_memory=False persistent_workers=False "
                                      "prefetch_factor=None"),
                     kTid, 0, 0, 0});
  for (uint64_t s = 0; s < 3; ++s) {
    const uint64_t b = s * 10'000'000;
    AddRange(&p, b, b + 10'000'000, ("ProfilerStep#" + std::to_string(s)).c_str());
    AddRange(&p, b, b + next_us * 1000, kNext);
  }
  return p;
}

// 6 ms of each 10 ms step in __next__: 18 of 30 ms, 60 % (high, from 50 %). The loader named by
// the mark: HeavyDataset, num_workers=0.
TEST(FindingsDataLoader, ATrainingThreadWaitingOnItsLoaderMostOfTheStepIsDataLoaderBound) {
  const std::vector<Finding> fs = FindFindings(Loop(6'000));
  const Finding* f = findings_test::Find(fs, "dataloader_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_EQ(Ns(*f, "dataloader_us"), 18'000'000u);
  EXPECT_NEAR(X(*f, "dataloader_pct"), 60.0, 1e-9);
  EXPECT_EQ(Ns(*f, "step_time_us"), 30'000'000u);
  EXPECT_EQ(Ns(*f, "steps"), 3u);
  EXPECT_EQ(Ns(*f, "batches"), 3u);
  EXPECT_EQ(Ns(*f, "num_workers"), 0u);
  ASSERT_NE(f->Get("dataset"), nullptr);
  EXPECT_EQ(f->Get("dataset")->text, "HeavyDataset");
  EXPECT_EQ(f->Get("iterator")->text, "_SingleProcessDataLoaderIter");
  EXPECT_EQ(f->title,
            "DataLoader-bound: the training thread 1 spends 60.0% of the step time (18.000ms of "
            "30.000ms, 3 steps) waiting for batches from the DataLoader over HeavyDataset "
            "(_SingleProcessDataLoaderIter, num_workers=0)");
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->name, kNext);
  EXPECT_EQ(f->where->thread.value_or(0), kTid);
  // Its saving: the 18 ms in __next__, 6 ms of each 10 ms step (all batches ready when asked).
  ASSERT_TRUE(f->saving.has_value());
  EXPECT_EQ(f->saving->run_ns, 18'000'000u);
  EXPECT_EQ(f->saving->step_ns.value_or(0), 6'000'000u);
  for (const char* cure : {"num_workers", "pin_memory", "persistent_workers", "prefetch_factor",
                           "GPU"}) {
    EXPECT_NE(f->advice.find(cure), std::string::npos) << cure;
  }
}

// 0.5 ms of each step: 5 %, under the 10 % floor. A long __next__ on a thread that does not step
// (a validation thread, say) does not count.
TEST(FindingsDataLoader, ALoaderTakingAFewPercentOfTheStepOrOffTheTrainingThreadIsNotNamed) {
  Profile p = Loop(500);
  p.ranges.push_back({t0, t0 + 25'000'000, p.strings.Intern(kNext), kTid + 1, 0, 0, 0});
  EXPECT_EQ(findings_test::Find(FindFindings(p), "dataloader_bound"), nullptr);
}

}  // namespace
}  // namespace gprof
