// overhead_bound judged by the launching thread's CPU time (findings_host_cpu.cpp,
// docs/FINDINGS.md): hand-built profiles with thread CPU samples, values derived by hand.
#include <gtest/gtest.h>

#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_test_util.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: the tests' profile builders

// Five iterations of 400 us (us after t0 + 400 i): cudaLaunchKernel [100, 110) -> gemm
// [115, 117), cudaLaunchKernel [300, 310) -> add [312, 314); no range at all. Window: 100 us ..
// 1914 us = 1,814,000 ns; GPU busy 20,000 ns (1.1 %). Recorded host work: the 10 calls,
// 100,000 ns (5.5 %), too little for overhead_bound by itself.
Profile LaunchesOnly() {
  Profile p = NewProfile();
  for (uint64_t i = 0; i < 5; ++i) {
    const uint64_t b = i * 400'000;
    AddApi(&p, b + 100'000, b + 110'000, 2 * i + 1, kLaunch);
    AddKernel(&p, b + 115'000, b + 117'000, 2 * i + 1, "gemm");
    AddApi(&p, b + 300'000, b + 310'000, 2 * i + 2, kLaunch);
    AddKernel(&p, b + 312'000, b + 314'000, 2 * i + 2, "add");
  }
  return p;
}

// Samples of the launching thread at t0 and t0 + 2 ms: 1.9 ms of CPU and 50 us of waiting for a
// CPU between them. Interpolated at the window's edges (100 us and 1914 us): CPU 1,900,000 x
// 1,814,000 / 2,000,000 = 1,723,300 ns; waiting 45,350 ns. Busy: the CPU time against the window
// less the wait, 1,723,300 / 1,768,650 = 97.44 %. overhead_bound, with both host figures.
TEST(FindingsHostCpu, UnrecordedHostComputeIsOverheadBoundByThreadCpuTime) {
  Profile p = LaunchesOnly();
  EXPECT_EQ(Find(FindFindings(p), "overhead_bound"), nullptr) << "ranges alone: 5.5 %";
  p.thread_cpu = {{t0, 0, 0, kTid, 0}, {t0 + 2'000'000, 1'900'000, 50'000, kTid, 0}};
  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "overhead_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Ns(*f, "host_busy_us"), 100'000u);
  EXPECT_NEAR(X(*f, "host_busy_pct"), 100.0 * 100'000 / 1'814'000, 1e-9);
  EXPECT_EQ(Ns(*f, "thread_cpu_us"), 1'723'300u);
  EXPECT_NEAR(X(*f, "thread_cpu_pct"), 100.0 * 1'723'300 / 1'814'000, 1e-9);
  EXPECT_EQ(Ns(*f, "thread_cpu_wait_us"), 45'350u);
  EXPECT_EQ(Ns(*f, "thread_sync_us"), 0u);
  EXPECT_NEAR(X(*f, "thread_busy_pct"), 100.0 * 1'723'300 / 1'768'650, 1e-9);
  EXPECT_EQ(Ns(*f, "launch_thread"), kTid);
  EXPECT_EQ(Ns(*f, "launch_threads"), 1u);
  EXPECT_EQ(f->title,
            "Overhead-bound: GPU 0 is busy 1.1% of the 1.814ms window while its launching thread "
            "1 computes 97.4% of the time it does not wait for a CPU (1.723ms of CPU outside "
            "synchronizations), recorded host work covering 5.5% (Self CPU total 100.000us, Self "
            "CUDA total 20.000us)");
  EXPECT_EQ(Find(fs, "compute_bound"), nullptr);
}

// The same launches inside a range that covers 95 % of the window (the recorded rule's
// overhead_bound), but the thread used only 100 us of CPU in 2 ms: it slept in the range. Thread
// CPU time tells the sleep apart: about 5 % runnable, not overhead_bound.
TEST(FindingsHostCpu, AThreadThatSleepsInsideARecordedRangeIsNotOverheadBound) {
  Profile p = LaunchesOnly();
  for (uint64_t i = 0; i < 5; ++i) AddRange(&p, i * 400'000, i * 400'000 + 380'000, "load");
  ASSERT_NE(Find(FindFindings(p), "overhead_bound"), nullptr) << "ranges alone: 95.6 %";
  p.thread_cpu = {{t0, 0, 0, kTid, 0}, {t0 + 2'000'000, 100'000, 0, kTid, 0}};
  EXPECT_EQ(Find(FindFindings(p), "overhead_bound"), nullptr);
}

// The same launches, each iteration ending in a cudaDeviceSynchronize [320, 400) us that spins
// (runnable all the while: 2 ms of CPU in 2 ms, 1,814,000 ns in the window). In the window the
// first four syncs cover 4 x 80 us (the fifth starts at 1,920 us, after it): busy 1,814,000 -
// 320,000 = 1,494,000 ns (82.4 %), still overhead_bound. Syncs from 120 us in each iteration
// cover 4 x 280 us + [1,720, 1,914) = 1,314,000 ns and leave 500,000 ns (27.6 %): not
// overhead_bound, since waiting for the GPU is not host work.
TEST(FindingsHostCpu, TimeWaitingInASynchronizationIsNotHostWorkEvenWhenItSpins) {
  const auto with_syncs = [](uint64_t from_us) {
    Profile p = LaunchesOnly();
    for (uint64_t i = 0; i < 5; ++i) {
      AddApi(&p, i * 400'000 + from_us * 1000, i * 400'000 + 400'000, 100 + i, kDeviceSync);
    }
    p.thread_cpu = {{t0, 0, 0, kTid, 0}, {t0 + 2'000'000, 2'000'000, 0, kTid, 0}};
    return p;
  };
  const std::vector<Finding> short_syncs = FindFindings(with_syncs(320));
  const Finding* f = Find(short_syncs, "overhead_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Ns(*f, "thread_sync_us"), 320'000u);
  EXPECT_NEAR(X(*f, "thread_busy_pct"), 100.0 * 1'494'000 / 1'814'000, 1e-9);
  EXPECT_EQ(Find(FindFindings(with_syncs(120)), "overhead_bound"), nullptr);
}

}  // namespace
}  // namespace gprof
