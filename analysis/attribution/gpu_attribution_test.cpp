// Unit tests: which ranges and steps own GPU work (gpu_attribution.h), as the table's CUDA
// columns and the trace's gpu_user_annotation spans show it. The profiles are built by hand in the
// shape of a PyTorch run whose backward ops launch from an autograd thread.
#include "analysis/attribution/gpu_attribution.h"

#include <gtest/gtest.h>

#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/tables/key_averages.h"
#include "analysis/timeline/trace_plan.h"
#include "outputs/table/table.h"
#include "outputs/trace/trace_json.h"

namespace gprof {
namespace {

constexpr uint64_t kBase = 1'700'000'000'000'000'000ull;
constexpr uint32_t kMain = 1;      // the training loop's thread: the step range lives here
constexpr uint32_t kAutograd = 2;  // an autograd backward thread: ops and launches live here

// Records at times given in ns after kBase.
void AddRange(Profile* p, uint64_t start, uint64_t end, const char* name, uint32_t tid,
              uint16_t flags = 0) {
  p->ranges.push_back({kBase + start, kBase + end, p->strings.Intern(name), tid, 0, flags, 0});
}
void AddLaunch(Profile* p, uint64_t start, uint64_t end, uint32_t correlation, uint32_t tid) {
  p->api_calls.push_back({kBase + start, kBase + end, correlation, tid, 211, ApiDomain::kRuntime,
                          0, 0});
}
void AddKernel(Profile* p, uint64_t start, uint64_t end, uint32_t correlation, const char* name) {
  p->kernels.push_back({kBase + start, kBase + end, correlation, p->strings.Intern(name), 0, 7});
}

// Step #7 on the main thread, [10, 100) us. The main thread has "optimizer" open [20, 90) us. On
// the autograd thread, op "aten::mm" [30, 50) us launches mm (API call [32, 34) us, correlation
// 11, kernel [40, 46) us on stream 7); then, outside any range of that thread, a launch at
// [60, 62) us (correlation 12) runs tail [64, 66) us on stream 7. The trace shows times in us
// from kBase (its baseTimeNanoseconds).
Profile BackwardOnAnotherThread() {
  Profile p;
  p.info.pid = 4242;
  p.info.start_ns = kBase;
  p.threads.push_back({kMain, p.strings.Intern("MainThread")});
  p.threads.push_back({kAutograd, p.strings.Intern("autograd")});
  p.devices.push_back({0, p.strings.Intern("GPU"), 0, 9, 0, 132, 1024, 2048, 65536, 65536, 49152,
                       233472, 32});
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.launch_configs.push_back({});
  p.steps.push_back({kBase + 10'000, kBase + 100'000, 7, kMain});
  AddRange(&p, 20'000, 90'000, "optimizer", kMain);
  AddRange(&p, 30'000, 50'000, "aten::mm", kAutograd);
  AddLaunch(&p, 32'000, 34'000, 11, kAutograd);
  AddLaunch(&p, 60'000, 62'000, 12, kAutograd);
  AddKernel(&p, 40'000, 46'000, 11, "_Z2mmPf");
  AddKernel(&p, 64'000, 66'000, 12, "_Z4tailPf");
  return p;
}

std::map<std::string, EventStats> Rows(const Profile& p) {
  std::map<std::string, EventStats> rows;
  for (EventStats& e : KeyAverages(p)) rows[e.name] = e;
  return rows;
}

// Cells of the rendered table row whose name is `name` (split on runs of 2+ spaces).
std::vector<std::string> TableRow(const std::string& table, const std::string& name) {
  size_t pos = 0;
  while (pos < table.size()) {
    size_t end = table.find('\n', pos);
    if (end == std::string::npos) end = table.size();
    const std::string line = table.substr(pos, end - pos);
    pos = end + 1;
    std::vector<std::string> cells;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && line[i] == ' ') ++i;
      size_t j = line.find("  ", i);
      if (j == std::string::npos) j = line.size();
      if (j > i) cells.push_back(line.substr(i, j - i));
      i = j;
    }
    if (!cells.empty() && cells[0] == name) return cells;
  }
  return {};
}

// gpu_user_annotation slices of the JSON trace by name.
std::map<std::string, std::vector<nlohmann::json>> GpuAnnotations(const Profile& p) {
  const nlohmann::json j = nlohmann::json::parse(FormatTraceJson(p, "t.json"));
  std::map<std::string, std::vector<nlohmann::json>> out;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "gpu_user_annotation") out[e["name"]].push_back(e);
  }
  return out;
}

// The table: aten::mm's CUDA total is mm's 6 us (its launching call ran on the autograd thread
// inside it); its Self CUDA is the same 6 us, as in torch's table, since no range nested in it
// owns any (the kernel row has Self CUDA 6 us too; the footer counts only the kernel rows). The step's CUDA total is 6 + 2 = 8 us:
// both launches started during step 7, on a thread that never saw the step. Per thread, the main
// thread's tree (step > optimizer) has no launch at all, which is what the old same-thread rule
// gave the step (0).
TEST(GpuAttribution, OpOnAutogradThreadOwnsItsKernelAndTheStepOwnsEveryLaunchDuringIt) {
  const Profile p = BackwardOnAnotherThread();
  auto rows = Rows(p);
  EXPECT_EQ(rows["aten::mm"].cuda_total_ns, 6'000u);
  EXPECT_EQ(rows["aten::mm"].self_cuda_ns, 6'000u);
  EXPECT_EQ(rows["aten::mm"].cpu_total_ns, 20'000u);
  EXPECT_EQ(rows["aten::mm"].self_cpu_ns, 18'000u);  // minus its 2 us launch
  EXPECT_EQ(rows["ProfilerStep*"].cuda_total_ns, 8'000u);
  EXPECT_EQ(rows["ProfilerStep*"].count, 1u);
  EXPECT_EQ(rows["cudaLaunchKernel"].cuda_total_ns, 8'000u);
  EXPECT_EQ(rows["cudaLaunchKernel"].count, 2u);
  EXPECT_EQ(rows["mm(float*)"].self_cuda_ns, 6'000u);
  EXPECT_EQ(rows["tail(float*)"].self_cuda_ns, 2'000u);

  // Columns: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, Self CUDA,
  // Self CUDA %, CUDA total, CUDA time avg, # of Calls.
  const std::string t = RenderTable(p, {});
  const auto mm = TableRow(t, "aten::mm");
  ASSERT_EQ(mm.size(), 11u) << t;
  EXPECT_EQ(mm[6], "6.000us");
  EXPECT_EQ(mm[8], "6.000us");
  const auto step = TableRow(t, "ProfilerStep*");
  ASSERT_EQ(step.size(), 11u) << t;
  EXPECT_EQ(step[8], "8.000us");
  const auto kernel = TableRow(t, "mm(float*)");
  ASSERT_EQ(kernel.size(), 11u) << t;
  EXPECT_EQ(kernel[6], "6.000us");
  EXPECT_NE(t.find("Self CUDA time total: 8.000us"), std::string::npos) << t;

  // The trace: on GPU 0's stream 7 (pid 0, tid 7), ProfilerStep#7 spans from mm's start to
  // tail's end, [40, 66) us, and aten::mm spans mm, [40, 46) us; both cover mm [40, 46) us.
  const auto ann = GpuAnnotations(p);
  ASSERT_EQ(ann.count("ProfilerStep#7"), 1u);
  ASSERT_EQ(ann.at("ProfilerStep#7").size(), 1u);
  const nlohmann::json& s = ann.at("ProfilerStep#7")[0];
  EXPECT_EQ(s["pid"], 0);
  EXPECT_EQ(s["tid"], 7);
  EXPECT_DOUBLE_EQ(s["ts"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(s["dur"].get<double>(), 26.0);
  ASSERT_EQ(ann.count("aten::mm"), 1u);
  ASSERT_EQ(ann.at("aten::mm").size(), 1u);
  const nlohmann::json& op = ann.at("aten::mm")[0];
  EXPECT_EQ(op["pid"], 0);
  EXPECT_EQ(op["tid"], 7);
  EXPECT_DOUBLE_EQ(op["ts"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(op["dur"].get<double>(), 6.0);

  // The Perfetto trace draws the same plan: two annotation slices, the step's and the op's.
  const TracePlan plan(p);
  std::vector<std::string> names;
  for (const PlannedEvent& e : plan.events()) {
    if (e.kind == TraceEventKind::kAnnotation) {
      names.push_back(plan.AnnotationName(plan.annotations()[e.index]));
      EXPECT_EQ(e.pid, 0u);
      EXPECT_EQ(e.tid, 7u);
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ProfilerStep#7", "aten::mm"}));
}

// Negative: tail's launch ran on the autograd thread outside any range of that thread, while the
// main thread had "optimizer" open. optimizer owns nothing (CUDA total 0, no gpu_user_annotation);
// only the process-wide step owns tail.
TEST(GpuAttribution, LaunchOutsideItsThreadsRangesIsNotGivenToAnotherThreadsRange) {
  const Profile p = BackwardOnAnotherThread();
  auto rows = Rows(p);
  EXPECT_EQ(rows["optimizer"].cuda_total_ns, 0u);
  const auto row = TableRow(RenderTable(p, {}), "optimizer");
  ASSERT_EQ(row.size(), 11u);
  EXPECT_EQ(row[8], "0.000us");
  EXPECT_EQ(GpuAnnotations(p).count("optimizer"), 0u);

  const CorrelationIndex corr(p);
  const GpuAttribution owners(p, corr);
  const auto ids = [&](std::span<const uint32_t> launches) {
    std::vector<uint32_t> out;
    for (uint32_t l : launches) out.push_back(owners.Records(l).front().correlation_id);
    return out;
  };
  EXPECT_TRUE(owners.RangeLaunches(0).empty());                             // optimizer
  EXPECT_EQ(ids(owners.RangeLaunches(1)), std::vector<uint32_t>{11});       // aten::mm
  EXPECT_EQ(ids(owners.StepLaunches(0)), (std::vector<uint32_t>{11, 12}));  // the step
}

// Step ranges (flagged kRangeStep, or named ProfilerStep#N as record_function writes them) follow
// the step rule: the autograd thread's launches during them are theirs. A range merely named like
// one ("ProfilerStepper") is an ordinary range of the main thread and owns nothing.
TEST(GpuAttribution, StepRangesAreProcessWide) {
  Profile p = BackwardOnAnotherThread();
  p.steps.clear();
  AddRange(&p, 10'000, 55'000, "ProfilerStep#1", kMain);
  AddRange(&p, 55'000, 100'000, "step", kMain, kRangeStep);
  AddRange(&p, 10'000, 100'000, "ProfilerStepper", kMain);
  const CorrelationIndex corr(p);
  const GpuAttribution owners(p, corr);
  EXPECT_EQ(owners.RangeGpuNs(2), 6'000u);  // ProfilerStep#1: mm's launch at 32 us
  EXPECT_EQ(owners.RangeGpuNs(3), 2'000u);  // the flagged step: tail's launch at 60 us
  EXPECT_EQ(owners.RangeGpuNs(4), 0u);      // ProfilerStepper
  auto rows = Rows(p);
  EXPECT_EQ(rows["ProfilerStep*"].count, 2u);
  EXPECT_EQ(rows["ProfilerStep*"].cuda_total_ns, 8'000u);
  EXPECT_EQ(rows["ProfilerStepper"].cuda_total_ns, 0u);
  const auto ann = GpuAnnotations(p);
  ASSERT_EQ(ann.count("ProfilerStep#1"), 1u);
  EXPECT_DOUBLE_EQ(ann.at("ProfilerStep#1")[0]["ts"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(ann.at("ProfilerStep#1")[0]["dur"].get<double>(), 6.0);
  ASSERT_EQ(ann.count("step"), 1u);
  EXPECT_DOUBLE_EQ(ann.at("step")[0]["ts"].get<double>(), 64.0);
  EXPECT_DOUBLE_EQ(ann.at("step")[0]["dur"].get<double>(), 2.0);
  EXPECT_EQ(ann.count("ProfilerStepper"), 0u);
}

// The launching call's start decides. Steps 1 [0, 1) us and 2 [1, 2) us on the main thread; the
// autograd thread's call [0.9, 1.1) us straddles the boundary and belongs to step 1 only. A
// start/end range of the main thread [3, 4) us ended (from elsewhere) during the main thread's
// call [3.8, 4.2) us still owns that call's memset; a call starting at 4 us, its end, does not.
TEST(GpuAttribution, TheLaunchingCallsStartDecides) {
  Profile p;
  p.info.start_ns = kBase;
  p.launch_configs.push_back({});
  p.steps.push_back({kBase + 0, kBase + 1'000, 1, kMain});
  p.steps.push_back({kBase + 1'000, kBase + 2'000, 2, kMain});
  AddRange(&p, 3'000, 4'000, "io", kMain, kRangeStartEnd);
  AddLaunch(&p, 900, 1'100, 1, kAutograd);
  AddLaunch(&p, 3'800, 4'200, 2, kMain);
  AddLaunch(&p, 4'000, 4'100, 3, kMain);
  AddKernel(&p, 1'500, 1'800, 1, "k");
  p.memsets.push_back({kBase + 4'500, kBase + 4'600, 64, 2, 7, 0, 0, MemKind::kDevice, 0, 0});
  p.memsets.push_back({kBase + 4'700, kBase + 4'900, 64, 3, 7, 0, 0, MemKind::kDevice, 0, 0});
  const CorrelationIndex corr(p);
  const GpuAttribution owners(p, corr);
  EXPECT_EQ(owners.StepGpuNs(0), 300u);
  EXPECT_EQ(owners.StepGpuNs(1), 0u);
  EXPECT_EQ(owners.RangeGpuNs(0), 100u);
  EXPECT_EQ(Rows(p)["io"].cuda_total_ns, 100u);
}

// GPU work whose launching call is missing (an id no call has, or CUPTI's 0) belongs to no range
// and no step, though it ran inside their times; it still counts in its own row.
TEST(GpuAttribution, UncorrelatedWorkBelongsToNothing) {
  Profile p = BackwardOnAnotherThread();
  AddKernel(&p, 35'000, 36'000, 99, "_Z4lostPf");
  AddKernel(&p, 36'000, 37'000, 0, "_Z4lostPf");
  auto rows = Rows(p);
  EXPECT_EQ(rows["ProfilerStep*"].cuda_total_ns, 8'000u);
  EXPECT_EQ(rows["aten::mm"].cuda_total_ns, 6'000u);
  EXPECT_EQ(rows["lost(float*)"].self_cuda_ns, 2'000u);
}

}  // namespace
}  // namespace gprof
