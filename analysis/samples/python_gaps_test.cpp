// gpu_idle's host function over all its gaps: from native samples (--cpu-sampling) and, without
// them, from the Python sampler's samples of the launching thread (python_gaps.h). Hand-built
// profiles; every expected value derived by hand.
#include "analysis/samples/python_gaps.h"

#include <gtest/gtest.h>

#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_test_util.h"

namespace gprof {
namespace {

using namespace findings_test;

// Kernels [100, 110), [410, 420) and [710, 720) us after launches on kTid; the window runs from
// the first launch (95 us) to the last kernel's end: the gaps are [110, 410) and [420, 710),
// 590 us idle.
Profile TwoGaps() {
  Profile p = NewProfile();
  AddApi(&p, 95'000, 99'000, 1, kLaunch);
  AddKernel(&p, 100'000, 110'000, 1, "tiny_kernel");
  AddApi(&p, 404'000, 408'000, 2, kLaunch);
  AddKernel(&p, 410'000, 420'000, 2, "tiny_kernel");
  AddApi(&p, 704'000, 708'000, 3, kLaunch);
  AddKernel(&p, 710'000, 720'000, 3, "tiny_kernel");
  return p;
}

// The times in the gaps where the host preprocesses: 115..395 and 425..695 us every 10 us,
// 29 + 28 = 57 of them; the launches are sampled at 405 and 705.
std::vector<uint64_t> PreprocessUs() {
  std::vector<uint64_t> us;
  for (uint64_t t = 115; t <= 695; t += 10) {
    if (t < 400 || t > 420) us.push_back(t);
  }
  return us;
}

// On kTid: `preprocess` (main.py:20, called from train) at PreprocessUs (57 samples), `launch`
// (main.py:30) at 405 and 705 (2). The same times on another thread (a DataLoader worker, say)
// in `wait` are not the launching thread's.
PythonSamples Sampled() {
  PythonSamples s;
  s.hz = 100'000;
  s.period_ns = 10'000;
  s.threads = {{kTid, 1, "MainThread"}, {kTid + 1, 2, "worker"}};
  s.frames = {{"main.py", "train", 1, 10}, {"main.py", "preprocess", 20, 25},
              {"main.py", "launch", 30, 31}, {"threading.py", "wait", 300, 320}};
  s.stacks = {{0, 1}, {0, 2}, {3}};  // root first
  for (uint64_t us : PreprocessUs()) {
    s.samples.push_back({t0 + us * 1000, 0, 0});
    s.samples.push_back({t0 + us * 1000, 1, 2});
  }
  s.samples.push_back({t0 + 405'000, 0, 1});
  s.samples.push_back({t0 + 705'000, 0, 1});
  return s;
}

TEST(PythonGaps, TheLaunchingThreadsInnermostFunctionSummedOverEveryGap) {
  const std::vector<GapFunction> f =
      PythonFunctionsInGaps(Sampled(), kTid,
                            {{t0 + 420'000, t0 + 710'000}, {t0 + 110'000, t0 + 410'000}}, 3);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].function, "preprocess");
  EXPECT_EQ(f[0].location, "main.py:20");
  EXPECT_EQ(f[0].samples, 57u);
  EXPECT_EQ(f[0].ns, 570'000u);  // 57 x 10 us
  EXPECT_EQ(f[1].function, "launch");
  EXPECT_EQ(f[1].samples, 2u);
}

TEST(PythonGaps, GpuIdleNamesThePythonFunctionWhenThereAreNoNativeSamples) {
  const Profile p = TwoGaps();
  const PythonSamples py = Sampled();
  FindingsInputs inputs;
  inputs.python_samples = &py;
  const std::vector<Finding> found = FindFindings(p, nullptr, inputs);
  const Finding* f = Find(found, "gpu_idle");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(f->Get("host_function"), nullptr) << f->title;
  EXPECT_EQ(f->Get("host_function")->text, "preprocess (main.py:20)");
  EXPECT_EQ(f->Get("host_function_source")->text, "Python samples");
  EXPECT_EQ(f->Get("host_function_samples")->n, 57u);
  EXPECT_NE(f->title.find("over all the gaps, the host spent 570.000us of the 590.000us idle in "
                          "preprocess (main.py:20), sampled (57 samples) of the launching "
                          "thread's Python stack"),
            std::string::npos)
      << f->title;
  const std::vector<Finding> without = FindFindings(p);
  const Finding* plain = Find(without, "gpu_idle");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->Get("host_function"), nullptr);
}

// Native samples over both gaps: 57 host_preprocess samples of 10 us of CPU each give 570 us of
// the 590 us idle; they win over the Python samples.
TEST(PythonGaps, NativeSamplesOverAllTheGapsComeFirst) {
  Profile p = TwoGaps();
  p.stack_pcs = {0x1010, 0x1000};
  p.stacks = {{0, 2}};
  for (uint64_t us : PreprocessUs()) p.cpu_samples.push_back({t0 + us * 1000, kTid, 0, 10'000});
  p.cpu_sample_counters = {100'000, kCpuSamplesPerf, p.cpu_samples.size(), 0};
  CpuSampleNames names;
  names.function = {"host_preprocess(int, float)"};
  names.location = {"main.cu:22"};
  names.frames_outermost_first = {{"main", "host_preprocess(int, float)"}};
  const PythonSamples py = Sampled();
  FindingsInputs inputs;
  inputs.cpu_samples = &names;
  inputs.python_samples = &py;
  const std::vector<Finding> found = FindFindings(p, nullptr, inputs);
  const Finding* f = Find(found, "gpu_idle");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->Get("host_function")->text, "host_preprocess(int, float) (main.cu:22)");
  EXPECT_EQ(f->Get("host_function_source")->text, "native samples");
  EXPECT_EQ(f->Get("host_function_us")->n, 570'000u);
  EXPECT_NE(f->title.find("over all the gaps, the host spent 570.000us of the 590.000us idle in "
                          "host_preprocess(int, float) (main.cu:22), sampled (57 samples)"),
            std::string::npos)
      << f->title;
}

}  // namespace
}  // namespace gprof
