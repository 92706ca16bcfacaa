// Unit tests of the copy, kernel and profiler-cost findings (findings_copies.cpp,
// findings_kernels.cpp, findings_overhead.cpp; docs/FINDINGS.md): serialized_copy,
// gemm_bias_copy, heavy_kernel, profiler_overhead, and gpu_idle naming a CUPTI buffer request.
// One hand-built profile per pattern (times in us after t0 in the comments), evidence derived by
// hand, and the pattern's near misses absent.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_test_util.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: the tests' profile builders

constexpr uint64_t us = 1000;

// Thread kTid, streams 7 and 13:
//   cudaMemcpyAsync [0, 5) -> HtoD pinned, 1 MiB, stream 13 [10, 210)
//   cudaLaunchKernel [20, 25) -> scale, stream 7 [30, 130)          (overlaps the HtoD copy)
//   cudaMemcpyAsync [220, 225) -> DtoH pinned, 2 MiB, stream 13 [230, 430)   (overlaps nothing)
//   cudaLaunchKernel [440, 445) -> scale, stream 13 [450, 1000)
//   cudaMemcpyAsync [500, 505) -> DtoD 4 KiB, stream 13 [1000, 1100)  (device-side: not counted)
// Window (no steps): the first GPU call 0 .. the last GPU end 1100 = 1,100,000 ns. Host-device
// copies: 2 (400 us); serialized: the DtoH one, 200 us = 18.18 % (>= 10 %: warn), 2,097,152 B.
Profile Copies() {
  Profile p = NewProfile();
  AddApi(&p, 0, 5 * us, 1, kMemcpyAsync);
  AddCopy(&p, 10 * us, 210 * us, 1, CopyKind::kHtoD, MemKind::kPinned, MemKind::kDevice, 1 << 20,
          true, 13);
  AddApi(&p, 20 * us, 25 * us, 2, kLaunch);
  AddKernel(&p, 30 * us, 130 * us, 2, "scale", 7);
  AddApi(&p, 220 * us, 225 * us, 3, kMemcpyAsync);
  AddCopy(&p, 230 * us, 430 * us, 3, CopyKind::kDtoH, MemKind::kDevice, MemKind::kPinned, 2 << 20,
          true, 13);
  AddApi(&p, 440 * us, 445 * us, 4, kLaunch);
  AddKernel(&p, 450 * us, 1000 * us, 4, "scale", 13);
  AddApi(&p, 500 * us, 505 * us, 5, kMemcpyAsync);
  AddCopy(&p, 1000 * us, 1100 * us, 5, CopyKind::kDtoD, MemKind::kDevice, MemKind::kDevice, 4096,
          true, 13);
  return p;
}

TEST(FindingsSerializedCopy, CopyOverlappingNoKernelOnAnotherStream) {
  const std::vector<Finding> fs = FindFindings(Copies());
  const Finding* f = Find(fs, "serialized_copy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_EQ(Ns(*f, "copies"), 2u);
  EXPECT_EQ(Ns(*f, "serialized_copies"), 1u);
  EXPECT_EQ(Ns(*f, "serialized_bytes"), 2u << 20);
  EXPECT_EQ(Ns(*f, "serialized_time_us"), 200 * us);
  EXPECT_NEAR(X(*f, "serialized_time_pct"), 100.0 * 200 / 1100, 1e-9);
  EXPECT_EQ(Ns(*f, "copy_time_us"), 400 * us);
  EXPECT_EQ(Ns(*f, "streams"), 1u);
  EXPECT_EQ(Ns(*f, "window_us"), 1100 * us);
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->ts_ns, 230 * us);
  EXPECT_EQ(f->where->dur_ns, 200 * us);
  EXPECT_EQ(f->where->stream, 13u);
  EXPECT_EQ(f->where->thread, kTid);
  EXPECT_EQ(f->where->name, "Memcpy DtoH (Device -> Pinned)");
}

// The same, with a kernel on stream 7 [240, 400) under the DtoH copy: every host-device copy now
// overlaps compute on another stream.
TEST(FindingsSerializedCopy, NoFindingWhenEveryCopyOverlapsCompute) {
  Profile p = Copies();
  AddApi(&p, 235 * us, 238 * us, 6, kLaunch);
  AddKernel(&p, 240 * us, 400 * us, 6, "scale", 7);
  EXPECT_EQ(Find(FindFindings(p), "serialized_copy"), nullptr);
}

// Three addmm ops, b = 0, 200, 400 us:
//   range aten::addmm [b, b+100): cudaMemcpyAsync [b+10, b+15) -> DtoD 32 MiB [b+20, b+53);
//   cudaLaunchKernel [b+16, b+19) -> sm90_xmma_gemm_bf16bf16_bf16f32 [b+53, b+153).
// Near misses: range aten::add [600, 700): a DtoD copy then an elementwise kernel (not a GEMM);
// a DtoD copy at the end of range "first" [800, 820), its GEMM in range "second" [820, 900).
// Found: 3 pairs in 1 op; copies 3 x 33 us = 99 us, 100,663,296 B; GEMMs 300 us; the copies'
// share 99 / 399 = 24.81 %.
TEST(FindingsGemmBiasCopy, DeviceCopyRightBeforeAGemmInTheSameOp) {
  Profile p = NewProfile();
  for (uint32_t i = 0; i < 3; ++i) {
    const uint64_t b = i * 200 * us;
    AddRange(&p, b, b + 100 * us, "aten::addmm");
    AddApi(&p, b + 10 * us, b + 15 * us, 10 * i + 1, kMemcpyAsync);
    AddCopy(&p, b + 20 * us, b + 53 * us, 10 * i + 1, CopyKind::kDtoD, MemKind::kDevice,
            MemKind::kDevice, 32u << 20, true);
    AddApi(&p, b + 16 * us, b + 19 * us, 10 * i + 2, kLaunch);
    AddKernel(&p, b + 53 * us, b + 153 * us, 10 * i + 2, "sm90_xmma_gemm_bf16bf16_bf16f32");
  }
  AddRange(&p, 600 * us, 700 * us, "aten::add");
  AddApi(&p, 610 * us, 615 * us, 41, kMemcpyAsync);
  AddCopy(&p, 620 * us, 630 * us, 41, CopyKind::kDtoD, MemKind::kDevice, MemKind::kDevice, 1 << 20,
          true);
  AddApi(&p, 616 * us, 619 * us, 42, kLaunch);
  AddKernel(&p, 630 * us, 640 * us, 42, "vectorized_elementwise_kernel");
  AddRange(&p, 800 * us, 820 * us, "first");
  AddApi(&p, 805 * us, 810 * us, 51, kMemcpyAsync);
  AddCopy(&p, 820 * us, 830 * us, 51, CopyKind::kDtoD, MemKind::kDevice, MemKind::kDevice, 1 << 20,
          true);
  AddRange(&p, 820 * us, 900 * us, "second");
  AddApi(&p, 825 * us, 830 * us, 52, kLaunch);
  AddKernel(&p, 830 * us, 930 * us, 52, "ampere_sgemm_128x64_nn");

  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "gemm_bias_copy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->Get("op")->text, "aten::addmm");
  EXPECT_EQ(Ns(*f, "occurrences"), 3u);
  EXPECT_EQ(Ns(*f, "ops"), 1u);
  EXPECT_EQ(Ns(*f, "copy_bytes"), 3ull * (32u << 20));
  EXPECT_EQ(Ns(*f, "copy_time_us"), 99 * us);
  EXPECT_EQ(Ns(*f, "gemm_time_us"), 300 * us);
  EXPECT_NEAR(X(*f, "copy_share_pct"), 100.0 * 99 / 399, 1e-9);
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->ts_ns, 20 * us);
  EXPECT_EQ(f->where->dur_ns, 133 * us);  // the copy's start to the GEMM's end
  EXPECT_EQ(f->where->name, "Memcpy DtoD (Device -> Device) + sm90_xmma_gemm_bf16bf16_bf16f32");
  EXPECT_EQ(f->where->context, std::vector<std::string>{"aten::addmm"});
}

TEST(FindingsGemmBiasCopy, NoFindingWithoutADeviceCopyBeforeTheGemm) {
  Profile p = NewProfile();
  AddRange(&p, 0, 100 * us, "aten::mm");
  AddApi(&p, 10 * us, 15 * us, 1, kLaunch);
  AddKernel(&p, 20 * us, 120 * us, 1, "ampere_sgemm_128x64_nn");
  EXPECT_EQ(Find(FindFindings(p), "gemm_bias_copy"), nullptr);
}

// Four iterations, b = 0, 200, 400, 600 us:
//   range aten::mm [b, b+50): cudaOccupancyMaxActiveBlocksPerMultiprocessor [b+5, b+6),
//     cudaLaunchKernel [b+10, b+15) -> ampere_sgemm_128x64_nn [b+20, b+120);
//   range aten::add [b+60, b+80): cudaLaunchKernel [b+65, b+70) -> vectorized_elementwise
//     [b+120, b+122).
// Near miss: range aten::mm [800, 810) with a query but no launch; its next launch is in range
// aten::add [820, 840) (launch [825, 830) -> elementwise [830, 832)): a different op, not heavy.
// Without ranges: a query [1000, 1001) right before cudaLaunchKernel [1002, 1005) ->
// implicit_convolve_sgemm [1010, 1060): heavy.
// Heavy: 5 of 10 launches, 2 kernels, 400 + 50 = 450 us of 410 + 50 = 460 us (97.83 %); the top
// is ampere_sgemm_128x64_nn in aten::mm, 400 us.
TEST(FindingsHeavyKernel, LaunchesAfterAnOccupancyQueryInTheSameOp) {
  Profile p = NewProfile();
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t b = i * 200 * us;
    AddRange(&p, b, b + 50 * us, "aten::mm");
    AddApi(&p, b + 5 * us, b + 6 * us, 100 + i, kOccupancy);
    AddApi(&p, b + 10 * us, b + 15 * us, 10 * i + 1, kLaunch);
    AddKernel(&p, b + 20 * us, b + 120 * us, 10 * i + 1, "ampere_sgemm_128x64_nn");
    AddRange(&p, b + 60 * us, b + 80 * us, "aten::add");
    AddApi(&p, b + 65 * us, b + 70 * us, 10 * i + 2, kLaunch);
    AddKernel(&p, b + 120 * us, b + 122 * us, 10 * i + 2, "vectorized_elementwise_kernel");
  }
  AddRange(&p, 800 * us, 810 * us, "aten::mm");
  AddApi(&p, 802 * us, 803 * us, 200, kOccupancy);
  AddRange(&p, 820 * us, 840 * us, "aten::add");
  AddApi(&p, 825 * us, 830 * us, 50, kLaunch);
  AddKernel(&p, 830 * us, 832 * us, 50, "vectorized_elementwise_kernel");
  AddApi(&p, 1000 * us, 1001 * us, 201, kOccupancy);
  AddApi(&p, 1002 * us, 1005 * us, 60, kLaunch);
  AddKernel(&p, 1010 * us, 1060 * us, 60, "implicit_convolve_sgemm");

  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "heavy_kernel");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(Ns(*f, "heavy_launches"), 5u);
  EXPECT_EQ(Ns(*f, "launches"), 10u);
  EXPECT_EQ(Ns(*f, "heavy_kernels"), 2u);
  EXPECT_EQ(Ns(*f, "heavy_gpu_time_us"), 450 * us);
  EXPECT_NEAR(X(*f, "heavy_gpu_time_pct"), 100.0 * 450 / 460, 1e-9);
  EXPECT_EQ(f->Get("top_kernel")->text, "ampere_sgemm_128x64_nn");
  EXPECT_EQ(f->Get("top_op")->text, "aten::mm");
  EXPECT_EQ(Ns(*f, "top_kernel_time_us"), 400 * us);
  ASSERT_EQ(f->places.size(), 2u);
  EXPECT_EQ(f->places[0].ts_ns, 20 * us);
  EXPECT_EQ(f->places[0].context, (std::vector<std::string>{"aten::mm", "4 launches, 400.000us"}));
  EXPECT_EQ(f->places[1].name, "implicit_convolve_sgemm");
  EXPECT_EQ(f->places[1].context, std::vector<std::string>{"1 launches, 50.000us"});
}

TEST(FindingsHeavyKernel, NoFindingWithoutOccupancyQueries) {
  Profile p = NewProfile();
  AddRange(&p, 0, 50 * us, "aten::mm");
  AddApi(&p, 10 * us, 15 * us, 1, kLaunch);
  AddKernel(&p, 20 * us, 120 * us, 1, "ampere_sgemm_128x64_nn");
  EXPECT_EQ(Find(FindFindings(p), "heavy_kernel"), nullptr);
}

// Ten launches, b = 0, 100, ..., 900 us: cudaLaunchKernel [b, b+10) -> k [b+15, b+100); ranges
// loop [0, 1000) and inner [0, 500) (4 range events). Window 0 .. 1000 us. CUPTI overhead on the
// program thread: buffer requests [200, 250) and [500, 550), a flush [700, 730) (130 us); one
// device-side record (thread 0) is not the program's. Sampled recording: 1,000 ns over 10 API
// calls (100 ns each), 200 ns over 4 range events (50 each): 100 x 10 + 50 x 4 = 1,200 ns.
// Estimated cost 131,200 ns = 13.12 % of the window (>= 5 %: warn), 13,120 ns per GPU call.
Profile Overheads() {
  Profile p = NewProfile();
  for (uint32_t i = 0; i < 10; ++i) {
    const uint64_t b = i * 100 * us;
    AddApi(&p, b, b + 10 * us, i + 1, kLaunch);
    AddKernel(&p, b + 15 * us, b + 100 * us, i + 1, "k");
  }
  AddRange(&p, 0, 1000 * us, "loop");
  AddRange(&p, 0, 500 * us, "inner");
  p.overheads.push_back(
      {t0 + 200 * us, t0 + 250 * us, kTid, OverheadKind::kActivityBufferRequest, {}});
  p.overheads.push_back(
      {t0 + 500 * us, t0 + 550 * us, kTid, OverheadKind::kActivityBufferRequest, {}});
  p.overheads.push_back({t0 + 700 * us, t0 + 730 * us, kTid, OverheadKind::kActivityBuffer, {}});
  p.overheads.push_back({t0 + 100 * us, t0 + 900 * us, 0, OverheadKind::kInstrumentation, {}});
  p.collector_cost.api_samples = 10;
  p.collector_cost.api_sample_ns = 1000;
  p.collector_cost.range_samples = 4;
  p.collector_cost.range_sample_ns = 200;
  p.collector_cost.activity_buffers = 3;
  p.collector_cost.activity_bytes = 12345;
  return p;
}

TEST(FindingsProfilerOverhead, CuptiBufferWorkAndSampledRecordingCost) {
  const std::vector<Finding> fs = FindFindings(Overheads());
  const Finding* f = Find(fs, "profiler_overhead");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_EQ(Ns(*f, "cupti_overhead_us"), 130 * us);
  EXPECT_EQ(Ns(*f, "cupti_buffer_requests"), 2u);
  EXPECT_EQ(Ns(*f, "cupti_buffer_flushes"), 1u);
  EXPECT_EQ(Ns(*f, "cupti_other_overheads"), 0u);
  EXPECT_EQ(Ns(*f, "recording_us"), 1200u);
  EXPECT_EQ(Ns(*f, "recording_per_api_call_us"), 100u);
  EXPECT_EQ(Ns(*f, "recording_per_range_event_us"), 50u);
  EXPECT_EQ(Ns(*f, "api_calls"), 10u);
  EXPECT_EQ(Ns(*f, "range_events"), 4u);
  EXPECT_EQ(Ns(*f, "estimated_cost_us"), 131'200u);
  EXPECT_NEAR(X(*f, "estimated_cost_pct"), 13.12, 1e-9);
  EXPECT_EQ(Ns(*f, "gpu_calls"), 10u);
  EXPECT_EQ(Ns(*f, "per_gpu_call_us"), 13'120u);
  EXPECT_EQ(Ns(*f, "activity_buffers"), 3u);
  EXPECT_EQ(Ns(*f, "activity_bytes"), 12345u);
  EXPECT_EQ(Ns(*f, "gpu_records_lost"), 0u);
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->ts_ns, 200 * us);
  EXPECT_EQ(f->where->dur_ns, 50 * us);
  EXPECT_EQ(f->where->thread, kTid);
  EXPECT_EQ(f->where->name, "CUPTI overhead: activity buffer request");
}

// Without overhead records, recording at 1 ns per call: 14 ns of 1 ms, far below 1 %: nothing.
TEST(FindingsProfilerOverhead, NoFindingWhenTheCostIsNegligibleAndNothingWasLost) {
  Profile p = Overheads();
  p.overheads.clear();
  p.collector_cost.api_sample_ns = 10;
  p.collector_cost.range_sample_ns = 4;
  EXPECT_EQ(Find(FindFindings(p), "profiler_overhead"), nullptr);
}

// Lost records make the finding whatever the cost: 5 dropped by CUPTI, 2 returned unfinished.
TEST(FindingsProfilerOverhead, LostRecordsAreAlwaysReported) {
  Profile p = Overheads();
  p.overheads.clear();
  p.collector_cost = CollectorCost{};
  p.counters.cupti_dropped_records = 5;
  p.counters.gpu_records_incomplete = 2;
  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "profiler_overhead");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_EQ(Ns(*f, "gpu_records_lost"), 7u);
  EXPECT_EQ(Ns(*f, "estimated_cost_us"), 0u);
  EXPECT_FALSE(f->where.has_value());  // no overhead record to point at
}

// cudaLaunchKernel [0, 10) -> k [15, 20); a buffer request on the program thread [30, 330);
// cudaLaunchKernel [340, 350) -> k [355, 360). The gap [20, 355) = 335 us; the host's own time in
// it: the request 300 us, then the launch call 10 us.
TEST(FindingsGpuIdle, GapNamesTheCuptiBufferRequestOnTheProgramThread) {
  Profile p = NewProfile();
  AddApi(&p, 0, 10 * us, 1, kLaunch);
  AddKernel(&p, 15 * us, 20 * us, 1, "k");
  p.overheads.push_back(
      {t0 + 30 * us, t0 + 330 * us, kTid, OverheadKind::kActivityBufferRequest, {}});
  AddApi(&p, 340 * us, 350 * us, 2, kLaunch);
  AddKernel(&p, 355 * us, 360 * us, 2, "k");
  const std::vector<Finding> fs = FindFindings(p);
  const Finding* f = Find(fs, "gpu_idle");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->where.has_value());
  EXPECT_EQ(f->where->dur_ns, 335 * us);
  EXPECT_EQ(f->where->context,
            (std::vector<std::string>{
                "CUPTI overhead: activity buffer request on thread 1 (300.000us of the gap)",
                "cudaLaunchKernel on thread 1 (10.000us of the gap)"}));
}

}  // namespace
}  // namespace gprof
