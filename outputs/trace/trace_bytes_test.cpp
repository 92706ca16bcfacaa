// Unit test: trace.json bytes per launch on bench figure 4c's best case (bench/bench_profile.h:
// one 47-character kernel name, one launch configuration, one thread, one stream), counted, not
// timed. The expected events are written out by hand below; their sizes are what a launch costs.
#include <gtest/gtest.h>

#include <string>

#include "outputs/trace/trace_json.h"
#include "tests/support/sample_device.h"

namespace gprof {
namespace {

constexpr uint64_t kBase = 1'764'000'000'000'000'000ull;
constexpr uint32_t kPid = 123456;  // a 6-digit Linux pid; the launching thread has the same id

// `n` launches shaped like figure 4c's, at the magnitudes of its 1 M-launch run: 4 s into the
// trace (7 integer digits of microseconds), 7-digit correlation ids, ns-precise times. Launch i:
// API call at 4,000,000.123 + 5 i us lasting 2.345 us, its kernel 3 us after the call's start
// lasting 4.567 us.
Profile BestCaseLaunches(int n) {
  Profile p;
  p.info.pid = kPid;
  p.info.start_ns = kBase;
  p.info.end_ns = kBase + 5'000'000'000ull;
  p.devices.push_back(testing::SampleHopperDevice(&p, "NVIDIA H200", 150ull << 30));
  LaunchConfig lc{};
  lc.grid[0] = 528, lc.grid[1] = lc.grid[2] = 1;
  lc.block[0] = 256, lc.block[1] = lc.block[2] = 1;
  lc.registers_per_thread = 64;
  lc.static_shared_bytes = 49152;
  lc.context_id = 1;
  p.launch_configs.push_back(lc);
  p.api_names.push_back({505, ApiDomain::kRuntime, 0, p.strings.Intern("__cudaLaunchKernel")});
  const StringId name = p.strings.Intern("matmul(float const*, float const*, float*, int)");
  for (int i = 0; i < n; ++i) {
    const uint64_t t = kBase + 4'000'000'123ull + 5'000ull * static_cast<uint64_t>(i);
    const uint32_t corr = 1'000'000u + static_cast<uint32_t>(i);
    p.api_calls.push_back({t, t + 2'345, corr, kPid, 505, ApiDomain::kRuntime, 0, 0});
    p.kernels.push_back({t + 3'000, t + 7'567, corr, name, 0, 7});
  }
  return p;
}

// Launch 0's two entries, each after the ",\n" that separates entries. The ac2g flow from the
// call to its kernel is on the two slices (flow v2): bind_id 2^32 + correlation id =
// 4,294,967,296 + 1,000,000 = 4295967296, "flow_out" on the call, "flow_in" on the kernel. Kernel args: 528 blocks
// on 132 SMs are 4 blocks per SM; 64 registers x 256 threads and 48 KiB of shared memory allow 4
// blocks of 8 warps on an SM of 64 warps: 50 % occupancy.
const char* const kApiEvent =
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"__cudaLaunchKernel\",\"pid\":123456,"
    "\"tid\":123456,\"ts\":4000000.123,\"dur\":2.345,\"bind_id\":4295967296,\"flow_out\":true,"
    "\"args\":{\"correlation\":1000000}}";
const char* const kKernelEvent =
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"matmul(float const*, float const*, float*, "
    "int)\",\"pid\":0,\"tid\":7,\"ts\":4000003.123,\"dur\":4.567,\"bind_id\":4295967296,"
    "\"flow_in\":true,\"args\":{\"correlation\":1000000,"
    "\"External id\":1000000,\"device\":0,\"stream\":7,\"registers per thread\":64,"
    "\"shared memory\":49152,\"blocks per SM\":4,\"est. achieved occupancy %\":50,"
    "\"grid\":[528,1,1],\"block\":[256,1,1]}}";
// No separate flow entries: torch's ac2g "s"/"f" pair cost 93 + 2 and 92 + 2 more.
const char* const kAc2gFlowEntry = "\"cat\":\"ac2g\"";

// Counted from the texts above, separator included: API call 182 + 2, kernel 370 + 2.
constexpr uint64_t kBytesPerLaunch = 556;
// Bench figure 4c's target is 600 bytes per launch; with the flow on the slices this case is
// under it (672 with the "s"/"f" pair). Anything past this ceiling is growth.
constexpr uint64_t kBytesPerLaunchCeiling = 600;

TEST(TraceBytes, BestCaseLaunchIsItsTwoHandWrittenEvents) {
  const std::string text = FormatTraceJson(BestCaseLaunches(1), "bytes.pt.trace.json");
  for (const char* event : {kApiEvent, kKernelEvent}) {
    EXPECT_NE(text.find(std::string(",\n") + event), std::string::npos) << event;
  }
  EXPECT_EQ(text.find(kAc2gFlowEntry), std::string::npos);
  EXPECT_EQ(std::string(kApiEvent).size() + std::string(kKernelEvent).size() + 2 * 2,
            kBytesPerLaunch);
}

// Bytes per launch: the difference between 1,010 and 10 launches (the document around the events
// is the same in both), divided by 1,000. Deterministic: no clock, no file.
TEST(TraceBytes, BestCaseBytesPerLaunchAtMostTheCeiling) {
  const uint64_t small = FormatTraceJson(BestCaseLaunches(10), "bytes.pt.trace.json").size();
  const uint64_t big = FormatTraceJson(BestCaseLaunches(1010), "bytes.pt.trace.json").size();
  ASSERT_EQ((big - small) % 1000, 0u);
  const uint64_t per_launch = (big - small) / 1000;
  EXPECT_EQ(per_launch, kBytesPerLaunch);
  EXPECT_LE(per_launch, kBytesPerLaunchCeiling);
}

}  // namespace
}  // namespace gprof
