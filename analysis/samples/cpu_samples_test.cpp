// --cpu-sampling's analysis on hand-built samples: the functions sampled in a gap with their
// time (the sum of their CPU times, by hand), the gpu_idle finding that names them (and is unchanged
// without samples), folded stacks and the cpu_sample_sum rows.
#include "analysis/samples/cpu_samples.h"

#include <gtest/gtest.h>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_test_util.h"

namespace gprof {
namespace {

using namespace findings_test;

// Each sample stands for 10 us of CPU (a 100 kHz period). Two stacks: 0 = host_preprocess <-
// main, 1 = cudaLaunchKernel <- main (innermost first).
CpuSampleNames TwoStackNames() {
  CpuSampleNames n;
  n.function = {"host_preprocess(int, float)", "cudaLaunchKernel"};
  n.location = {"main.cu:22", ""};
  n.frames_outermost_first = {{"main", "host_preprocess(int, float)"}, {"main", "cudaLaunchKernel"}};
  return n;
}

// Kernels [100, 110) and [410, 420) us: the window's gaps are [0, 100) (100 us) and [110, 410)
// (300 us, the largest). Samples every 10 us: 29 in host_preprocess at 115..395 and one in
// cudaLaunchKernel at 405 inside the largest gap; 5 in host_preprocess at 5..45 in the first.
Profile GapProfile() {
  Profile p = NewProfile();
  p.stack_pcs = {0x1010, 0x1000, 0x2010, 0x1000};
  p.stacks = {{0, 2}, {2, 2}};
  AddApi(&p, 95'000, 99'000, 1, kLaunch);
  AddKernel(&p, 100'000, 110'000, 1, "tiny_kernel");
  AddApi(&p, 404'000, 408'000, 2, kLaunch);
  AddKernel(&p, 410'000, 420'000, 2, "tiny_kernel");
  for (uint64_t us = 115; us <= 395; us += 10) p.cpu_samples.push_back({t0 + us * 1000, kTid, 0, 10'000});
  p.cpu_samples.push_back({t0 + 405'000, kTid, 1, 10'000});
  for (uint64_t us = 5; us <= 45; us += 10) p.cpu_samples.push_back({t0 + us * 1000, kTid, 0, 10'000});
  p.cpu_sample_counters = {100'000, kCpuSamplesPerf, p.cpu_samples.size(), 0};
  return p;
}

TEST(CpuSamples, FunctionsDuringAGapSumTheirSamplesCpuTime) {
  const Profile p = GapProfile();
  const std::vector<GapFunction> f =
      FunctionsDuring(p, TwoStackNames(), t0 + 110'000, t0 + 410'000, 3);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].function, "host_preprocess(int, float)");
  EXPECT_EQ(f[0].samples, 29u);
  EXPECT_EQ(f[0].ns, 290'000u);  // 29 x 10 us
  EXPECT_EQ(f[1].function, "cudaLaunchKernel");
  EXPECT_EQ(f[1].ns, 10'000u);
  EXPECT_EQ(DescribeGapFunction(f[0], 300'000),
            "the host spent 290.000us of the 300.000us gap in host_preprocess(int, float) "
            "(main.cu:22), sampled (29 samples)");
}

TEST(CpuSamples, TimeOfAFunctionIsCappedAtTheGap) {
  Profile p = GapProfile();
  // Timer samples at scheduler ticks: each stands for 4 ms of the process's CPU, so 29 would be
  // 116 ms in a 300 us gap.
  for (CpuSample& s : p.cpu_samples) s.cpu_ns = 4'000'000;
  EXPECT_EQ(FunctionsDuring(p, TwoStackNames(), t0 + 110'000, t0 + 410'000, 3)[0].ns, 300'000u);
}

TEST(CpuSamples, GpuIdleNamesTheSampledHostFunctionOnlyWithSamples) {
  const Profile p = GapProfile();
  const CpuSampleNames names = TwoStackNames();
  FindingsInputs inputs;
  inputs.cpu_samples = &names;
  const std::vector<Finding> sampled = FindFindings(p, nullptr, inputs);
  const Finding* with = Find(sampled, "gpu_idle");
  ASSERT_NE(with, nullptr);
  ASSERT_TRUE(with->where.has_value());
  EXPECT_EQ(with->where->ts_ns, 110'000u);  // the largest gap first
  ASSERT_GE(with->where->context.size(), 2u);
  EXPECT_EQ(with->where->context[0].rfind("the host spent 290.000us of the 300.000us gap in "
                                          "host_preprocess(int, float) (main.cu:22)", 0),
            0u);
  EXPECT_NE(with->title.find("host_preprocess"), std::string::npos) << with->title;
  const std::vector<Finding> without = FindFindings(p);
  const Finding* plain = Find(without, "gpu_idle");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->title.find("host_preprocess"), std::string::npos);
  EXPECT_EQ(plain->where->context.size() + 2, with->where->context.size());  // two functions added
}

TEST(CpuSamples, FoldedStacksAndSampleSum) {
  const Profile p = GapProfile();
  const CpuSampleNames names = TwoStackNames();
  EXPECT_EQ(FoldedCpuStacks(p, names),
            "thread 1;main;cudaLaunchKernel 1\n"
            "thread 1;main;host_preprocess(int, float) 34\n");
  const std::string sum = FormatCpuSampleSum(p, names);
  // 34 of 35 samples = 97.1 %, 340 us; main is in all 35 but never innermost: no row.
  EXPECT_NE(sum.find("    97.1            34          340000             34  "
                     "host_preprocess(int, float) (main.cu:22)"),
            std::string::npos)
      << sum;
  EXPECT_NE(sum.find("35 samples at 100000 Hz (perf_event_open, in process), 0 dropped"),
            std::string::npos);
  EXPECT_EQ(sum.find("  main\n"), std::string::npos);
}

}  // namespace
}  // namespace gprof
