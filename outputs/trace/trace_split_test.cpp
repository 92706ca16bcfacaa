// Unit tests: a profile cut by time keeps every event exactly once and each GPU record with its
// launch; a capped trace is written as parts that each fit, pass the checker and together hold
// every event of the whole trace.
#include "outputs/trace/trace_split.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/samples/cpu_samples.h"
#include "outputs/trace/gzip_file.h"
#include "outputs/trace/trace_check.h"

namespace gprof {
namespace {

// n launches 10 us apart (call, then its kernel 5 us later, with the kernel ending after the
// next call starts for some), an NVTX range around every 10 launches, a mark every 100, and the
// kernels of the last 5 launches starting after every later call: a launch near a cut has its
// kernel on the other side of it by time, though not by part.
Profile Launches(int n) {
  Profile p;
  p.info.pid = 4242;
  p.info.start_ns = 1'700'000'000'000'000'000ull;
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.launch_configs.push_back({});
  const StringId k = p.strings.Intern("kernel");
  const StringId r = p.strings.Intern("range");
  const StringId m = p.strings.Intern("mark");
  for (int i = 0; i < n; ++i) {
    const uint64_t t = p.info.start_ns + 1'000'000ull + i * 10'000ull;
    const uint32_t corr = 1000 + i;
    p.api_calls.push_back({t, t + 4'000, corr, 4242, 211, ApiDomain::kRuntime, 0, 0});
    const uint64_t k_start = t + 5'000 + (i >= n - 5 ? 100'000 : 0);
    p.kernels.push_back({k_start, k_start + 2'000, corr, k, 0, 7});
    if (i % 10 == 0) p.ranges.push_back({t - 100, t + 95'000, r, 4242, 0, 0, 0});
    if (i % 100 == 0) p.marks.push_back({t + 1, m, 4242, 0, 0, 0});
  }
  return p;
}

TEST(SliceProfileByTime, EveryEventOnceAndGpuRecordsWithTheirCall) {
  const Profile p = Launches(1000);
  const std::vector<Profile> parts = SliceProfileByTime(p, 4);
  ASSERT_EQ(parts.size(), 4u);
  size_t ranges = 0, marks = 0, calls = 0, kernels = 0;
  uint64_t previous_last = 0;
  for (const Profile& part : parts) {
    ranges += part.ranges.size();
    marks += part.marks.size();
    calls += part.api_calls.size();
    kernels += part.kernels.size();
    EXPECT_GT(part.api_calls.size(), 200u);  // about a quarter each
    std::set<uint32_t> corr;
    for (const ApiCall& c : part.api_calls) corr.insert(c.correlation_id);
    for (const Kernel& k : part.kernels) EXPECT_TRUE(corr.count(k.correlation_id)) << k.correlation_id;
    // Parts follow each other in time.
    EXPECT_GE(part.api_calls.front().start_ns, previous_last);
    previous_last = part.api_calls.back().start_ns;
    EXPECT_EQ(part.strings.size(), p.strings.size());
  }
  EXPECT_EQ(ranges, p.ranges.size());
  EXPECT_EQ(marks, p.marks.size());
  EXPECT_EQ(calls, p.api_calls.size());
  EXPECT_EQ(kernels, p.kernels.size());
}

TEST(TracePartPath, PartGoesBeforeJson) {
  EXPECT_EQ(TracePartPath("/d/trace.json", 2), "/d/trace.part2.json");
  EXPECT_EQ(TracePartPath("/d/x.1.trace.json.gz", 10), "/d/x.1.trace.part10.json.gz");
  EXPECT_EQ(TracePartPath("/d.json/trace", 1), "/d.json/trace.part1");
}

std::string Temp(const std::string& name) {
  return testing::TempDir() + "/split_" + std::to_string(::getpid()) + "_" + name;
}

// Complete events ("X") by name, from a trace file (gzip or not).
std::map<std::string, int> CompleteEvents(const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(ReadMaybeGzip(path));
  std::map<std::string, int> n;
  for (const auto& e : j.at("traceEvents")) {
    if (e.value("ph", "") == "X") ++n[e.value("name", "")];
  }
  return n;
}

size_t FileSize(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return static_cast<size_t>(in.tellg());
}

class CappedTrace : public ::testing::TestWithParam<const char*> {};

TEST_P(CappedTrace, PartsFitPassTheCheckerAndHoldEveryEventOnce) {
  const Profile p = Launches(3000);
  const std::string whole = Temp(std::string("whole.") + GetParam());
  ASSERT_EQ(WriteTraceJsonCapped(p, whole, 0), std::vector<std::string>{whole});
  const size_t whole_bytes = ReadMaybeGzip(whole).size();
  const uint64_t cap = whole_bytes / 3;
  const std::vector<std::string> parts =
      WriteTraceJsonCapped(p, Temp(std::string("capped.") + GetParam()), cap);
  ASSERT_GE(parts.size(), 3u);
  std::map<std::string, int> together;
  for (const std::string& part : parts) {
    EXPECT_LE(ReadMaybeGzip(part).size(), cap) << part;
    EXPECT_TRUE(CheckTrace(part).empty()) << part;
    for (const auto& [name, n] : CompleteEvents(part)) together[name] += n;
  }
  EXPECT_EQ(together, CompleteEvents(whole));
  EXPECT_EQ(together.at("kernel"), 3000);
  EXPECT_GT(FileSize(parts[0]), 0u);
}

INSTANTIATE_TEST_SUITE_P(JsonAndGzip, CappedTrace, ::testing::Values("json", "json.gz"));

// --cpu-sampling: one sample 2 us after each launch (alternately in fn_a and fn_b). Cuts fall on
// a launch, a range (100 ns before a launch) or a mark (1 ns after one), never inside the 2 us
// between a launch and its sample, so each part holds exactly the samples of its own launches:
// per part, the cpu_sample instants' times are its cudaLaunchKernel times + 2 us, and the 1000
// samples are all there once.
TEST(CappedTrace, EachPartHasTheCpuSamplesTakenInItsTime) {
  Profile p = Launches(1000);
  p.stacks = {{0, 1}, {1, 1}};
  p.stack_pcs = {0x1000, 0x2000};
  for (size_t i = 0; i < p.api_calls.size(); ++i) {
    p.cpu_samples.push_back({p.api_calls[i].start_ns + 2'000, 4242, static_cast<uint32_t>(i % 2),
                             10'000});
  }
  p.cpu_sample_counters = {100'000, kCpuSamplesPerf, p.cpu_samples.size(), 0};
  CpuSampleNames names;
  names.function = {"fn_a", "fn_b"};
  names.location = {"", ""};
  names.frames_outermost_first = {{"main", "fn_a"}, {"main", "fn_b"}};
  const std::string whole = Temp("samples_whole.json");
  WriteTraceJsonCapped(p, whole, 0, nullptr, &names);
  const std::vector<std::string> parts = WriteTraceJsonCapped(
      p, Temp("samples_capped.json"), ReadMaybeGzip(whole).size() / 3, nullptr, &names);
  ASSERT_GE(parts.size(), 3u);
  const auto ns = [](const nlohmann::json& e) {
    return static_cast<uint64_t>(e.at("ts").get<double>() * 1000 + 0.5);
  };
  size_t samples = 0;
  for (const std::string& part : parts) {
    const nlohmann::json j = nlohmann::json::parse(ReadMaybeGzip(part));
    std::multiset<uint64_t> launches_plus_2us, sampled;
    for (const auto& e : j.at("traceEvents")) {
      if (e.value("name", "") == "cudaLaunchKernel") launches_plus_2us.insert(ns(e) + 2'000);
      if (e.value("cat", "") == "cpu_sample") sampled.insert(ns(e));
    }
    EXPECT_EQ(sampled, launches_plus_2us) << part;
    EXPECT_TRUE(CheckTrace(part).empty()) << part;
    samples += sampled.size();
  }
  EXPECT_EQ(samples, 1000u);
}

TEST(CappedTrace, UnderTheCapIsOneFileAtThePath) {
  const std::string path = Temp("small.json");
  EXPECT_EQ(WriteTraceJsonCapped(Launches(10), path, 1 << 30), std::vector<std::string>{path});
}

}  // namespace
}  // namespace gprof
