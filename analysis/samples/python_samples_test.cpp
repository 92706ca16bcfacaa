// The .pysamples reader (corrupt inputs included), the folded stacks and the sample-to-slice
// conversion, with expected values derived by hand from the inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/samples/python_samples.h"
#include "analysis/samples/python_slices.h"
#include "analysis/timeline/trace_plan.h"
#include "outputs/trace/trace_check.h"
#include "outputs/trace/trace_json.h"

namespace gprof {
namespace {

constexpr uint64_t kStart = 1'700'000'000'000'000'000ull;
constexpr uint64_t kMs = 1'000'000;

// A file as the sampler writes it: main thread 100 in <module> -> a -> b, then b at another line,
// then <module> -> c; a second thread (tid unknown) in w.
std::string ValidFile() {
  return "gprof-pysamples\t1\n"
         "pid\t100\n"
         "program\tp.py\n"
         "hz\t1000\n"
         "period_ns\t1000000\n"
         "start_ns\t1700000000000000000\n"
         "end_ns\t1700000000010000000\n"
         "ticks\t4\n"
         "missed\t2\n"
         "dropped\t0\n"
         "threads\t2\n"
         "frames\t6\n"
         "stacks\t4\n"
         "samples\t5\n"
         "T\t0\t100\t1401\tMainThread\n"
         "T\t1\t0\t1402\t\n"
         "F\t0\t1\t20\t/w/p.py\t<module>\n"
         "F\t1\t3\t4\t/w/p.py\ta\n"
         "F\t2\t6\t7\t/w/p.py\tb\n"
         "F\t3\t6\t8\t/w/p.py\tb\n"
         "F\t4\t9\t10\t/w/p.py\tc\n"
         "F\t5\t12\t13\t/w/tab\\tname.py\tw\n"
         "K\t0\t0 1 2\n"
         "K\t1\t0 1 3\n"
         "K\t2\t0 4\n"
         "K\t3\t5\n"
         "S\t0\t0\t0\n"
         "S\t0\t1\t3\n"
         "S\t1000000\t0\t1\n"
         "S\t2000000\t0\t0\n"
         "S\t3000000\t0\t2\n"
         "end\n";
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(PythonSamples, ReadsEveryFieldOfAValidFile) {
  PythonSamples s;
  std::string error;
  ASSERT_TRUE(ParsePythonSamples(ValidFile(), &s, &error)) << error;
  EXPECT_EQ(s.pid, 100u);
  EXPECT_EQ(s.program, "p.py");
  EXPECT_EQ(s.hz, 1000u);
  EXPECT_EQ(s.period_ns, kMs);
  EXPECT_EQ(s.start_ns, kStart);
  EXPECT_EQ(s.end_ns, kStart + 10 * kMs);
  EXPECT_EQ(s.ticks, 4u);
  EXPECT_EQ(s.missed, 2u);
  ASSERT_EQ(s.threads.size(), 2u);
  EXPECT_EQ(s.threads[0].tid, 100u);
  EXPECT_EQ(s.threads[0].ident, 1401u);
  EXPECT_EQ(s.threads[0].name, "MainThread");
  EXPECT_EQ(s.threads[1].tid, 0u);
  EXPECT_EQ(s.threads[1].name, "");
  ASSERT_EQ(s.frames.size(), 6u);
  EXPECT_EQ(s.frames[2].function, "b");
  EXPECT_EQ(s.frames[2].first_line, 6u);
  EXPECT_EQ(s.frames[2].line, 7u);
  EXPECT_EQ(s.frames[5].file, "/w/tab\tname.py");  // unescaped
  ASSERT_EQ(s.stacks.size(), 4u);
  EXPECT_EQ(s.stacks[0], (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_EQ(s.samples.size(), 5u);
  EXPECT_EQ(s.samples[2].ts_ns, kStart + kMs);
  EXPECT_EQ(s.samples[2].thread, 0u);
  EXPECT_EQ(s.samples[2].stack, 1u);
}

// Version 2 (the out-of-process sampler's) names its sampler and its torn stacks; version 1 files
// were all written in process.
TEST(PythonSamples, Version2NamesTheSamplerAndVersion1WasInProcess) {
  PythonSamples v1, v2;
  std::string error;
  ASSERT_TRUE(ParsePythonSamples(ValidFile(), &v1, &error)) << error;
  EXPECT_EQ(v1.sampler, "in-process");
  EXPECT_EQ(v1.torn, 0u);
  const std::string text = Replace(Replace(ValidFile(), "gprof-pysamples\t1", "gprof-pysamples\t2"),
                                   "program\tp.py\n",
                                   "program\tp.py\nsampler\tout-of-process\ntorn\t3\n");
  ASSERT_TRUE(ParsePythonSamples(text, &v2, &error)) << error;
  EXPECT_EQ(v2.sampler, "out-of-process");
  EXPECT_EQ(v2.torn, 3u);
  EXPECT_EQ(v2.samples.size(), 5u);
  EXPECT_FALSE(ParsePythonSamples(Replace(text, "out-of-process", "py-spy"), &v2, &error));
  EXPECT_NE(error.find("sampler: expected"), std::string::npos) << error;
}

TEST(PythonSamples, RejectsCorruptFilesSayingWhere) {
  const std::string good = ValidFile();
  struct Case {
    std::string text;
    std::string message;  // part of the error
  };
  const std::vector<Case> cases = {
      {"", "truncated"},
      {"hello\n", "not a gprof-run Python samples file"},
      {Replace(good, "gprof-pysamples\t1", "gprof-pysamples\t3"), "format version 3"},
      {Replace(good, "gprof-pysamples\t1", "gprof-pysamples\t2"), "expected the header line \"sampler"},
      {good.substr(0, good.size() - 4), "truncated"},               // "end\n" cut
      {good.substr(0, good.size() - 1), "no newline"},              // "end" without '\n'
      {good.substr(0, good.size() / 2), "truncated"},               // cut mid-file
      {good + "S\t0\t0\t0\n", "text after the end line"},
      {Replace(good, "hz\t1000", "hz\t5000"), "hz 5000"},
      {Replace(good, "hz\t1000", "hz\t0"), "hz 0"},
      {Replace(good, "period_ns\t1000000", "period_ns\t999"), "does not match hz"},
      {Replace(good, "pid\t100", "pid\t-1"), "pid: not a whole number"},
      {Replace(good, "ticks\t4\n", ""), "expected the header line \"ticks"},
      {Replace(good, "F\t1\t3", "F\t7\t3"), "index 7, 1 expected"},
      {Replace(good, "K\t0\t0 1 2", "K\t0\t0 1 9"), "frame 9 is not one of the 6 frames"},
      {Replace(good, "K\t3\t5", "K\t3\t"), "stack: no frames"},
      {Replace(good, "K\t2\t0 4", "K\t2\t0 4 "), "trailing space"},
      {Replace(good, "S\t0\t1\t3", "S\t0\t2\t3"), "no thread 2"},
      {Replace(good, "S\t0\t1\t3", "S\t0\t1\t4"), "no stack 4"},
      {Replace(good, "S\t0\t1\t3", "S\t0\t1"), "expected sample line 1"},
      {Replace(good, "S\t0\t1\t3", "S\t0\t1\t3\t9"), "expected sample line 1"},
      {Replace(good, "S\t1000000", "S\t99999999999999999999"), "not numbers"},
      {Replace(good, "S\t1000000", "S\t4611686018427387904"), "year 2116"},
      {Replace(good, "samples\t5", "samples\t6"), "expected sample line 5"},
      {Replace(good, "samples\t5", "samples\t4"), "expected \"end\""},
      {Replace(good, "MainThread", "Main\\xThread"), "bad escape"},
      {Replace(good, "MainThread", "Main\xff" "Thread"), "invalid UTF-8"},
      {Replace(good, "MainThread", "Main\x01Thread"), "bad escape or invalid UTF-8"},
      {Replace(good, "\tb\n", "\tb\\\n"), "bad escape"},
      {Replace(good, "T\t0\t100", "T\t0\t4294967296"), "tid is not a 32-bit number"},
      {Replace(good, "F\t0\t1\t20\t/w/p.py\t<module>", "F\t0\t1\t20\t/w/p.py"), "5 fields, 6"},
      // Declared counts far beyond the file: read line by line, never reserved.
      {Replace(good, "samples\t5", "samples\t18446744073709551615"), "expected sample line 5"},
      {Replace(good, "frames\t6", "frames\t4294967296"), "more than 2^32"},
  };
  for (const Case& c : cases) {
    PythonSamples s;
    s.pid = 7;
    std::string error;
    EXPECT_FALSE(ParsePythonSamples(c.text, &s, &error)) << c.message;
    EXPECT_NE(error.find(c.message), std::string::npos) << "got: " << error;
    EXPECT_EQ(s.pid, 0u);  // nothing half-read is left
    EXPECT_TRUE(s.samples.empty());
  }
}

TEST(PythonSamples, ReadNamesTheFile) {
  PythonSamples s;
  std::string error;
  EXPECT_FALSE(ReadPythonSamples("/nonexistent/x.1.pysamples", &s, &error));
  EXPECT_NE(error.find("/nonexistent/x.1.pysamples: cannot open"), std::string::npos);
}

TEST(PythonSamples, FoldedStacksRootFirstOneLinePerFunctionStack) {
  PythonSamples s;
  std::string error;
  ASSERT_TRUE(ParsePythonSamples(ValidFile(), &s, &error)) << error;
  uint64_t counted = 0;
  // Stacks 0 and 1 differ only in b's current line (7, 8): one line of 3 samples. ';' or a tab in
  // a name would split a frame: the tab becomes '?'.
  EXPECT_EQ(FoldedStacks(s, 0, UINT64_MAX, &counted),
            "<module> (/w/p.py:1);a (/w/p.py:3);b (/w/p.py:6) 3\n"
            "<module> (/w/p.py:1);c (/w/p.py:9) 1\n"
            "w (/w/tab?name.py:12) 1\n");
  EXPECT_EQ(counted, 5u);
  // Only the samples in [start + 1 ms, start + 2 ms] (a window dump's range).
  EXPECT_EQ(FoldedStacks(s, kStart + kMs, kStart + 2 * kMs, &counted),
            "<module> (/w/p.py:1);a (/w/p.py:3);b (/w/p.py:6) 2\n");
  EXPECT_EQ(counted, 2u);
  s.frames[1].function = "x;y";
  EXPECT_EQ(FoldedStacks(s, kStart + kMs, kStart + kMs),
            "<module> (/w/p.py:1);x:y (/w/p.py:3);b (/w/p.py:6) 1\n");
}

// Samples of one thread at the given ms offsets with the given stacks of frame ids; frame i is
// function "f<i>" at first line i + 1.
PythonSamples Samples(const std::vector<std::pair<double, std::vector<uint32_t>>>& taken,
                      uint32_t frames = 8) {
  PythonSamples s;
  s.pid = 42;
  s.hz = 1000;
  s.period_ns = kMs;
  s.start_ns = kStart;
  s.end_ns = kStart + 100 * kMs;
  s.threads.push_back({42, 1, "MainThread"});
  for (uint32_t i = 0; i < frames; ++i) s.frames.push_back({"p.py", "f" + std::to_string(i), i + 1, i + 1});
  for (const auto& [ms, stack] : taken) {
    s.stacks.push_back(stack);
    s.samples.push_back({kStart + static_cast<uint64_t>(ms * 1e6 + 0.5), 0,
                         static_cast<uint32_t>(s.stacks.size() - 1)});
  }
  return s;
}

struct Expected {
  double ts_ms, end_ms;
  uint32_t depth;
  std::string name;
  uint32_t samples, id, parent;
};

void ExpectSlices(const PythonSliceSet& set, const std::vector<Expected>& expected) {
  ASSERT_EQ(set.slices.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const PythonSlice& s = set.slices[i];
    const Expected& e = expected[i];
    SCOPED_TRACE("slice " + std::to_string(i));
    EXPECT_EQ(s.ts, kStart + static_cast<uint64_t>(e.ts_ms * 1e6 + 0.5));
    EXPECT_EQ(s.end, kStart + static_cast<uint64_t>(e.end_ms * 1e6 + 0.5));
    EXPECT_EQ(s.depth, e.depth);
    EXPECT_EQ(set.names[s.name], e.name);
    EXPECT_EQ(s.samples, e.samples);
    EXPECT_EQ(s.id, e.id);
    EXPECT_EQ(s.parent, e.parent);
  }
}

TEST(PythonSlices, SameFunctionsUnderTheSameCallersMergeAndEndOnePeriodAfterTheLastSample) {
  // 0 ms: f0 f1 f2, 1 ms: f0 f1 f2, 2 ms: f0 f1 f3, 3 ms: f0 f4.
  const PythonSamples s =
      Samples({{0, {0, 1, 2}}, {1, {0, 1, 2}}, {2, {0, 1, 3}}, {3, {0, 4}}});
  const PythonSliceSet set = PythonSlicesFrom(s, 0, UINT64_MAX);
  EXPECT_EQ(set.samples_used, 4u);
  ExpectSlices(set, {
                        {0, 4, 0, "p.py(1): f0", 4, 1, 0},  // last sample 3 ms + 1 period
                        {0, 3, 1, "p.py(2): f1", 3, 2, 1},  // 2 + 1 = 3 (= the cut at 3 ms)
                        {0, 2, 2, "p.py(3): f2", 2, 3, 2},  // 1 + 1 = 2
                        {2, 3, 2, "p.py(4): f3", 1, 4, 2},
                        {3, 4, 1, "p.py(5): f4", 1, 5, 1},
                    });
}

TEST(PythonSlices, ASampleSoonerThanOnePeriodCutsTheSliceItEnds) {
  // Jitter: 0, 1.6, 2.2 ms. f1 ends at min(0 + 1, 1.6) = 1; f2 at min(2.6, 2.2) = 2.2, where the
  // next f1 starts (siblings never overlap); the range ends at 2.5 ms.
  const PythonSamples s = Samples({{0, {0, 1}}, {1.6, {0, 2}}, {2.2, {0, 1}}});
  const PythonSliceSet set = PythonSlicesFrom(s, 0, kStart + 5 * kMs / 2);
  ExpectSlices(set, {
                        {0, 2.5, 0, "p.py(1): f0", 3, 1, 0},
                        {0, 1, 1, "p.py(2): f1", 1, 2, 1},
                        {1.6, 2.2, 1, "p.py(3): f2", 1, 3, 1},
                        {2.2, 2.5, 1, "p.py(2): f1", 1, 4, 1},
                    });
}

TEST(PythonSlices, AFunctionUnderAnotherCallerIsAnotherSlice) {
  // f3 runs in both samples, but under f1 then under f2: two slices, each nested in its caller.
  const PythonSamples s = Samples({{0, {0, 1, 3}}, {1, {0, 2, 3}}});
  ExpectSlices(PythonSlicesFrom(s, 0, UINT64_MAX),
               {
                   {0, 2, 0, "p.py(1): f0", 2, 1, 0},
                   {0, 1, 1, "p.py(2): f1", 1, 2, 1},
                   {0, 1, 2, "p.py(4): f3", 1, 3, 2},
                   {1, 2, 1, "p.py(3): f2", 1, 4, 1},
                   {1, 2, 2, "p.py(4): f3", 1, 5, 4},
               });
}

TEST(PythonSlices, SamplesOutsideTheRangeAreLeftOutAndCounted) {
  const PythonSamples s = Samples({{0, {0}}, {1, {0}}, {2, {0}}, {3, {0}}});
  const PythonSliceSet set = PythonSlicesFrom(s, kStart + kMs, kStart + 2 * kMs);
  EXPECT_EQ(set.samples_used, 2u);
  EXPECT_EQ(set.samples_outside, 2u);
  ExpectSlices(set, {{1, 2, 0, "p.py(1): f0", 2, 1, 0}});  // 2 + 1 = 3, cut at the range's end
}

TEST(PythonSlices, ThreadsGetATrackEachUnknownTidsByIdent) {
  PythonSamples s = Samples({{0, {0}}, {1, {0}}});
  s.threads.push_back({0, 77, ""});
  s.threads.push_back({0, 78, "worker"});
  s.threads.push_back({42, 1, "renamed"});  // the main thread again, renamed: same track
  s.samples.push_back({kStart, 1, 0});
  s.samples.push_back({kStart, 2, 0});
  s.samples.push_back({kStart + 2 * kMs, 3, 0});
  const PythonSliceSet set = PythonSlicesFrom(s, 0, UINT64_MAX);
  ASSERT_EQ(set.tracks.size(), 3u);
  EXPECT_EQ(set.tracks[0].os_tid, 42u);
  EXPECT_EQ(set.tracks[0].thread_name, "MainThread");
  EXPECT_EQ(set.tracks[1].ident, 77u);
  EXPECT_EQ(set.tracks[2].thread_name, "worker");
  // Main thread: one slice over its three samples (0, 1, 2 ms -> 3 ms).
  ASSERT_EQ(set.slices.size(), 3u);
  EXPECT_EQ(set.slices[0].track, 0u);
  EXPECT_EQ(set.slices[0].samples, 3u);
  EXPECT_EQ(set.slices[0].end, kStart + 3 * kMs);
  EXPECT_EQ(set.slices[1].track, 1u);
  EXPECT_EQ(set.slices[2].track, 2u);
}

TEST(PythonSlices, TraceJsonHasPythonFunctionSlicesOnTracksOfTheirOwnThatPassTheChecker) {
  Profile p;
  p.info.pid = 42;
  p.info.program = "p.py";
  p.info.start_ns = kStart;
  p.info.end_ns = kStart + 10 * kMs;
  const PythonSamples s =
      Samples({{0, {0, 1, 2}}, {1, {0, 1, 2}}, {2, {0, 1, 3}}, {3, {0, 4}}});
  const PythonSliceSet set = PythonSlicesFrom(s, p.info.start_ns, p.info.end_ns);
  const std::string text = FormatTraceJson(p, "trace.json", &set);
  EXPECT_TRUE(CheckTraceText(text).empty());
  const nlohmann::json doc = nlohmann::json::parse(text);
  int slices = 0;
  bool named = false;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e.value("name", "") == "thread_name" && e["tid"] == kFirstSyntheticTid) {
      EXPECT_EQ(e["args"]["name"], "MainThread (thread 42): Python stacks, sampled at 1000 Hz");
      named = true;
    }
    if (e.value("cat", "") != "python_function") continue;
    ++slices;
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["pid"], 42);
    EXPECT_EQ(e["tid"], kFirstSyntheticTid);
    EXPECT_EQ(e["args"]["sampled"], true);
    if (e["name"] == "p.py(2): f1") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 3000.0);  // us
      EXPECT_EQ(e["args"]["Python id"], 2);
      EXPECT_EQ(e["args"]["Python parent id"], 1);
      EXPECT_EQ(e["args"]["samples"], 3);
    }
  }
  EXPECT_EQ(slices, 5);
  EXPECT_TRUE(named);
  // Without samples the trace is as before.
  EXPECT_EQ(FormatTraceJson(p, "trace.json", nullptr), FormatTraceJson(p, "trace.json"));
}

}  // namespace
}  // namespace gprof
