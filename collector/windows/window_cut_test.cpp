#include "collector/windows/window_cut.h"

#include <gtest/gtest.h>

namespace gprof::collector {
namespace {

constexpr uint64_t kS = 1000, kE = 2000;

Kernel MakeKernel(Profile* p, const char* name, uint64_t start, uint32_t corr) {
  p->launch_configs.push_back({{static_cast<uint32_t>(start), 1, 1}, {32, 1, 1}, 0, 0, 0, 0, 0, 0, 0});
  return {start, start + 10, corr, p->strings.Intern(name),
          static_cast<uint32_t>(p->launch_configs.size() - 1), 7};
}

ApiCall Call(uint64_t start, uint32_t corr) {
  return {start, start + 5, corr, 1, 505, ApiDomain::kRuntime, 0, 0};
}

// A range that crosses the window's end was cut by the window, not left open by the program: it
// ends at the window's end, flagged as cut there, and is no loss.
TEST(CutWindow, HostEventsInsideTheWindowAreKeptAndRangesCutByItsEndAreNoLoss) {
  Profile p;
  const StringId step = p.strings.Intern("step");
  p.ranges.push_back({500, 1500, step, 1, 0, 0, 0});   // starts before: dropped
  p.ranges.push_back({1100, 1900, step, 1, 0, 0, 0});  // inside
  p.ranges.push_back({1200, 2600, step, 1, 0, 0, 0});  // crosses the end: clipped + flagged
  p.ranges.push_back({2100, 2200, step, 1, 0, 0, 0});  // after: dropped (stays in the buffers)
  p.marks.push_back({999, step, 1, 0, 0, 0});
  p.marks.push_back({1000, step, 1, 0, 0, 0});
  Profile carry;
  CutWindow(&p, kS, kE, &carry);
  ASSERT_EQ(p.ranges.size(), 2u);
  EXPECT_EQ(p.ranges[0].start_ns, 1100u);
  EXPECT_EQ(p.ranges[1].end_ns, kE);
  EXPECT_EQ(p.ranges[1].flags, kRangeCutAtWindowEnd);
  EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, 0u);
  ASSERT_EQ(p.marks.size(), 1u);
  EXPECT_EQ(p.marks[0].ts_ns, 1000u);
}

// A range still open when the window was built (the build closed it at the window's end and
// flagged it open) is cut by the window too; only when the program's exit ended the window is it
// a range the program left open, counted as before.
TEST(CutWindow, RangeOpenAtTheWindowsEndIsALossOnlyWhenTheProgramEndedTheWindow) {
  for (bool program_ended : {false, true}) {
    SCOPED_TRACE(program_ended ? "program ended" : "window ended");
    Profile p;
    const StringId name = p.strings.Intern("Optimizer.step#AdamW.step");
    p.ranges.push_back({1300, kE, name, 1, 0, kRangeOpenAtEnd, 0});
    p.ranges.push_back({1400, kE + 50, name, 1, 0, 0, 0});
    Profile carry;
    CutWindow(&p, kS, kE, &carry, program_ended);
    ASSERT_EQ(p.ranges.size(), 2u);
    EXPECT_EQ(p.ranges[1].end_ns, kE);
    const uint16_t flag = program_ended ? kRangeOpenAtEnd : kRangeCutAtWindowEnd;
    EXPECT_EQ(p.ranges[0].flags, flag);
    EXPECT_EQ(p.ranges[1].flags, flag);
    EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, program_ended ? 2u : 0u);
  }
}

// --cpu-sampling: a window build takes every sample queued since the previous one (wait and
// warmup steps included, and the first moments after the window's end). The window keeps those
// taken inside [kS, kE) only, and says how many it kept: here 3 of 6 (1000, 1500 and 1999).
TEST(CutWindow, CpuSamplesOutsideTheWindowAreLeftOut) {
  Profile p;
  p.stacks = {{0, 1}};
  p.stack_pcs = {0x1000};
  for (uint64_t t : {500u, 999u, 1000u, 1500u, 1999u, 2000u}) p.cpu_samples.push_back({t, 1, 0, 100});
  p.cpu_sample_counters = {1000, kCpuSamplesPerf, 6, 2};
  Profile carry;
  CutWindow(&p, kS, kE, &carry);
  ASSERT_EQ(p.cpu_samples.size(), 3u);
  EXPECT_EQ(p.cpu_samples[0].time_ns, 1000u);
  EXPECT_EQ(p.cpu_samples[1].time_ns, 1500u);
  EXPECT_EQ(p.cpu_samples[2].time_ns, 1999u);
  EXPECT_EQ(p.cpu_sample_counters.taken, 3u);
  EXPECT_EQ(p.cpu_sample_counters.dropped, 2u) << "the sampler's own losses stay as counted";
  EXPECT_TRUE(carry.cpu_samples.empty());
}

TEST(CutWindow, GpuWorkFollowsItsLaunch) {
  Profile p;
  p.api_calls = {Call(900, 1), Call(1500, 2), Call(2500, 3)};
  p.kernels.push_back(MakeKernel(&p, "warmup_kernel", 1100, 1));  // launched before: dropped
  p.kernels.push_back(MakeKernel(&p, "late_kernel", 2300, 2));    // launched inside, ran late
  p.kernels.push_back(MakeKernel(&p, "next_kernel", 2600, 3));    // next window's
  p.kernels.push_back(MakeKernel(&p, "unknown_in", 1700, 0));     // no launch known: by time
  p.kernels.push_back(MakeKernel(&p, "unknown_after", 2700, 99));
  p.kernels.push_back(MakeKernel(&p, "unknown_before", 100, 98));
  Memcpy m{};
  m.start_ns = 1600;
  m.correlation_id = 2;
  p.memcpys.push_back(m);
  Profile carry;
  CutWindow(&p, kS, kE, &carry);
  ASSERT_EQ(p.api_calls.size(), 1u);
  EXPECT_EQ(p.api_calls[0].correlation_id, 2u);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.strings.Get(p.kernels[0].name), "late_kernel");
  EXPECT_EQ(p.strings.Get(p.kernels[1].name), "unknown_in");
  EXPECT_EQ(p.memcpys.size(), 1u);
  ASSERT_EQ(carry.kernels.size(), 2u);
  EXPECT_EQ(carry.strings.Get(carry.kernels[0].name), "next_kernel");
  EXPECT_EQ(carry.strings.Get(carry.kernels[1].name), "unknown_after");
  // Launch configs travel with the kernel.
  EXPECT_EQ(carry.launch_configs.at(carry.kernels[0].launch_config).grid[0], 2600u);
}

TEST(CutWindow, UnknownCallWithAnIdBelowTheWindowsCallsWasLaunchedBefore) {
  // Call 5's host record was trimmed with a wait step; its kernel started inside the window
  // (the GPU ran behind). Ids count up in call order, so 5 < 7 (the window's first call): earlier.
  Profile p;
  p.api_calls = {Call(1200, 7), Call(1400, 8)};
  p.kernels.push_back(MakeKernel(&p, "wait_step_kernel", 1300, 5));
  p.kernels.push_back(MakeKernel(&p, "own_kernel", 1500, 7));
  Profile carry;
  CutWindow(&p, kS, kE, &carry);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.strings.Get(p.kernels[0].name), "own_kernel");
  EXPECT_TRUE(carry.kernels.empty());
}

TEST(MoveGpuRecords, ReinternsAndMergesDevicesAndNames) {
  Profile from;
  from.kernels.push_back(MakeKernel(&from, "k", 10, 1));
  from.devices.push_back({0, from.strings.Intern("NVIDIA H200"), 1, 9, 0, 132, 0, 0, 0, 0, 0, 0, 32});
  from.api_names.push_back({505, ApiDomain::kRuntime, 0, from.strings.Intern("cudaLaunchKernel")});
  from.counters.cupti_dropped_records = 4;
  Profile into;
  into.strings.Intern("something else");
  into.devices.push_back({0, into.strings.Intern("NVIDIA H200"), 1, 9, 0, 132, 0, 0, 0, 0, 0, 0, 32});
  into.counters.cupti_dropped_records = 1;
  MoveGpuRecords(&from, &into);
  EXPECT_TRUE(from.kernels.empty());
  ASSERT_EQ(into.kernels.size(), 1u);
  EXPECT_EQ(into.strings.Get(into.kernels[0].name), "k");
  EXPECT_EQ(into.launch_configs.at(into.kernels[0].launch_config).block[0], 32u);
  EXPECT_EQ(into.devices.size(), 1u);
  ASSERT_EQ(into.api_names.size(), 1u);
  EXPECT_EQ(into.strings.Get(into.api_names[0].name), "cudaLaunchKernel");
  EXPECT_EQ(into.counters.cupti_dropped_records, 5u);
  EXPECT_EQ(from.counters.cupti_dropped_records, 0u);
}

TEST(MoveGpuRecordsOf, MovesOnlyTheRecordsOfTheGivenCalls) {
  Profile pending;
  pending.kernels.push_back(MakeKernel(&pending, "held_a", 3000, 4));
  pending.kernels.push_back(MakeKernel(&pending, "other", 3010, 9));
  pending.kernels.push_back(MakeKernel(&pending, "held_b", 3020, 5));
  pending.counters.gpu_records_incomplete = 2;
  Profile held;
  const auto moved = MoveGpuRecordsOf({4, 5, 6}, &pending, &held);
  EXPECT_EQ(moved, (std::unordered_set<uint32_t>{4, 5}));
  ASSERT_EQ(held.kernels.size(), 2u);
  EXPECT_EQ(held.strings.Get(held.kernels[0].name), "held_a");
  EXPECT_EQ(held.strings.Get(held.kernels[1].name), "held_b");
  EXPECT_EQ(held.launch_configs.at(held.kernels[1].launch_config).grid[0], 3020u);
  ASSERT_EQ(pending.kernels.size(), 1u);
  EXPECT_EQ(pending.kernels[0].correlation_id, 9u);
  EXPECT_EQ(pending.counters.gpu_records_incomplete, 2u);  // counters stay
  EXPECT_EQ(held.counters.gpu_records_incomplete, 0u);
}

}  // namespace
}  // namespace gprof::collector
