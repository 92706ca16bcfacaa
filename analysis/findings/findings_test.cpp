// Unit tests of the findings (findings.h, docs/FINDINGS.md): one hand-built profile per pattern,
// its finding and evidence numbers derived by hand in the comment above each test, and the
// opposite finding absent (a compute-bound run never says overhead_bound, a run without syncs
// has no sync, no pageable copy no pageable_memcpy, a uniform kernel no kernel_spread).
#include "analysis/findings/findings.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/findings/findings_test_util.h"
#include "analysis/timeline/trace_plan.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: the tests' profile builders

// The seeds' 64x64 matmul+add, five iterations of P = 400 us, each (us after t0 + 400 i):
//   range matmul_add [0, 380); cudaLaunchKernel [100, 110) -> gemm [115, 117);
//   cudaLaunchKernel [300, 310) -> add [312, 314). No steps, no syncs.
Profile OverheadBound() {
  Profile p = NewProfile();
  for (uint64_t i = 0; i < 5; ++i) {
    const uint64_t b = i * 400'000;
    AddRange(&p, b, b + 380'000, "matmul_add");
    AddApi(&p, b + 100'000, b + 110'000, 2 * i + 1, kLaunch);
    AddKernel(&p, b + 115'000, b + 117'000, 2 * i + 1, "gemm");
    AddApi(&p, b + 300'000, b + 310'000, 2 * i + 2, kLaunch);
    AddKernel(&p, b + 312'000, b + 314'000, 2 * i + 2, "add");
  }
  return p;
}

// Window (no steps): first launch 100 us .. last GPU end 1600 + 314 = 1914 us: 1,814,000 ns.
// GPU busy: 10 kernels x 2 us = 20,000 ns = 1.1025 % (< 5 %: high). Host busy: the ranges inside
// the window, [100, 380) 280 + 3 x 380 + [1600, 1914) 314 = 1,734,000 ns = 95.59 %. The table's
// footers: Self CPU total = the five ranges 5 x 380 us = 1,900,000; Self CUDA total 20,000.
TEST(FindingsBound, SeedsSmallMatmulIsOverheadBoundNeverComputeBound) {
  const std::vector<Finding> fs = FindFindings(OverheadBound());
  const Finding* f = Find(fs, "overhead_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_EQ(Ns(*f, "window_us"), 1'814'000u);
  EXPECT_EQ(Ns(*f, "gpu_busy_us"), 20'000u);
  EXPECT_NEAR(X(*f, "gpu_busy_pct"), 100.0 * 20'000 / 1'814'000, 1e-9);
  EXPECT_EQ(Ns(*f, "host_busy_us"), 1'734'000u);
  EXPECT_NEAR(X(*f, "host_busy_pct"), 100.0 * 1'734'000 / 1'814'000, 1e-9);
  EXPECT_EQ(Ns(*f, "kernels"), 10u);
  EXPECT_EQ(Ns(*f, "self_cpu_total_us"), 1'900'000u);
  EXPECT_EQ(Ns(*f, "self_cuda_total_us"), 20'000u);
  EXPECT_EQ(f->title,
            "Overhead-bound: GPU 0 is busy 1.1% of the 1.814ms window while the host is busy "
            "95.6% (Self CPU total 1.900ms, Self CUDA total 20.000us)");
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->ts_ns, 100'000u);  // the window, from the trace origin t0
  EXPECT_EQ(f->where->dur_ns, 1'814'000u);
  EXPECT_EQ(Find(fs, "compute_bound"), nullptr);
  EXPECT_EQ(Find(fs, "sync"), nullptr);  // no synchronization in this run
  EXPECT_EQ(Find(fs, "pageable_memcpy"), nullptr);
  EXPECT_EQ(Find(fs, "kernel_spread"), nullptr);  // 5 identical gemms, 5 identical adds
}

// The same run's GPU gaps of >= 100 us (us): inside each iteration [117, 312) = 195 (x5), between
// iterations [314, 515) = 201 (x4); [100, 115) is 15 (not counted); the last kernel ends the
// window. 9 gaps, 975 + 804 = 1779 us = 98.07 % of 1814: high. The largest (201, first of the
// ties) is [314, 515): the host's own time there is matmul_add #0 [314, 380) 66 + matmul_add #1
// [400, 515) 115 minus its launch [500, 510) 10 = 171 us, and that launch 10 us.
TEST(FindingsGpuIdle, GapsBetweenTinyKernelsNameTheHostWork) {
  const std::vector<Finding> fs = FindFindings(OverheadBound());
  const Finding* f = Find(fs, "gpu_idle");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_EQ(Ns(*f, "gaps"), 9u);
  EXPECT_EQ(Ns(*f, "idle_us"), 1'779'000u);
  EXPECT_EQ(Ns(*f, "largest_gap_us"), 201'000u);
  ASSERT_EQ(f->places.size(), 3u);
  EXPECT_EQ(f->where->ts_ns, 314'000u);
  EXPECT_EQ(f->where->dur_ns, 201'000u);
  EXPECT_EQ(f->where->device, 0u);
  EXPECT_EQ(f->where->context,
            (std::vector<std::string>{"matmul_add on thread 1 (171.000us of the gap)",
                                      "cudaLaunchKernel on thread 1 (10.000us of the gap)"}));
  EXPECT_EQ(f->places[1].ts_ns, 714'000u);  // the next 201 us gap
}

// The seeds' 4096 case in three steps (#2, #3, #4) of 5 ms on thread 1 (us after t0 + 5000 i):
//   range matmul_add [0, 200); cudaLaunchKernel [100, 110) -> gemm [150, 4950); and one
//   cudaDeviceSynchronize [14900, 14950) in the last step.
Profile ComputeBound() {
  Profile p = NewProfile();
  for (uint32_t i = 0; i < 3; ++i) {
    const uint64_t b = i * 5'000'000ull;
    p.steps.push_back({t0 + b, t0 + b + 5'000'000, 2 + i, kTid});
    AddRange(&p, b, b + 200'000, "matmul_add");
    AddApi(&p, b + 100'000, b + 110'000, i + 1, kLaunch);
    AddKernel(&p, b + 150'000, b + 4'950'000, i + 1, "gemm");
  }
  AddApi(&p, 14'900'000, 14'950'000, 10, kDeviceSync);
  return p;
}

// Window = the steps, [0, 15 ms). GPU busy 3 x 4.8 ms = 14.4 ms = 96 %: compute_bound, at
// step 2. GPU gaps >= 100 us: [0, 150) 150, [4950, 5150) 200, [9950, 10150) 200 = 550 us =
// 3.67 % (< 5 %): no gpu_idle. The one sync blocks 50 us = 0.33 % (< 1 %, 1 call < 10): no sync.
// Self CPU total: the three steps' 5 ms each = 15 ms (the ranges and calls nest in them).
TEST(FindingsBound, SeedsLargeMatmulIsComputeBoundNeverOverheadBound) {
  const std::vector<Finding> fs = FindFindings(ComputeBound());
  const Finding* f = Find(fs, "compute_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(Ns(*f, "window_us"), 15'000'000u);
  EXPECT_EQ(Ns(*f, "gpu_busy_us"), 14'400'000u);
  EXPECT_NEAR(X(*f, "gpu_busy_pct"), 96.0, 1e-9);
  EXPECT_EQ(Ns(*f, "self_cuda_total_us"), 14'400'000u);
  EXPECT_EQ(Ns(*f, "self_cpu_total_us"), 15'000'000u);
  EXPECT_EQ(f->where->step, 2u);
  EXPECT_EQ(f->where->ts_ns, 0u);
  EXPECT_EQ(f->title,
            "Compute-bound: GPU 0 is busy 96.0% of the 15.000ms window (Self CUDA total "
            "14.400ms, Self CPU total 15.000ms)");
  EXPECT_EQ(Find(fs, "overhead_bound"), nullptr);
  EXPECT_EQ(Find(fs, "gpu_idle"), nullptr);
  EXPECT_EQ(Find(fs, "sync"), nullptr);
  EXPECT_EQ(fs.size(), 1u);
}

// "The GPU waits for the DataLoader": two steps (#1, #2) of 10 ms, each (ms after 10 i):
//   range load_batch [0, 6); cudaLaunchKernel [6, 6.01) -> train [6.02, 10).
// The collection started 1 ms before t0, so the trace origin is t0 - 1 ms.
Profile WaitsForData() {
  Profile p = NewProfile();
  p.info.start_ns = t0 - 1'000'000;
  for (uint32_t i = 0; i < 2; ++i) {
    const uint64_t b = i * 10'000'000ull;
    p.steps.push_back({t0 + b, t0 + b + 10'000'000, 1 + i, kTid});
    AddRange(&p, b, b + 6'000'000, "load_batch");
    AddApi(&p, b + 6'000'000, b + 6'010'000, i + 1, kLaunch);
    AddKernel(&p, b + 6'020'000, b + 10'000'000, i + 1, "train");
  }
  return p;
}

// Window [0, 20 ms). Gaps: [0, 6.02) and [10, 16.02) ms, 6.02 ms each: 12.04 ms = 60.2 %: high.
// The largest (the first of the ties) is in step 1 at 1 ms from the origin, the host's time there
// load_batch 6 ms and the launch 10 us. GPU busy 2 x 3.98 ms = 39.8 %: neither bound.
TEST(FindingsGpuIdle, GapWhileTheHostLoadsABatch) {
  const Profile p = WaitsForData();
  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "gpu_idle");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_EQ(Ns(*f, "gaps"), 2u);
  EXPECT_EQ(Ns(*f, "idle_us"), 12'040'000u);
  EXPECT_NEAR(X(*f, "idle_pct"), 60.2, 1e-9);
  EXPECT_EQ(Ns(*f, "largest_gap_us"), 6'020'000u);
  ASSERT_EQ(f->places.size(), 2u);
  EXPECT_EQ(f->where->step, 1u);
  EXPECT_EQ(f->where->dur_ns, 6'020'000u);
  // ts is relative to the trace's origin, as trace.json's ts.
  EXPECT_EQ(f->where->ts_ns, t0 - TracePlan(p).base_ns());
  EXPECT_EQ(f->where->ts_ns, 1'000'000u);
  EXPECT_EQ(f->where->context,
            (std::vector<std::string>{"load_batch on thread 1 (6.000ms of the gap)",
                                      "cudaLaunchKernel on thread 1 (10.000us of the gap)"}));
  EXPECT_EQ(f->places[1].step, 2u);
  EXPECT_EQ(f->title,
            "GPU 0 idle 60.2% of the window in 2 gaps of 100.000us or more; the largest, "
            "6.020ms at 1.000ms, while the host ran load_batch on thread 1 (6.000ms of the gap)");
  EXPECT_EQ(Find(fs, "overhead_bound"), nullptr);
  EXPECT_EQ(Find(fs, "compute_bound"), nullptr);
}

// A step with .item()-style syncs (us after t0), one thread:
//   range train_step [0, 1000); cudaLaunchKernel [10, 20) -> k [30, 430);
//   range aten::item [25, 450) holding cudaStreamSynchronize [30, 440) (corr 2, and CUPTI's
//   Stream Sync record of the same call); cudaMemcpy [500, 600) -> DtoH to pageable, synchronous
//   [510, 590); cudaMemcpyAsync [700, 710) -> DtoD [720, 800), which blocks nothing.
Profile Syncs() {
  Profile p = NewProfile();
  AddRange(&p, 0, 1'000'000, "train_step");
  AddApi(&p, 10'000, 20'000, 1, kLaunch);
  AddKernel(&p, 30'000, 430'000, 1, "k");
  AddRange(&p, 25'000, 450'000, "aten::item");
  AddApi(&p, 30'000, 440'000, 2, kStreamSync);
  p.syncs.push_back({t0 + 30'000, t0 + 440'000, 2, 7, 1, SyncKind::kStreamSynchronize, {}});
  AddApi(&p, 500'000, 600'000, 3, kMemcpySync);
  AddCopy(&p, 510'000, 590'000, 3, CopyKind::kDtoH, MemKind::kDevice, MemKind::kPageable, 4096,
       false);
  AddApi(&p, 700'000, 710'000, 4, kMemcpyAsync);
  AddCopy(&p, 720'000, 800'000, 4, CopyKind::kDtoD, MemKind::kDevice, MemKind::kDevice, 4096, true);
  return p;
}

// Window [10, 800) us = 790 us. Blocking: the stream sync 410 us + the cudaMemcpy 100 us = 510 us
// (the Sync record is the same call, not counted twice; the DtoD async copy is not blocking),
// 510 / 790 = 64.56 %: high. The longest: cudaStreamSynchronize at 30 us for 410 us, inside
// aten::item inside train_step. The synchronous DtoH is no pageable_memcpy (not async).
TEST(FindingsSync, StreamSyncAndSynchronousCopyWithTheirRanges) {
  const std::vector<Finding> fs = FindFindings(Syncs());
  const Finding* f = Find(fs, "sync");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_EQ(Ns(*f, "calls"), 2u);
  EXPECT_EQ(Ns(*f, "synchronize_calls"), 1u);
  EXPECT_EQ(Ns(*f, "synchronous_copies"), 1u);
  EXPECT_EQ(Ns(*f, "host_blocked_us"), 510'000u);
  EXPECT_NEAR(X(*f, "host_blocked_pct"), 100.0 * 510 / 790, 1e-9);
  EXPECT_EQ(Ns(*f, "longest_us"), 410'000u);
  ASSERT_EQ(f->places.size(), 2u);
  EXPECT_EQ(f->where->name, "cudaStreamSynchronize");
  EXPECT_EQ(f->where->thread, kTid);
  EXPECT_EQ(f->where->ts_ns, 30'000u);
  EXPECT_EQ(f->where->context, (std::vector<std::string>{"aten::item", "train_step"}));
  EXPECT_EQ(f->places[1].name, "cudaMemcpy");
  EXPECT_EQ(f->places[1].context, (std::vector<std::string>{"train_step"}));
  EXPECT_EQ(f->title,
            "2 host-blocking synchronizations (510.000us, the host blocked 64.6% of the window); "
            "the longest, cudaStreamSynchronize for 410.000us in aten::item");
  EXPECT_EQ(Find(fs, "pageable_memcpy"), nullptr);
}

// API names as CUPTI spells them for the per-thread default stream count as the base call.
TEST(FindingsSync, PerThreadStreamSpellingIsASync) {
  Profile p = Syncs();
  p.api_names[1].name = p.strings.Intern("cudaStreamSynchronize_ptsz");
  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "sync");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Ns(*f, "synchronize_calls"), 1u);
}

// Copies (us after t0): cudaMemcpyAsync [0, 50) -> HtoD pageable 1,000,000 B [20, 120);
// range load_batch [190, 235) holding cudaMemcpyAsync [200, 230) -> HtoD pageable 2,000,000 B
// [240, 440); cudaMemcpyAsync [500, 510) -> HtoD pinned 4,000,000 B [520, 600) (not pageable).
// Window [0, 600) us. Pageable: 2 copies, 3,000,000 B, 300 us on the GPU = 50 %: warn; the
// host spent 50 + 30 = 80 us in their calls. The longest: the second, in load_batch.
TEST(FindingsPageable, AsyncCopiesFromPageableMemoryButNotPinnedOnes) {
  Profile p = NewProfile();
  AddApi(&p, 0, 50'000, 1, kMemcpyAsync);
  AddCopy(&p, 20'000, 120'000, 1, CopyKind::kHtoD, MemKind::kPageable, MemKind::kDevice, 1'000'000,
       true);
  AddRange(&p, 190'000, 235'000, "load_batch");
  AddApi(&p, 200'000, 230'000, 2, kMemcpyAsync);
  AddCopy(&p, 240'000, 440'000, 2, CopyKind::kHtoD, MemKind::kPageable, MemKind::kDevice, 2'000'000,
       true);
  AddApi(&p, 500'000, 510'000, 3, kMemcpyAsync);
  AddCopy(&p, 520'000, 600'000, 3, CopyKind::kHtoD, MemKind::kPinned, MemKind::kDevice, 4'000'000,
       true);
  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "pageable_memcpy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_EQ(Ns(*f, "copies"), 2u);
  EXPECT_EQ(Ns(*f, "bytes"), 3'000'000u);
  EXPECT_EQ(Ns(*f, "copy_time_us"), 300'000u);
  EXPECT_NEAR(X(*f, "copy_time_pct"), 50.0, 1e-9);
  EXPECT_EQ(Ns(*f, "host_time_us"), 80'000u);
  EXPECT_EQ(f->where->name, "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(f->where->ts_ns, 240'000u);
  EXPECT_EQ(f->where->stream, 7u);
  EXPECT_EQ(f->where->thread, kTid);
  EXPECT_EQ(f->where->context, (std::vector<std::string>{"load_batch"}));
  EXPECT_EQ(Find(fs, "sync"), nullptr);  // async copies block nothing here

  // Only the pinned copy: nothing to say.
  p.memcpys.erase(p.memcpys.begin(), p.memcpys.begin() + 2);
  const std::vector<Finding> pinned_only = FindFindings(p);
  EXPECT_EQ(Find(pinned_only, "pageable_memcpy"), nullptr);
}

// Kernels back to back every 2 ms on stream 7 (no launches recorded):
//   gemm x6: 500, 520, 580, 600, 620, 1500 us. Median (580 + 600) / 2 = 590; max 1500 =
//     2.54x; p95 = the ceil(5.7) = 6th smallest = 1500; mean 4320 / 6 = 720; min 500; sample
//     stddev: squared deviations from 720 sum to 48400 + 40000 + 19600 + 14400 + 10000 + 608400
//     = 740800 us^2, / 5 = 148160, sqrt = 384.9156 us. 1500 - 590 >= 20 us: kernel_spread.
//   add x6: 100 us x5 and 110 us: max 1.1x its median: uniform, nothing.
//   tiny x5: 2, 2, 2, 2, 10 us: 5x, but only 8 us above the median (< 20 us): nothing.
//   rare x4: 100, 100, 100, 900 us: four instances (< 5): nothing.
TEST(FindingsSpread, KernelWhoseSlowestInstanceIsFarAboveItsMedian) {
  Profile p = NewProfile();
  uint64_t t = 0;
  uint32_t corr = 0;
  const auto run = [&](const char* name, std::vector<uint64_t> us) {
    for (uint64_t d : us) {
      AddKernel(&p, t, t + d * 1000, ++corr, name);
      t += 2'000'000;
    }
  };
  run("gemm", {500, 520, 580, 600, 620, 1500});
  run("add", {100, 100, 100, 100, 100, 110});
  run("tiny", {2, 2, 2, 2, 10});
  run("rare", {100, 100, 100, 900});
  const std::vector<Finding> fs = FindFindings(p);
  std::vector<const Finding*> spread;
  for (const Finding& f : fs) {
    if (f.id == "kernel_spread") spread.push_back(&f);
  }
  ASSERT_EQ(spread.size(), 1u);
  const Finding& f = *spread[0];
  EXPECT_EQ(f.Get("kernel")->text, "gemm");
  EXPECT_EQ(Ns(f, "instances"), 6u);
  EXPECT_EQ(Ns(f, "median_us"), 590'000u);
  EXPECT_EQ(Ns(f, "min_us"), 500'000u);
  EXPECT_EQ(Ns(f, "max_us"), 1'500'000u);
  EXPECT_EQ(Ns(f, "p95_us"), 1'500'000u);
  EXPECT_EQ(Ns(f, "mean_us"), 720'000u);
  EXPECT_NEAR(static_cast<double>(Ns(f, "stddev_us")), 384'915.6, 1.0);
  EXPECT_NEAR(X(f, "max_factor"), 1500.0 / 590.0, 1e-9);
  EXPECT_EQ(f.where->ts_ns, 10'000'000u);  // the sixth gemm, at 5 x 2 ms
  EXPECT_EQ(f.where->stream, 7u);
  EXPECT_EQ(f.title,
            "gemm: the slowest of 6 instances took 1.500ms, 2.54x its median 590.000us (p95 "
            "1.500ms, mean 720.000us)");
}

// Two GPUs (us after t0): device 0 runs k0 [0, 100) and a memset [990, 1000); device 1 runs k1
// [0, 950). Window [0, 1000). The busiest device is 1, 950 / 1000 = 95 %: compute_bound on GPU 1.
// Device 0's gap [100, 990) = 890 us = 89 %: gpu_idle on GPU 0 (high); device 1's only gap,
// [950, 1000), is 50 us: no gpu_idle for it.
TEST(FindingsBound, BusiestDeviceDecidesAndEachDeviceHasItsOwnGaps) {
  Profile p = NewProfile();
  LaunchConfig lc1 = p.launch_configs[0];
  lc1.device_id = 1;
  p.launch_configs.push_back(lc1);
  AddKernel(&p, 0, 100'000, 1, "k0");
  AddKernel(&p, 0, 950'000, 2, "k1");
  p.kernels.back().launch_config = 1;
  Memset ms{};
  ms.start_ns = t0 + 990'000;
  ms.end_ns = t0 + 1'000'000;
  ms.device_id = 0;
  p.memsets.push_back(ms);
  const std::vector<Finding> fs = FindFindings(p);
  const Finding* bound = Find(fs, "compute_bound");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(Ns(*bound, "device"), 1u);
  EXPECT_EQ(Ns(*bound, "gpu_busy_us"), 950'000u);
  std::vector<const Finding*> idle;
  for (const Finding& f : fs) {
    if (f.id == "gpu_idle") idle.push_back(&f);
  }
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(Ns(*idle[0], "device"), 0u);
  EXPECT_EQ(Ns(*idle[0], "idle_us"), 890'000u);
  EXPECT_EQ(idle[0]->severity, Severity::kHigh);
}

// CUPTI's SYNCHRONIZATION records whose API calls were not recorded (an API filter) still count,
// by time, without a thread: 10 event syncs of 5 us at 100, 200, ... 1000 us after t0 beside a
// kernel [0, 1100). 10 calls (>= kSyncManyCalls), 50 us = 4.5 % of the 1100 us window: warn.
TEST(FindingsSync, SyncRecordsWithoutTheirCallsCountByTime) {
  Profile p = NewProfile();
  AddKernel(&p, 0, 1'100'000, 1, "k");
  for (uint64_t i = 1; i <= 10; ++i) {
    p.syncs.push_back({t0 + i * 100'000, t0 + i * 100'000 + 5'000, 100 + static_cast<uint32_t>(i),
                       0xffffffffu, 1, SyncKind::kEventSynchronize, {}});
  }
  // A stream-wait-event blocks no host thread: not counted.
  p.syncs.push_back({t0 + 50'000, t0 + 60'000, 200, 7, 1, SyncKind::kStreamWaitEvent, {}});
  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "sync");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_EQ(Ns(*f, "calls"), 10u);
  EXPECT_EQ(Ns(*f, "host_blocked_us"), 50'000u);
  EXPECT_EQ(f->where->name, "Event Sync");
  EXPECT_FALSE(f->where->thread.has_value());
}

// Step 0 [0, 1000) us holds a launch, its kernel and nine 1 us cudaStreamSynchronize calls (9 <
// kSyncManyCalls, 0.9 % < kSyncMinShare: no finding); after it, cudaDeviceSynchronize
// [1000.2, 1001) (correlation 9). CUPTI's record of that sync, stamped by CUPTI's clock, starts
// at 999.9 us, inside the step: it is the call's record, outside the window, not a tenth sync
// (seen on the stand-in: its record's clock runs a fraction of a us ahead of the host's).
TEST(FindingsSync, SyncRecordOfACallAfterTheWindowIsNotCounted) {
  Profile p = NewProfile();
  p.steps.push_back({t0, t0 + 1'000'000, 0, kTid});
  AddApi(&p, 10'000, 20'000, 1, kLaunch);
  AddKernel(&p, 30'000, 900'000, 1, "k");
  for (uint32_t i = 0; i < 9; ++i) {
    AddApi(&p, 100'000 + i * 50'000, 101'000 + i * 50'000, 20 + i, kStreamSync);
  }
  AddApi(&p, 1'000'200, 1'001'000, 9, kDeviceSync);
  p.syncs.push_back({t0 + 999'900, t0 + 1'000'900, 9, 0xffffffffu, 1,
                     SyncKind::kContextSynchronize, {}});
  EXPECT_EQ(Find(FindFindings(p), "sync"), nullptr);
}

// An NVTX-only profile (no GPU data): no verdict about the GPU at all.
// 60 launches 10 us apart: each cudaLaunchKernel takes 5 us, its kernel starts 6 us after the
// call and runs 2 us. All 60 are shorter than their call (100%, >= 50 and >= 50%): median kernel
// 2 us, median call 5 us, median launch-to-start 6 us. With 20 us kernels (longer than the call)
// the same launches are not launch-bound: no short_kernels.
TEST(FindingsShortKernels, KernelsShorterThanTheirLaunchCallsButNotLongOnes) {
  const auto profile = [](uint64_t kernel_ns) {
    Profile p = NewProfile();
    for (uint32_t i = 0; i < 60; ++i) {
      const uint64_t t = 1'000'000 + i * 10'000ull;
      AddApi(&p, t, t + 5'000, 100 + i, kLaunch);
      AddKernel(&p, t + 6'000, t + 6'000 + kernel_ns, 100 + i, "_Z4tinyv");
    }
    return p;
  };
  const std::vector<Finding> fs = FindFindings(profile(2'000));
  const Finding* f = Find(fs, "short_kernels");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->Get("kernels")->n, 60u);
  EXPECT_EQ(f->Get("short_kernels")->n, 60u);
  EXPECT_DOUBLE_EQ(f->Get("short_kernels_pct")->x, 100.0);  // percent
  EXPECT_EQ(f->Get("median_kernel_us")->n, 2'000u);
  EXPECT_EQ(f->Get("median_launch_call_us")->n, 5'000u);
  EXPECT_EQ(f->Get("median_launch_to_start_us")->n, 6'000u);
  EXPECT_EQ(Find(FindFindings(profile(20'000)), "short_kernels"), nullptr);
}

// Steps of 10, 2, 2 and 2 ms: the first is 5.00x the median of the other three (2 ms) and 8 ms
// more; its only launch starts 6 ms into it, so the dead window is 6 ms. Four steps of 2 ms, or a
// first step of 3 ms (1.5x), are no cold start.
TEST(FindingsColdStart, FirstStepFarSlowerThanTheRestWithItsDeadWindow) {
  const auto profile = [](uint64_t first_ms) {
    Profile p = NewProfile();
    uint64_t t = 0;
    for (uint32_t n = 0; n < 4; ++n) {
      const uint64_t len = (n == 0 ? first_ms : 2) * 1'000'000;
      p.steps.push_back({t0 + t, t0 + t + len, n, kTid});
      t += len;
    }
    AddApi(&p, 6'000'000, 6'010'000, 5, kLaunch);
    AddKernel(&p, 6'020'000, 6'100'000, 5, "_Z4workv");
    return p;
  };
  const std::vector<Finding> fs = FindFindings(profile(10));
  const Finding* f = Find(fs, "cold_start");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->Get("step")->n, 0u);
  EXPECT_EQ(f->Get("step_us")->n, 10'000'000u);
  EXPECT_EQ(f->Get("median_other_steps_us")->n, 2'000'000u);
  EXPECT_DOUBLE_EQ(f->Get("factor")->x, 5.0);
  EXPECT_EQ(f->Get("dead_window_us")->n, 6'000'000u);
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->step, 0u);
  EXPECT_EQ(f->where->dur_ns, 10'000'000u);
  EXPECT_EQ(Find(FindFindings(profile(2)), "cold_start"), nullptr);
  EXPECT_EQ(Find(FindFindings(profile(3)), "cold_start"), nullptr);
}

// The same slow first step, in a window that starts at step 2 (`--wait 1 --warmup 1`: the user
// already left steps out): the advice must not tell them to pass --wait 1, and says the window
// already starts at step 2. On a whole run (first_step 0) it does advise --wait 1. Without GPU
// work (a CPU-only run) it speaks of no CUDA context.
TEST(FindingsColdStart, AdviceNeverAsksForWait1WhenTheWindowAlreadySkippedSteps) {
  const auto profile = [](uint32_t first_step, bool gpu) {
    Profile p = NewProfile();
    p.info.first_step = first_step;
    p.info.last_step = first_step + 3;
    uint64_t t = 0;
    for (uint32_t n = 0; n < 4; ++n) {
      const uint64_t len = (n == 0 ? 10 : 2) * 1'000'000;
      p.steps.push_back({t0 + t, t0 + t + len, first_step + n, kTid});
      t += len;
    }
    if (gpu) {
      AddApi(&p, 6'000'000, 6'010'000, 5, kLaunch);
      AddKernel(&p, 6'020'000, 6'100'000, 5, "_Z4workv");
    }
    return p;
  };
  for (bool gpu : {true, false}) {
    SCOPED_TRACE(gpu ? "gpu" : "cpu only");
    const std::vector<Finding> window = FindFindings(profile(2, gpu));
    const Finding* f = Find(window, "cold_start");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->Get("step")->n, 2u);
    EXPECT_EQ(f->advice.find("--wait 1"), std::string::npos) << f->advice;
    EXPECT_NE(f->advice.find("already starts at step 2"), std::string::npos) << f->advice;
    EXPECT_EQ(f->advice.find("CUDA context") == std::string::npos, !gpu) << f->advice;
    const std::vector<Finding> whole = FindFindings(profile(0, gpu));
    const Finding* g = Find(whole, "cold_start");
    ASSERT_NE(g, nullptr);
    EXPECT_NE(g->advice.find("--wait 1"), std::string::npos) << g->advice;
  }
}

TEST(FindingsOutput, NoGpuDataNoFindingsAndTheOutputsSaySo) {
  Profile p = NewProfile();
  p.info.end_ns = t0 + 1'000'000;
  AddRange(&p, 0, 900'000, "train_step");
  const std::vector<Finding> fs = FindFindings(p);
  EXPECT_TRUE(fs.empty());
  EXPECT_EQ(FormatFindingsSummary(fs), "Findings: none\n");
  EXPECT_EQ(nlohmann::json::parse(FormatFindingsJson(fs)),
            nlohmann::json::parse(R"({"findings": []})"));
  EXPECT_EQ(FormatFindingsText(fs).rfind("Findings: none", 0), 0u);
}

// The JSON schema of issue 13 on the data-loader profile, times in us from the trace origin.
TEST(FindingsOutput, JsonTextAndSummary) {
  const std::vector<Finding> fs = FindFindings(WaitsForData());
  const nlohmann::json doc = nlohmann::json::parse(FormatFindingsJson(fs));
  ASSERT_EQ(doc.at("findings").size(), fs.size());
  const nlohmann::json& f = doc["findings"][0];
  EXPECT_EQ(f.at("id"), "gpu_idle");
  EXPECT_EQ(f.at("severity"), "high");
  EXPECT_EQ(f.at("evidence").at("idle_us"), 12040.0);
  EXPECT_EQ(f["evidence"].at("idle_pct"), 60.2);
  EXPECT_EQ(f["evidence"].at("gaps"), 2);
  EXPECT_EQ(f.at("where").at("step"), 1);
  EXPECT_EQ(f["where"].at("ts_us"), 1000.0);
  EXPECT_EQ(f["where"].at("dur_us"), 6020.0);
  EXPECT_EQ(f["where"].at("device"), 0);
  EXPECT_EQ(f["where"].at("context")[0], "load_batch on thread 1 (6.000ms of the gap)");
  EXPECT_EQ(f.at("places").size(), 2u);
  EXPECT_FALSE(f.at("advice").get<std::string>().empty());
  EXPECT_FALSE(f.at("title").get<std::string>().empty());

  const std::string text = FormatFindingsText(fs);
  EXPECT_NE(text.find("[high] gpu_idle: GPU 0 idle 60.2%"), std::string::npos) << text;
  EXPECT_NE(text.find("idle_us=12040.0"), std::string::npos) << text;
  EXPECT_NE(text.find("  at: ts 1000.0us, dur 6020.0us, step 1, device 0 | load_batch"),
            std::string::npos)
      << text;
  EXPECT_EQ(FormatFindingsSummary(fs).rfind("Findings:\n  high  gpu_idle: GPU 0 idle 60.2%", 0),
            0u);
}

// Findings are ordered by estimated saving (largest first; none last), then severity, then id.
TEST(FindingsOutput, OrderedBySavingThenSeverityThenId) {
  const std::vector<Finding> fs = FindFindings(Syncs());
  ASSERT_FALSE(fs.empty());
  for (size_t i = 1; i < fs.size(); ++i) {
    const uint64_t before = fs[i - 1].saving ? fs[i - 1].saving->run_ns : 0;
    const uint64_t after = fs[i].saving ? fs[i].saving->run_ns : 0;
    EXPECT_GE(before, after);
    if (before == after) {
      EXPECT_GE(static_cast<int>(fs[i - 1].severity), static_cast<int>(fs[i].severity));
    }
  }
}

}  // namespace
}  // namespace gprof
