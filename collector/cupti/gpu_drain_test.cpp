// MergeGpuBatches: batches built by hand, expected values counted by hand.
#include "collector/cupti/gpu_drain.h"
#include "model/gpu_checks.h"
#include "collector/cupti/gpu_collector.h"

#include <gtest/gtest.h>

#include <cupti.h>

namespace gprof::collector {
namespace {

LaunchConfig Config(uint32_t grid_x) {
  LaunchConfig c{};
  c.grid[0] = grid_x;
  c.grid[1] = c.grid[2] = 1;
  c.block[0] = 128;
  c.block[1] = c.block[2] = 1;
  return c;
}

// One batch: kernels named `names[i]` with launch config `configs[i]` and correlation id
// `first_corr + i`.
GpuBatch Batch(std::vector<const char*> names, std::vector<uint32_t> grids, uint32_t first_corr) {
  GpuBatch b;
  for (size_t i = 0; i < names.size(); ++i) {
    Kernel k{};
    k.start_ns = 1000 + i;
    k.end_ns = 2000 + i;
    k.correlation_id = first_corr + static_cast<uint32_t>(i);
    k.name = b.strings.Intern(names[i]);
    k.launch_config = b.InternLaunchConfig(Config(grids[i]));
    k.stream_id = 7;
    b.kernels.push_back(k);
  }
  return b;
}

TEST(MergeGpuBatches, NamesAndLaunchConfigsAreReinternedIntoTheProfile) {
  std::vector<GpuBatch> batches;
  batches.push_back(Batch({"a", "b"}, {1, 2}, 10));
  batches.push_back(Batch({"b", "c"}, {2, 3}, 12));  // "b" and grid 2 again: no new entries
  Profile p;
  p.strings.Intern("already-there");  // profile ids differ from the batches' own ids
  KnownDevices devices;
  MergeGpuBatches(&batches, &devices, &p);
  EXPECT_TRUE(batches.empty());
  ASSERT_EQ(p.kernels.size(), 4u);
  // 3 distinct names and 3 distinct configs (grid 1, 2, 3).
  EXPECT_EQ(p.launch_configs.size(), 3u);
  const char* want_names[] = {"a", "b", "b", "c"};
  const uint32_t want_grid[] = {1, 2, 2, 3};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(p.strings.Get(p.kernels[i].name), want_names[i]) << i;
    EXPECT_EQ(p.launch_configs[p.kernels[i].launch_config].grid[0], want_grid[i]) << i;
  }
}

TEST(MergeGpuBatches, UnlinkedRecordsAreThoseWithoutARecordedApiCall) {
  std::vector<GpuBatch> batches;
  batches.push_back(Batch({"a", "a", "a"}, {1, 1, 1}, 20));  // ids 20, 21, 22
  Profile p;
  p.api_calls.push_back({0, 1, 20, 1, 1, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({0, 1, 22, 1, 1, ApiDomain::kRuntime, 0, 0});
  KnownDevices devices;
  MergeGpuBatches(&batches, &devices, &p);
  EXPECT_EQ(p.counters.gpu_records_uncorrelated, 1u);  // id 21 has no call
}

TEST(MergeGpuBatches, WithoutApiCallsOnlyZeroIdsCountAsUnlinked) {
  std::vector<GpuBatch> batches;
  batches.push_back(Batch({"a"}, {1}, 5));
  batches.back().records_uncorrelated = 2;  // the decoder saw two records with id 0
  batches.back().records_broken = 3;
  Profile p;
  KnownDevices devices;
  const MergeTotals totals = MergeGpuBatches(&batches, &devices, &p);
  EXPECT_EQ(p.counters.gpu_records_uncorrelated, 2u);
  EXPECT_EQ(totals.broken_records, 3u);
}

TEST(MergeGpuBatches, DevicesSeenOnceAreAddedToEveryLaterProfile) {
  KnownDevices devices;
  {
    std::vector<GpuBatch> batches(1);
    DeviceInfo d{};
    d.id = 0;
    d.name = batches[0].strings.Intern("NVIDIA H200");
    batches[0].devices.push_back(d);
    Profile first;
    MergeGpuBatches(&batches, &devices, &first);
    ASSERT_EQ(first.devices.size(), 1u);
    EXPECT_EQ(first.strings.Get(first.devices[0].name), "NVIDIA H200");
  }
  std::vector<GpuBatch> none(1);
  Profile second;  // CUPTI reports a device once: the second window still names it
  MergeGpuBatches(&none, &devices, &second);
  ASSERT_EQ(second.devices.size(), 1u);
  EXPECT_EQ(second.strings.Get(second.devices[0].name), "NVIDIA H200");
}

}  // namespace
}  // namespace gprof::collector

namespace gprof::collector {
namespace {

ApiCall Launch(uint32_t corr, uint64_t start) {
  // cbid 211: cudaLaunchKernel_v7000 in cupti_runtime_cbid.h (a launch-like id).
  return {start, start + 4000, corr, 1, 211, ApiDomain::kRuntime, 0, 0};
}

Kernel KernelOf(uint32_t corr, uint64_t start) { return {start, start + 1000, corr, 0, 0, 7}; }

// Dense ids (as CUPTI gives) and sparse ids (hand-made) must count the same. Hand-derived: calls
// at 10'000; kernel of call 2 starts 6 us early (> 5 us slack: before launch), kernel of call 3
// 4 us early (within slack), call 4's kernel never arrived, a kernel with id 9 has no call.
void ExpectCounts(uint32_t step) {
  Profile p;
  for (uint32_t i = 1; i <= 4; ++i) p.api_calls.push_back(Launch(i * step, 10'000));
  p.kernels.push_back(KernelOf(1 * step, 13'000));
  p.kernels.push_back(KernelOf(2 * step, 4'000));
  p.kernels.push_back(KernelOf(3 * step, 6'000));
  p.kernels.push_back(KernelOf(9 * step + 1, 20'000));
  MarkLaunchCalls(&p, nullptr);  // cbid 211 is flagged a launch, so the model's check counts it
  CheckGpuAgainstCalls(&p);
  EXPECT_EQ(p.counters.gpu_records_before_launch, 1u) << step;
  EXPECT_EQ(p.counters.gpu_launches_without_records, 1u) << step;
}

TEST(CheckGpuAgainstCalls, CountsBeforeLaunchAndMissingWorkForDenseAndSparseIds) {
  ExpectCounts(1);            // ids 1..4: the flat index
  ExpectCounts(100'000'000);  // ids 1e8..4e8: the map and the set
}

// Which calls were queued into a capturing stream is the API callback's to know (it reads each
// call's stream, capture_streams_test.cpp): its flag (kApiCallCaptured) marks them, also in a
// window or segment that starts inside a capture and so lacks its cudaStreamBeginCapture.
TEST(MarkLaunchCalls, LaunchesFlaggedCapturedByTheCallbackAreNotLaunchesWithoutTheirBegin) {
  const uint16_t launch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  Profile p;
  p.api_calls = {ApiCall{10, 15, 1, 1, launch, ApiDomain::kRuntime, kApiCallCaptured, 0},
                 ApiCall{20, 25, 2, 1, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
                         ApiDomain::kRuntime, 0, 0},
                 ApiCall{30, 35, 3, 1, launch, ApiDomain::kRuntime, 0, 0}};
  MarkLaunchCalls(&p, nullptr);
  EXPECT_EQ(p.api_calls[0].flags, kApiCallCaptured);  // not a launch: its work is in a graph
  EXPECT_EQ(p.api_calls[2].flags, kApiCallLaunch);
  EXPECT_EQ(CapturedCalls(p), (std::vector<bool>{true, false, false}));
}

}  // namespace
}  // namespace gprof::collector
