// Blocking CUDA calls by Python line (python_sync.h), on a hand-built profile and sample set whose
// every attribution is worked out in the comments.
#include "analysis/samples/python_sync.h"

#include <gtest/gtest.h>

#include <string>

namespace gprof {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kUs = 1'000;

// Thread 100 is sampled every 1 ms (period) at 10.5 ms (in f_a, line 5), 20.2 ms (in f_b, line
// 9) and 30 ms (in other, line 12); thread 200 has no samples.
PythonSamples Samples() {
  PythonSamples s;
  s.hz = 1000;
  s.period_ns = kMs;
  s.threads = {{100, 1, "MainThread"}};
  s.frames = {{"/w/p.py", "<module>", 1, 20}, {"/w/p.py", "f_a", 4, 5}, {"/w/p.py", "f_b", 8, 9},
              {"/w/p.py", "other", 11, 12}};
  s.stacks = {{0, 1}, {0, 2}, {0, 3}};
  s.samples = {{10 * kMs + 500 * kUs, 0, 0}, {20 * kMs + 200 * kUs, 0, 1}, {30 * kMs, 0, 2}};
  return s;
}

Profile Calls() {
  Profile p;
  const auto name = [&](uint16_t cbid, const char* n) {
    p.api_names.push_back({cbid, ApiDomain::kRuntime, 0, p.strings.Intern(n)});
  };
  name(1, "cudaDeviceSynchronize");
  name(2, "cudaMemcpy");
  name(3, "cudaStreamSynchronize");
  name(4, "cudaLaunchKernel");
  name(5, "cudaMemcpyAsync");
  const auto call = [&](uint64_t start, uint64_t end, uint32_t tid, uint16_t cbid) {
    p.api_calls.push_back({start, end, 0, tid, cbid, ApiDomain::kRuntime, 0, 0});
  };
  call(10 * kMs, 11 * kMs, 100, 1);                           // sample 10.5 inside: f_a, 1 ms
  call(20 * kMs, 20 * kMs + 100 * kUs, 100, 2);               // 20.2 is 0.1 ms after: f_b
  call(25 * kMs, 25 * kMs + 200 * kUs, 100, 3);               // nearest 4.8 ms away: not sampled
  call(29 * kMs + 900 * kUs, 30 * kMs + 100 * kUs, 100, 4);   // a launch: not blocking
  call(10 * kMs, 11 * kMs, 200, 1);                           // thread never sampled: not counted
  call(30 * kMs, 30 * kMs + 500 * kUs, 100, 5);               // Async copy: not blocking
  call(10 * kMs + 200 * kUs, 12 * kMs, 100, 1);               // 10.5 inside: f_a, 1.8 ms
  return p;
}

TEST(PythonSyncs, EachBlockingCallGoesToTheLineSampledDuringOrNearIt) {
  const PythonSyncs s = SyncsByPythonLine(Calls(), Samples(), 0, UINT64_MAX);
  EXPECT_EQ(s.calls, 4u);
  EXPECT_EQ(s.not_sampled, 1u);
  EXPECT_EQ(s.blocked_ns, 1 * kMs + 100 * kUs + 200 * kUs + 1800 * kUs);
  ASSERT_EQ(s.lines.size(), 2u);
  EXPECT_EQ(s.lines[0].where, "f_a (/w/p.py:5)");
  EXPECT_EQ(s.lines[0].calls, 2u);
  EXPECT_EQ(s.lines[0].blocked_ns, 2800 * kUs);
  EXPECT_EQ(s.lines[1].where, "f_b (/w/p.py:9)");
  EXPECT_EQ(s.lines[1].calls, 1u);
  EXPECT_EQ(s.lines[1].blocked_ns, 100 * kUs);
}

// A sample inside the call wins over a nearer one outside it; the time range selects calls by
// their start.
TEST(PythonSyncs, InsideTheCallBeatsNearerOutsideAndTheRangeFiltersByStart) {
  PythonSamples s = Samples();
  s.samples.insert(s.samples.begin(), {9 * kMs + 999 * kUs, 0, 2});  // 1 us before call 1: other
  const PythonSyncs all = SyncsByPythonLine(Calls(), s, 0, UINT64_MAX);
  ASSERT_FALSE(all.lines.empty());
  EXPECT_EQ(all.lines[0].where, "f_a (/w/p.py:5)");
  EXPECT_EQ(all.lines[0].calls, 2u);
  const PythonSyncs late = SyncsByPythonLine(Calls(), s, 15 * kMs, UINT64_MAX);
  EXPECT_EQ(late.calls, 2u);  // the cudaMemcpy at 20 and the cudaStreamSynchronize at 25
  ASSERT_EQ(late.lines.size(), 1u);
  EXPECT_EQ(late.lines[0].where, "f_b (/w/p.py:9)");
}

TEST(PythonSyncs, TextListsTheLinesWithTheirShare) {
  const std::string text = FormatPythonSyncs(SyncsByPythonLine(Calls(), Samples(), 0, UINT64_MAX));
  EXPECT_NE(text.find("4 calls, 3.100 ms blocked; 1 not sampled"), std::string::npos) << text;
  // f_a: 2.8 of 3.1 ms = 90.3%.
  EXPECT_NE(text.find("       2        2.800   90.3%  f_a (/w/p.py:5)\n"), std::string::npos)
      << text;
}

// Each attributed call is listed with its line (the trace's args.python_line): in Calls(), the
// calls at index 0 and 6 went to f_a (line 0 after sorting), index 1 to f_b (line 1).
TEST(PythonSyncs, EachAttributedCallIsListedWithItsLine) {
  const PythonSyncs s = SyncsByPythonLine(Calls(), Samples(), 0, UINT64_MAX);
  ASSERT_EQ(s.call_lines.size(), 3u);
  EXPECT_EQ(s.call_lines[0], (std::pair<uint32_t, uint32_t>{0, 0}));
  EXPECT_EQ(s.call_lines[1], (std::pair<uint32_t, uint32_t>{1, 1}));
  EXPECT_EQ(s.call_lines[2], (std::pair<uint32_t, uint32_t>{6, 0}));
}

// torch.cuda.synchronize() is a Python function in torch's own files: the line is the
// program's line that called it (op_stacks.h's rule); a stack of torch's frames only keeps them.
TEST(PythonSyncs, TorchsOwnFramesAreSkippedForTheProgramsLine) {
  PythonSamples s = Samples();
  const uint32_t torch_frame = static_cast<uint32_t>(s.frames.size());
  s.frames.push_back({"/v/lib/python3.12/site-packages/torch/cuda/__init__.py", "synchronize",
                      1070, 1083});
  s.stacks.push_back({0, 1, torch_frame});  // <module> -> f_a -> torch.cuda.synchronize
  s.stacks.push_back({torch_frame});        // torch's frame alone
  s.samples = {{10 * kMs + 500 * kUs, 0, 3}, {20 * kMs + 200 * kUs, 0, 4}};
  const PythonSyncs out = SyncsByPythonLine(Calls(), s, 0, UINT64_MAX);
  ASSERT_EQ(out.lines.size(), 2u);
  EXPECT_EQ(out.lines[0].where, "f_a (/w/p.py:5)");
  EXPECT_EQ(out.lines[1].where,
            "synchronize (/v/lib/python3.12/site-packages/torch/cuda/__init__.py:1083)");
}

// Two parts' blocking calls added up by line (a run rendered segment by segment analyses its
// findings part by part): A 2 calls / 3 ms + 1 call / 4 ms = 3 calls / 7 ms, first; B 1 call /
// 5 ms; C 1 call / 1 ms. Totals: 5 + 2 calls, 12 + 5 ms; the per-call indices are not kept.
TEST(PythonSyncs, PartsAddUpByLineAndSortByBlockedTime) {
  PythonSyncs first, second, run;
  first.lines = {{"B (p.py:2)", 1, 5'000'000}, {"A (p.py:1)", 2, 3'000'000}};
  first.calls = 5, first.blocked_ns = 12'000'000, first.not_sampled = 2;
  first.call_lines = {{0, 0}};
  second.lines = {{"A (p.py:1)", 1, 4'000'000}, {"C (p.py:3)", 1, 1'000'000}};
  second.calls = 2, second.blocked_ns = 5'000'000, second.not_sampled = 0;
  AddPythonSyncs(first, &run);
  AddPythonSyncs(second, &run);
  ASSERT_EQ(run.lines.size(), 3u);
  EXPECT_EQ(run.lines[0].where, "A (p.py:1)");
  EXPECT_EQ(run.lines[0].calls, 3u);
  EXPECT_EQ(run.lines[0].blocked_ns, 7'000'000u);
  EXPECT_EQ(run.lines[1].where, "B (p.py:2)");
  EXPECT_EQ(run.lines[2].where, "C (p.py:3)");
  EXPECT_EQ(run.calls, 7u);
  EXPECT_EQ(run.blocked_ns, 17'000'000u);
  EXPECT_EQ(run.not_sampled, 2u);
  EXPECT_TRUE(run.call_lines.empty());
}

}  // namespace
}  // namespace gprof
