// Unit tests: the merged trace and table of three hand-built ranks (merge.h). Every expected value
// is derived by hand in the comments from the profiles below, not from the code under test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "analysis/ranks/merge.h"
#include "analysis/samples/python_slices.h"
#include "analysis/timeline/trace_plan.h"
#include "outputs/table/merge_table.h"
#include "outputs/trace/merged_trace.h"
#include "outputs/trace/trace_check.h"
#include "outputs/trace/trace_json.h"
#include "tests/support/sample_device.h"

namespace gprof {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

constexpr uint64_t kB = 1'700'000'000'000'000'000ull;  // the common origin (rank 1's start)
constexpr uint64_t kUs = 1000;

// One rank: starts at `start`; range "step" [start + 100 us, start + 900 us) on the main thread
// (tid = pid); `launches` cudaLaunchKernel calls, call i at start + 200 us + i * 100 us lasting
// 10 us (correlation i + 1); each launches gemm() ("_Z4gemmv") on device 0, stream 7, 20 us
// after the call starts, lasting `kernel_ns`. Rank 2 also has a range "checkpoint" of 50 us at
// start + 950 us.
struct RankSpec {
  int32_t rank;
  uint32_t pid;
  const char* host;
  uint64_t start;
  uint32_t launches;
  uint64_t kernel_ns;
};

// rank 0: nodeA pid 100, B + 2 ms, 1 launch of 10 us
// rank 1: nodeA pid 200, B,        2 launches of 30 us
// rank 2: nodeB pid 300, B + 5 ms, 4 launches of 5 us (+ checkpoint)
const RankSpec kRanks[] = {
    {0, 100, "nodeA", kB + 2'000 * kUs, 1, 10 * kUs},
    {1, 200, "nodeA", kB, 2, 30 * kUs},
    {2, 300, "nodeB", kB + 5'000 * kUs, 4, 5 * kUs},
};

Profile MakeRank(const RankSpec& r) {
  Profile p;
  p.info.pid = r.pid;
  p.info.program = "train";
  p.info.hostname = r.host;
  p.info.rank = r.rank;
  p.info.world_size = 3;
  p.info.start_ns = r.start;
  p.info.end_ns = r.start + 2'000 * kUs;
  p.devices.push_back(testing::SampleHopperDevice(&p, "Test GPU", 80ull << 30));
  p.threads.push_back({r.pid, p.strings.Intern("main")});
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.launch_configs.push_back(LaunchConfig{});
  const StringId gemm = p.strings.Intern("_Z4gemmv");
  p.ranges.push_back({r.start + 100 * kUs, r.start + 900 * kUs, p.strings.Intern("step"), r.pid,
                      0, 0, 0});
  if (r.rank == 2) {
    p.ranges.push_back({r.start + 950 * kUs, r.start + 1'000 * kUs,
                        p.strings.Intern("checkpoint"), r.pid, 0, 0, 0});
  }
  for (uint32_t i = 0; i < r.launches; ++i) {
    const uint64_t t = r.start + 200 * kUs + i * 100 * kUs;
    p.api_calls.push_back({t, t + 10 * kUs, i + 1, r.pid, 211, ApiDomain::kRuntime, 0, 0});
    p.kernels.push_back({t + 20 * kUs, t + 20 * kUs + r.kernel_ns, i + 1, gemm, 0, 7});
  }
  return p;
}

// The inputs in the order a directory listing might give them (rank 2, 0, 1), surveyed.
std::vector<MergeInput> Survey() {
  std::vector<MergeInput> inputs;
  for (int r : {2, 0, 1}) {
    inputs.push_back(SummarizeForMerge(MakeRank(kRanks[r]), "dir/train." +
                                                                std::to_string(kRanks[r].pid) +
                                                                ".gpdump"));
  }
  SortMergeInputs(&inputs);
  return inputs;
}

// Loads sorted input k by rebuilding its profile (its rank is k in these tests).
void LoadRank(const std::vector<MergeInput>& inputs, size_t k, Profile* p) {
  *p = MakeRank(kRanks[inputs[k].info.rank]);
}

std::string MergedText(const std::vector<MergeInput>& inputs, TraceStats* stats = nullptr) {
  std::string text;
  const TraceStats s = WriteMergedTrace(
      inputs, [&](size_t k, Profile* p) { LoadRank(inputs, k, p); }, "merged.json",
      JsonSink{&text, [](void* ctx, const char* d, size_t n) {
                 static_cast<std::string*>(ctx)->append(d, n);
               }});
  if (stats) *stats = s;
  return text;
}

TEST(MergeInputs, SortByRankAndLabelRankHostPid) {
  const std::vector<MergeInput> inputs = Survey();
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(MergeInputLabel(inputs[0]), "rank 0 (nodeA:100)");
  EXPECT_EQ(MergeInputLabel(inputs[1]), "rank 1 (nodeA:200)");
  EXPECT_EQ(MergeInputLabel(inputs[2]), "rank 2 (nodeB:300)");
  // Origin: rank 1 starts first, at B (every event is after its start).
  EXPECT_EQ(MergedOriginNs(inputs), kB);
  EXPECT_EQ(inputs[0].origin_ns, kB + 2'000 * kUs);
  // Records: rank 0 one range + 1 call + 1 kernel = 3; rank 2: 2 ranges + 4 + 4 = 10.
  EXPECT_EQ(inputs[0].events, 3u);
  EXPECT_EQ(inputs[2].events, 10u);
}

TEST(MergeInputs, ProcessesWithoutARankComeLastLabelledByProgram) {
  std::vector<MergeInput> inputs = Survey();
  Profile agent = MakeRank(kRanks[0]);
  agent.info.rank = -1;
  agent.info.pid = 50;
  agent.info.program = "torchrun";
  inputs.insert(inputs.begin(), SummarizeForMerge(agent, "dir/torchrun.50.gpdump"));
  SortMergeInputs(&inputs);
  EXPECT_EQ(MergeInputLabel(inputs[3]), "torchrun (nodeA:50)");
  EXPECT_EQ(inputs[0].info.rank, 0);
}

TEST(MergedTrace, EachRankIsItsOwnProcessGroupNamedRankHostPidInRankOrder) {
  const json doc = json::parse(MergedText(Survey()));
  std::map<uint64_t, std::string> names;
  std::map<uint64_t, uint64_t> sort_index;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") names[e["pid"]] = e["args"]["name"];
    if (e["name"] == "process_sort_index") sort_index[e["pid"]] = e["args"]["sort_index"];
  }
  // Input k: host pid 1000 (k + 1), its device 0 one more.
  const std::map<uint64_t, std::string> expected = {
      {1000, "rank 0 (nodeA:100)"}, {1001, "rank 0 (nodeA:100) GPU 0 Test GPU"},
      {2000, "rank 1 (nodeA:200)"}, {2001, "rank 1 (nodeA:200) GPU 0 Test GPU"},
      {3000, "rank 2 (nodeB:300)"}, {3001, "rank 2 (nodeB:300) GPU 0 Test GPU"}};
  EXPECT_EQ(names, expected);
  // Host first, then its GPU, rank after rank.
  const std::map<uint64_t, uint64_t> expected_sort = {{1000, 1000}, {1001, 1001}, {2000, 2000},
                                                      {2001, 2001}, {3000, 3000}, {3001, 3001}};
  EXPECT_EQ(sort_index, expected_sort);
}

TEST(MergedTrace, EveryTimestampIsItsAbsoluteTimeMinusTheEarliestStart) {
  const json doc = json::parse(MergedText(Survey()));
  EXPECT_EQ(doc["baseTimeNanoseconds"], kB);
  // Expected (pid, name, ts in ns after B, dur in ns) of the host slices and kernels, by hand:
  //   rank 0 (offset 2,000 us): step at 2,100 us (800 us), call at 2,200 us (10 us), kernel at
  //     2,220 us (10 us);
  //   rank 1 (offset 0): step 100 us; calls 200 and 300 us; kernels 220 and 320 us (30 us);
  //   rank 2 (offset 5,000 us): step 5,100 us; checkpoint 5,950 us (50 us); calls 5,200, 5,300,
  //     5,400, 5,500 us; kernels 5,220 ... 5,520 us (5 us).
  using Ev = std::tuple<uint64_t, std::string, uint64_t, uint64_t>;
  const std::multiset<Ev> expected = {
      {1000, "step", 2'100'000, 800'000},      {1000, "cudaLaunchKernel", 2'200'000, 10'000},
      {1001, "gemm()", 2'220'000, 10'000},     {2000, "step", 100'000, 800'000},
      {2000, "cudaLaunchKernel", 200'000, 10'000}, {2000, "cudaLaunchKernel", 300'000, 10'000},
      {2001, "gemm()", 220'000, 30'000},       {2001, "gemm()", 320'000, 30'000},
      {3000, "step", 5'100'000, 800'000},      {3000, "checkpoint", 5'950'000, 50'000},
      {3000, "cudaLaunchKernel", 5'200'000, 10'000}, {3000, "cudaLaunchKernel", 5'300'000, 10'000},
      {3000, "cudaLaunchKernel", 5'400'000, 10'000}, {3000, "cudaLaunchKernel", 5'500'000, 10'000},
      {3001, "gemm()", 5'220'000, 5'000},      {3001, "gemm()", 5'320'000, 5'000},
      {3001, "gemm()", 5'420'000, 5'000},      {3001, "gemm()", 5'520'000, 5'000},
  };
  std::multiset<Ev> got;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] == "gpu_user_annotation") continue;
    // ts and dur are microseconds with 3 decimals: exact in ns.
    got.insert({e["pid"].get<uint64_t>(), e["name"].get<std::string>(),
                static_cast<uint64_t>(std::llround(e["ts"].get<double>() * 1000)),
                static_cast<uint64_t>(std::llround(e["dur"].get<double>() * 1000))});
  }
  EXPECT_EQ(got, expected);
}

TEST(MergedTrace, FlowIdsAreUniqueAcrossRanksAndTheCheckerAcceptsTheTrace) {
  TraceStats stats;
  const std::string text = MergedText(Survey(), &stats);
  const json doc = json::parse(text);
  // Correlation ids 1.. repeat in every rank; input k's flow (bind) ids are 2^32 + (k << 32) +
  // correlation, on the launching calls ("flow_out") and their GPU records ("flow_in").
  std::set<uint64_t> starts, ends;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("flow_out", false)) starts.insert(e["bind_id"].get<uint64_t>());
    if (e.value("flow_in", false)) ends.insert(e["bind_id"].get<uint64_t>());
  }
  const uint64_t k0 = 1ull << 32, k1 = 2ull << 32, k2 = 3ull << 32;
  EXPECT_EQ(starts,
            (std::set<uint64_t>{k0 + 1, k1 + 1, k1 + 2, k2 + 1, k2 + 2, k2 + 3, k2 + 4}));
  EXPECT_EQ(ends, starts);
  EXPECT_EQ(stats.events, doc["traceEvents"].size());
  EXPECT_EQ(stats.bytes, text.size());
  const std::string path = ::testing::TempDir() + "/merged_trace_check.json";
  std::ofstream(path, std::ios::binary) << text;
  const std::vector<TraceViolation> violations = CheckTrace(path);
  for (const TraceViolation& v : violations) ADD_FAILURE() << v.rule << ": " << v.message;
}

TEST(MergedTrace, MetadataListsTheInputsWithTheirBaseTimesAndTheClockCaveat) {
  const json doc = json::parse(MergedText(Survey()));
  const json& g = doc["gprof"];
  EXPECT_EQ(g["merged"], true);
  EXPECT_THAT(g["clock"].get<std::string>(), HasSubstr("NTP"));
  EXPECT_THAT(g["clock"].get<std::string>(), HasSubstr("clock.offset_ns"));
  EXPECT_EQ(g["hosts"], json::array({"nodeA", "nodeB"}));
  ASSERT_EQ(g["inputs"].size(), 3u);
  const json& r2 = g["inputs"][2];
  EXPECT_EQ(r2["label"], "rank 2 (nodeB:300)");
  EXPECT_EQ(r2["rank"], 2);
  EXPECT_EQ(r2["hostname"], "nodeB");
  EXPECT_EQ(r2["pid"], 300);
  EXPECT_EQ(r2["file"], "dir/train.300.gpdump");
  EXPECT_EQ(r2["base_ns"], kB + 5'000 * kUs);
  EXPECT_EQ(r2["offset_ns"], 5'000 * kUs);
  EXPECT_EQ(r2["trace_pid"], 3000);
}

TEST(MergedTrace, LoadsEachInputOnceInRankOrder) {
  const std::vector<MergeInput> inputs = Survey();
  std::vector<size_t> loaded;
  std::string sink_text;
  WriteMergedTrace(
      inputs,
      [&](size_t k, Profile* p) {
        loaded.push_back(k);
        LoadRank(inputs, k, p);
      },
      "m.json", JsonSink{&sink_text, [](void*, const char*, size_t) {}});
  EXPECT_EQ(loaded, (std::vector<size_t>{0, 1, 2}));
}

TEST(MergedTrace, ADumpThatChangedSinceTheSurveyIsRefused) {
  const std::vector<MergeInput> inputs = Survey();
  std::string text;
  EXPECT_THROW(WriteMergedTrace(
                   inputs,
                   [&](size_t k, Profile* p) {
                     LoadRank(inputs, k, p);
                     if (k == 1) p->info.start_ns -= 1'000 * kUs;  // earlier than surveyed
                   },
                   "m.json", JsonSink{&text, [](void*, const char*, size_t) {}}),
               std::runtime_error);
}

// Per rank (0, 1, 2), by hand from kRanks:
//   gemm() (GPU): calls 1, 2, 4; Self CUDA 10, 60, 20 us.
//   cudaLaunchKernel: calls 1, 2, 4; Self CPU = CPU total 10, 20, 40 us.
//   step: calls 1, 1, 1; owns its kernels: Self CUDA 10, 60, 20 us; Self CPU 800 us minus its
//     calls: 790, 780, 760 us; CPU total 800 us each.
//   checkpoint: rank 2 only: calls 0, 0, 1; Self CPU = CPU total 0, 0, 50 us.
// Order: Self CUDA summed: step 90 us = gemm 90 us, then Self CPU summed: step 2,330 us before
// gemm 0; cudaLaunchKernel (70 us) before checkpoint (50 us).
// Sampled Python stacks of ranks 0 and 2 (none for rank 1), every 1 ms on the main thread (tid =
// pid), stack f0 -> f1 (root first):
//   rank 0: samples at start + 0 and + 1 ms: f0 and f1 each [start, start + 2 ms) (the last
//           sample + one period, which is also the profile's end), 2 samples;
//   rank 2: one sample at start + 0.5 ms: f0 and f1 [start + 0.5, start + 1.5 ms), 1 sample.
// Merged, rank k's host is pid 1000 * (k + 1) and times are relative to B: rank 0's slices at
// 2000 us lasting 2000 us, rank 2's at 5500 us lasting 1000 us; the sampled track is the first
// synthetic tid (the ranks have no lanes of their own), named after the thread "main".
PythonSamples RankSamples(const RankSpec& r, const std::vector<uint64_t>& after_start) {
  PythonSamples s;
  s.pid = r.pid;
  s.program = "train";
  s.hz = 1000;
  s.period_ns = 1'000'000;
  s.start_ns = r.start;
  s.threads.push_back({r.pid, 1, "MainThread"});
  s.frames = {{"train.py", "f0", 1, 1}, {"train.py", "f1", 5, 6}};
  s.stacks = {{0, 1}};
  for (uint64_t t : after_start) s.samples.push_back({r.start + t, 0, 0});
  return s;
}

TEST(MergedTrace, SampledPythonStacksOfEachRankAreOnThatRanksProcess) {
  std::vector<MergeInput> inputs = Survey();
  inputs[0].python_samples = 2;
  inputs[0].python_hz = 1000;
  inputs[2].python_samples = 1;
  inputs[2].python_hz = 1000;
  EXPECT_EQ(MergeInputsWithPythonSamples(inputs), "rank 0 (nodeA:100), rank 2 (nodeB:300)");
  std::vector<size_t> asked;
  const MergePythonLoader python = [&](size_t k, const Profile& p) -> std::unique_ptr<PythonSliceSet> {
    asked.push_back(k);
    EXPECT_EQ(p.info.rank, inputs[k].info.rank) << "called with input k's profile";
    if (k == 1) return nullptr;
    const RankSpec& r = kRanks[k];
    const PythonSamples s = k == 0 ? RankSamples(r, {0, 1'000'000}) : RankSamples(r, {500'000});
    return std::make_unique<PythonSliceSet>(PythonSlicesFrom(s, p.info.start_ns, p.info.end_ns));
  };
  std::string text;
  WriteMergedTrace(
      inputs, [&](size_t k, Profile* p) { LoadRank(inputs, k, p); }, "merged.json",
      JsonSink{&text, [](void* ctx, const char* d, size_t n) {
                 static_cast<std::string*>(ctx)->append(d, n);
               }},
      python);
  EXPECT_EQ(asked, (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(CheckTraceText(text).empty());
  const json doc = json::parse(text);
  std::map<uint32_t, std::vector<std::tuple<std::string, double, double>>> slices;  // by pid
  std::map<uint32_t, std::string> track_names;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("name", "") == "thread_name" && e["tid"] == kFirstSyntheticTid) {
      track_names[e["pid"].get<uint32_t>()] = e["args"]["name"].get<std::string>();
    }
    if (e.value("cat", "") != "python_function") continue;
    EXPECT_EQ(e["tid"], kFirstSyntheticTid);
    slices[e["pid"].get<uint32_t>()].emplace_back(e["name"].get<std::string>(),
                                                  e["ts"].get<double>(), e["dur"].get<double>());
  }
  using S = std::vector<std::tuple<std::string, double, double>>;
  EXPECT_EQ(slices[1000], (S{{"train.py(1): f0", 2000.0, 2000.0}, {"train.py(5): f1", 2000.0, 2000.0}}));
  EXPECT_EQ(slices.count(2000), 0u) << "rank 1 has no samples";
  EXPECT_EQ(slices[3000], (S{{"train.py(1): f0", 5500.0, 1000.0}, {"train.py(5): f1", 5500.0, 1000.0}}));
  EXPECT_EQ(track_names[1000], "MainThread (main): Python stacks, sampled at 1000 Hz");
  EXPECT_EQ(track_names[3000], "MainThread (main): Python stacks, sampled at 1000 Hz");
  EXPECT_EQ(track_names.count(2000), 0u);
  // The metadata says which inputs had samples.
  const json& in = doc["gprof"]["inputs"];
  EXPECT_EQ(in[0]["python_samples"], 2);
  EXPECT_EQ(in[0]["python_hz"], 1000);
  EXPECT_EQ(in[1]["python_samples"], 0);
  EXPECT_FALSE(in[1].contains("python_hz"));
  EXPECT_EQ(in[2]["python_samples"], 1);
}

TEST(MergedTable, RowsHoldMinMedianMaxAcrossRanksAndTheRankOfTheMax) {
  const std::vector<MergedRow> rows = MergeRows(Survey());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].name, "step");
  EXPECT_EQ(rows[1].name, "gemm()");
  EXPECT_EQ(rows[2].name, "cudaLaunchKernel");
  EXPECT_EQ(rows[3].name, "checkpoint");
  const auto expect = [](const AcrossInputs& a, uint64_t min, double median, uint64_t max,
                         size_t at) {
    EXPECT_EQ(a.min, min);
    EXPECT_EQ(a.median, median);
    EXPECT_EQ(a.max, max);
    EXPECT_EQ(a.max_input, at);
  };
  const MergedRow& gemm = rows[1];
  EXPECT_TRUE(gemm.device);
  EXPECT_EQ(gemm.inputs, 3u);
  expect(gemm.calls, 1, 2, 4, 2);
  expect(gemm.self_cuda, 10 * kUs, 20 * kUs, 60 * kUs, 1);
  expect(gemm.self_cpu, 0, 0, 0, 0);
  const MergedRow& step = rows[0];
  EXPECT_FALSE(step.device);
  expect(step.calls, 1, 1, 1, 0);  // a tie: the first input
  expect(step.self_cuda, 10 * kUs, 20 * kUs, 60 * kUs, 1);
  expect(step.self_cpu, 760 * kUs, 780 * kUs, 790 * kUs, 0);
  expect(step.cpu_total, 800 * kUs, 800 * kUs, 800 * kUs, 0);
  expect(rows[2].self_cpu, 10 * kUs, 20 * kUs, 40 * kUs, 2);
  const MergedRow& checkpoint = rows[3];
  EXPECT_EQ(checkpoint.inputs, 1u);
  expect(checkpoint.calls, 0, 0, 1, 2);
  expect(checkpoint.self_cpu, 0, 0, 50 * kUs, 2);
}

TEST(MergedTable, MedianOfAnEvenCountIsTheMeanOfTheTwoMiddleRanks) {
  std::vector<MergeInput> inputs = Survey();
  inputs.pop_back();  // ranks 0 and 1: gemm calls 1 and 2 -> 1.5; Self CUDA 10, 60 -> 35 us
  const std::vector<MergedRow> rows = MergeRows(inputs);
  ASSERT_EQ(rows[1].name, "gemm()");
  EXPECT_EQ(rows[1].calls.median, 1.5);
  EXPECT_EQ(rows[1].self_cuda.median, 35'000.0);
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

TEST(MergedTable, TextShowsEachRowsStatisticsAndThePerRankTotals) {
  const std::string text = FormatMergedTable(Survey(), "Merged table: whole run", -1);
  EXPECT_THAT(text, ::testing::StartsWith("Merged table: whole run\n3 processes: ranks 0-2; "));
  EXPECT_THAT(text, HasSubstr("| Calls"));
  EXPECT_THAT(text, HasSubstr("| Self CUDA"));
  std::vector<std::string> step_line, checkpoint_line;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("step ", 0) == 0) step_line = Words(line);
    if (line.rfind("checkpoint ", 0) == 0) checkpoint_line = Words(line);
  }
  // Name, Kind, Ranks, then min median max "max at" for Calls, Self CUDA, Self CPU, CPU total.
  EXPECT_EQ(step_line, (std::vector<std::string>{
                           "step", "CPU", "3", "1", "1", "1", "0", "10.000us", "20.000us",
                           "60.000us", "1", "760.000us", "780.000us", "790.000us", "0",
                           "800.000us", "800.000us", "800.000us", "0"}));
  EXPECT_EQ(checkpoint_line, (std::vector<std::string>{
                                 "checkpoint", "CPU", "1", "0", "0", "1", "2", "0.000us",
                                 "0.000us", "0.000us", "0", "0.000us", "0.000us", "50.000us",
                                 "2", "0.000us", "0.000us", "50.000us", "2"}));
  // Per rank Self CPU: 790 + 10 = 800, 780 + 20 = 800, 760 + 40 + 50 = 850 us; Self CUDA (GPU
  // rows): 10, 60, 20 us.
  EXPECT_THAT(text, HasSubstr("Self CPU time total per process: min 800.000us, median "
                              "800.000us, max 850.000us at rank 2\n"));
  EXPECT_THAT(text, HasSubstr("Self CUDA time total per process: min 10.000us, median "
                              "20.000us, max 60.000us at rank 1\n"));
}

TEST(MergedTable, RowLimitCutsTheRowsNotTheTotals) {
  const std::string text = FormatMergedTable(Survey(), "t", 1);
  EXPECT_THAT(text, HasSubstr("\nstep "));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\ngemm() ")));
  EXPECT_THAT(text, HasSubstr("Self CPU time total per process"));
}

}  // namespace
}  // namespace gprof
