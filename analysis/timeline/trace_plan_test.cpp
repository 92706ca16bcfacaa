// Unit tests of the TracePlan's event list (trace_plan.h) on a profile built by hand: every record
// is one event, in trace order, with the ac2g flows beside it (not events), and the list is
// allocated once at its final size (planning's largest allocation: 32 bytes per event).
#include "analysis/timeline/trace_plan.h"

#include <gtest/gtest.h>

#include <vector>

namespace gprof {
namespace {

constexpr uint64_t kBase = 1'700'000'000'000'000'000ull;
constexpr uint32_t kTid = 1;

// One step [0, 100) us on thread kTid, a range "work" [5, 60) us; six launches, each 2 us of API
// call from 10 + 8k us (correlation 100 + k), their kernels on stream 7 (even k) and stream 8
// (odd k), 3 us each from 40 + 8k us, so the two streams' kernels interleave in time; one
// allocation at 1 us and its free at 90 us on device 0.
Profile HandBuilt() {
  Profile p;
  p.info.pid = 4242;
  p.info.start_ns = kBase;
  p.threads.push_back({kTid, p.strings.Intern("main")});
  p.devices.push_back({0, p.strings.Intern("GPU"), 0, 9, 0, 132, 1024, 2048, 65536, 65536, 49152,
                       233472, 32});
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.launch_configs.push_back({});
  p.steps.push_back({kBase, kBase + 100'000, 1, kTid});
  p.ranges.push_back({kBase + 5'000, kBase + 60'000, p.strings.Intern("work"), kTid, 0, 0, 0});
  for (uint32_t k = 0; k < 6; ++k) {
    const uint64_t call = kBase + 10'000 + 8'000 * k;
    p.api_calls.push_back({call, call + 2'000, 100 + k, kTid, 211, ApiDomain::kRuntime, 0, 0});
    const uint64_t run = kBase + 40'000 + 8'000 * k;
    p.kernels.push_back({run, run + 3'000, 100 + k, p.strings.Intern("_Z1kv"), 0,
                         k % 2 == 0 ? 7u : 8u});
  }
  MemoryOp alloc{};
  alloc.ts_ns = kBase + 1'000;
  alloc.address = 0x1000;
  alloc.bytes = 4096;
  alloc.stream_id = 0xffffffff;
  alloc.op = MemoryOpKind::kAlloc;
  alloc.mem_kind = MemKind::kDevice;
  MemoryOp free = alloc;
  free.ts_ns = kBase + 90'000;
  free.op = MemoryOpKind::kFree;
  p.memory_ops = {alloc, free};
  return p;
}

TEST(TracePlan, EveryRecordIsOneEventInTraceOrderAndTheListIsAllocatedOnce) {
  const Profile p = HandBuilt();
  const TracePlan plan(p);
  const std::vector<PlannedEvent>& events = plan.events();
  // By hand: 1 step + 1 range + 6 calls + 6 kernels; annotations: the step's and the range's
  // GPU work on streams 7 and 8 (the range owns the calls started inside it, [5, 60) us: k = 0..6
  // start at 10, 18, ..., 50 us, all six), 2 + 2; memory: 2 points and 1 peak marker. 21 in all.
  size_t kernels = 0, api = 0, annotations = 0, memory = 0, peaks = 0;
  for (const PlannedEvent& e : events) {
    kernels += e.kind == TraceEventKind::kKernel;
    api += e.kind == TraceEventKind::kApi;
    annotations += e.kind == TraceEventKind::kAnnotation;
    memory += e.kind == TraceEventKind::kMemory;
    peaks += e.kind == TraceEventKind::kMemoryPeak;
  }
  EXPECT_EQ(kernels, 6u);
  EXPECT_EQ(api, 6u);
  EXPECT_EQ(annotations, 4u);
  EXPECT_EQ(memory, 2u);
  EXPECT_EQ(peaks, 1u);
  EXPECT_EQ(events.size(), 21u);
  EXPECT_EQ(events.capacity(), events.size()) << "reserved once, at the final size";
  // Trace order: by start time, the longer of two at one time first.
  for (size_t i = 1; i < events.size(); ++i) {
    const PlannedEvent& a = events[i - 1];
    const PlannedEvent& b = events[i];
    EXPECT_TRUE(a.ts < b.ts || (a.ts == b.ts && a.end >= b.end)) << i;
  }
  // The kernels come out in launch order across the two streams: 100, 101, ..., 105.
  std::vector<uint32_t> kernel_order;
  for (const PlannedEvent& e : events) {
    if (e.kind == TraceEventKind::kKernel) kernel_order.push_back(p.kernels[e.index].correlation_id);
  }
  EXPECT_EQ(kernel_order, (std::vector<uint32_t>{100, 101, 102, 103, 104, 105}));
  // One flow per launch, from call k to kernel k.
  ASSERT_EQ(plan.flows().size(), 6u);
  for (uint32_t k = 0; k < 6; ++k) {
    EXPECT_EQ(plan.flows()[k].correlation_id, 100 + k);
    EXPECT_EQ(plan.flows()[k].api_index, k);
    EXPECT_EQ(plan.flows()[k].gpu_index, k);
  }
}

// A kernel that starts before its launching call (the GPU and host clocks apart) gets no flow:
// Perfetto meets the flow's end first and drops it (gprof-run check: flow-without-start). The
// other launches keep theirs.
TEST(TracePlan, NoFlowToAGpuRecordThatStartsBeforeItsCall) {
  Profile p = HandBuilt();
  p.kernels[2].start_ns = p.api_calls[2].start_ns - 1'000;  // launch 102
  const TracePlan plan(p);
  std::vector<uint32_t> flowed;
  for (const PlannedFlow& f : plan.flows()) flowed.push_back(f.correlation_id);
  EXPECT_EQ(flowed, (std::vector<uint32_t>{100, 101, 103, 104, 105}));
}

}  // namespace
}  // namespace gprof
