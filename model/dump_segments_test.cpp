// Dumps written in segments (format version 6, SegmentedDumpWriter): what a reader gets back
// from several segments, from a file a killed program left, and from broken segment chains.
// Expected values are worked out by hand from the records each test writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/dump.h"
#include "model/dump_segment_reader.h"
#include "model/gpu_checks.h"

namespace gprof {
namespace {

std::string TempPath(const char* tag) {
  return testing::TempDir() + "/" + tag + "." + std::to_string(::getpid()) + kDumpExtension;
}

std::vector<char> Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

ApiCall Launch(uint32_t id, uint64_t start) {
  return {start, start + 100, id, 7, 211, ApiDomain::kRuntime, kApiCallLaunch, 0};
}

Kernel KernelOf(uint32_t id, uint64_t start, StringId name, uint32_t config) {
  return {start, start + 50, id, name, config, 1};
}

// The run the collector would hold: tables that grow, records emptied after each Append.
// Segment 0: launches 1 and 2, the kernel of 1, a range [100, 900] and a mark; launch 2's kernel
// comes in segment 1 (it finished after segment 0 was cut), with launch 3 (no kernel ever) and a
// range [50, 1500] that opened before segment 0's range and closed in segment 1. Segment 1 adds
// a string, a domain, a launch config, an API name and a stack.
struct TwoSegments {
  std::string path;
  std::string temp;
  std::vector<char> first_segment_only;  // the file as it was after segment 0
};

TwoSegments WriteTwoSegments(const char* tag, bool publish) {
  TwoSegments out;
  out.path = TempPath(tag);
  SegmentedDumpWriter w;
  EXPECT_EQ(w.Open(out.path), "");
  Profile run;
  run.info.pid = 77;
  run.info.program = "long";
  run.info.start_ns = 10;
  run.info.end_ns = 1000;
  const StringId k1 = run.strings.Intern("kernel_a");
  run.threads.push_back({7, run.strings.Intern("main")});
  run.launch_configs.push_back({{1, 1, 1}, {32, 1, 1}, 16, 0, 0, 0, 0, 0, 0});
  run.api_names.push_back({211, ApiDomain::kRuntime, 0, run.strings.Intern("cudaLaunchKernel")});
  run.api_calls = {Launch(1, 200), Launch(2, 300)};
  run.kernels = {KernelOf(1, 250, k1, 0)};
  run.ranges = {{100, 900, run.strings.Intern("inner"), 7, 0, 0, 0}};
  run.marks = {{400, run.strings.Intern("mark"), 7, 0, 0, 0}};
  run.counters.cupti_dropped_records = 2;
  EXPECT_EQ(w.Append(run, /*last=*/false), "");
  out.temp = w.temp_path();
  out.first_segment_only = Bytes(out.temp);

  run.api_calls.clear();
  run.kernels.clear();
  run.ranges.clear();
  run.marks.clear();
  run.counters = Counters{};
  run.info.end_ns = 2000;
  const StringId k2 = run.strings.Intern("kernel_b");
  run.domains.push_back(run.strings.Intern("segment-1-domain"));
  run.launch_configs.push_back({{2, 1, 1}, {64, 1, 1}, 16, 0, 0, 0, 0, 0, 0});
  run.api_names.push_back({1, ApiDomain::kDriver, 0, run.strings.Intern("cuInit")});
  run.stacks.push_back({0, 2});
  run.stack_pcs = {0x1000, 0x2000};
  run.threads.push_back({8, run.strings.Intern("worker")});
  run.api_calls = {Launch(3, 1100)};
  run.kernels = {KernelOf(2, 1050, k2, 1)};
  run.ranges = {{50, 1500, run.strings.Intern("outer"), 7, 1, 0, 0}};
  run.counters.cupti_dropped_records = 3;
  EXPECT_EQ(w.Append(run, /*last=*/publish), "");
  if (publish) {
    EXPECT_EQ(w.Publish(), "");
  }
  return out;
}

TEST(DumpSegments, TwoSegmentsReadBackAsOneRunWithIdsOfTheRun) {
  const TwoSegments t = WriteTwoSegments("seg2", /*publish=*/true);
  Profile p;
  std::string error;
  ASSERT_TRUE(ReadDump(t.path, &p, &error)) << error;
  EXPECT_EQ(p.info.segments, 2u);
  EXPECT_TRUE(p.info.complete);
  EXPECT_EQ(p.info.start_ns, 10u);   // the first segment's start
  EXPECT_EQ(p.info.end_ns, 2000u);   // the last segment's end
  ASSERT_EQ(p.api_calls.size(), 3u);
  ASSERT_EQ(p.kernels.size(), 2u);
  // Segment 1's kernel names the string and the launch config segment 1 added.
  EXPECT_EQ(p.strings.Get(p.kernels[1].name), "kernel_b");
  EXPECT_EQ(p.launch_configs.size(), 2u);
  EXPECT_EQ(p.kernels[1].launch_config, 1u);
  EXPECT_EQ(p.launch_configs[1].grid[0], 2u);
  ASSERT_EQ(p.domains.size(), 2u);
  EXPECT_EQ(p.strings.Get(p.domains[1]), "segment-1-domain");
  ASSERT_EQ(p.api_names.size(), 2u);
  EXPECT_EQ(p.strings.Get(p.api_names[1].name), "cuInit");
  ASSERT_EQ(p.stacks.size(), 1u);
  EXPECT_EQ(p.stack_pcs, (std::vector<uint64_t>{0x1000, 0x2000}));
  // Threads come whole in each segment: main once, worker once.
  ASSERT_EQ(p.threads.size(), 2u);
  EXPECT_EQ(p.strings.Get(p.threads[0].name), "main");
  EXPECT_EQ(p.strings.Get(p.threads[1].name), "worker");
  // Counters are deltas per segment: 2 + 3.
  EXPECT_EQ(p.counters.cupti_dropped_records, 5u);
  // The range that opened first comes first, though segment 1 wrote it.
  ASSERT_EQ(p.ranges.size(), 2u);
  EXPECT_EQ(p.strings.Get(p.ranges[0].name), "outer");
  EXPECT_EQ(p.strings.Get(p.ranges[1].name), "inner");
  // Over the whole run: launch 2's kernel found its call (segment 0), so nothing is uncorrelated;
  // launch 3 has no kernel: one launch without records. Per segment, segment 1 alone would have
  // counted kernel 2 as uncorrelated and launch 2 (segment 0) as without records.
  EXPECT_EQ(p.counters.gpu_records_uncorrelated, 0u);
  EXPECT_EQ(p.counters.gpu_launches_without_records, 1u);
  EXPECT_EQ(p.counters.gpu_records_before_launch, 0u);
  std::remove(t.path.c_str());
}

TEST(DumpSegments, AFileLeftAfterOneSegmentReadsThatSegmentAsIncomplete) {
  const TwoSegments t = WriteTwoSegments("seg-killed", /*publish=*/false);
  // What a program killed after segment 0 leaves: segment 0 complete, not marked last.
  const std::string left = TempPath("seg-killed-copy");
  std::ofstream(left, std::ios::binary)
      .write(t.first_segment_only.data(), static_cast<std::streamsize>(t.first_segment_only.size()));
  Profile p;
  std::string error;
  ASSERT_TRUE(ReadDump(left, &p, &error)) << error;
  EXPECT_FALSE(p.info.complete);
  EXPECT_EQ(p.info.segments, 1u);
  EXPECT_EQ(p.info.incomplete_tail_bytes, 0u);
  EXPECT_EQ(p.api_calls.size(), 2u);
  EXPECT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.info.end_ns, 1000u);
  std::remove(left.c_str());
  std::remove(t.temp.c_str());
}

TEST(DumpSegments, ALastSegmentCutShortIsDroppedAndItsBytesCounted) {
  const TwoSegments t = WriteTwoSegments("seg-cut", /*publish=*/true);
  std::vector<char> bytes = Bytes(t.path);
  const size_t first = t.first_segment_only.size();
  ASSERT_GT(bytes.size(), first + 40);
  // Killed while writing segment 1: every cut inside it keeps segment 0 and counts the rest.
  for (size_t keep : {first + 1, first + 16, first + 40, bytes.size() - 1}) {
    const std::string cut = TempPath("seg-cut-copy");
    std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
    Profile p;
    std::string error;
    ASSERT_TRUE(ReadDump(cut, &p, &error)) << keep << ": " << error;
    EXPECT_FALSE(p.info.complete) << keep;
    EXPECT_EQ(p.info.segments, 1u) << keep;
    EXPECT_EQ(p.info.incomplete_tail_bytes, keep - first) << keep;
    EXPECT_EQ(p.kernels.size(), 1u) << keep;
    std::remove(cut.c_str());
  }
  std::remove(t.path.c_str());
}

TEST(DumpSegments, ACorruptSecondSegmentFailsTheWholeReadNamingIt) {
  const TwoSegments t = WriteTwoSegments("seg-corrupt", /*publish=*/true);
  std::vector<char> bytes = Bytes(t.path);
  bytes[t.first_segment_only.size() + 200] ^= 0x10;  // inside segment 1's sections
  const std::string bad = TempPath("seg-corrupt-copy");
  std::ofstream(bad, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  Profile p;
  std::string error;
  EXPECT_FALSE(ReadDump(bad, &p, &error));
  EXPECT_NE(error.find("segment 1"), std::string::npos) << error;
  std::remove(bad.c_str());
  std::remove(t.path.c_str());
}

TEST(DumpSegments, TwoDumpsGluedTogetherAreRefusedNotMerged) {
  // Two whole one-segment dumps in a row: the second says it is segment 0 again, and the first is
  // marked last, so the bytes after it are refused.
  Profile a;
  a.info.pid = 1;
  const std::string pa = TempPath("seg-glue-a");
  ASSERT_EQ(WriteDump(a, pa), "");
  std::vector<char> bytes = Bytes(pa);
  const std::vector<char> again = bytes;
  bytes.insert(bytes.end(), again.begin(), again.end());
  const std::string glued = TempPath("seg-glue");
  std::ofstream(glued, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  Profile p;
  std::string error;
  EXPECT_FALSE(ReadDump(glued, &p, &error));
  EXPECT_NE(error.find("after the last segment"), std::string::npos) << error;
  std::remove(pa.c_str());
  std::remove(glued.c_str());
}

TEST(DumpSegments, AOneSegmentDumpIsTheSameAsWriteDump) {
  Profile p;
  p.info.pid = 9;
  p.info.program = "short";
  p.api_calls = {Launch(1, 5)};
  const std::string a = TempPath("seg-one-a"), b = TempPath("seg-one-b");
  ASSERT_EQ(WriteDump(p, a), "");
  SegmentedDumpWriter w;
  ASSERT_EQ(w.Open(b), "");
  ASSERT_EQ(w.Append(p, /*last=*/true), "");
  ASSERT_EQ(w.Publish(), "");
  EXPECT_EQ(Bytes(a), Bytes(b));
  std::remove(a.c_str());
  std::remove(b.c_str());
}

// DumpSegmentReader: the same file one segment at a time. By hand from WriteTwoSegments: segment 0
// holds launches 1 and 2, kernel 1, range "inner" and the mark; segment 1 launch 3, kernel 2 and
// range "outer", with the string, launch config and thread it added; the counters are summed
// (2 + 3); after the last, Next says the end with no error.
TEST(DumpSegments, ASegmentReaderHoldsOnlyTheSegmentItReadWithTheRunsTables) {
  const TwoSegments t = WriteTwoSegments("segreader", /*publish=*/true);
  DumpSegmentReader r;
  std::string error;
  ASSERT_TRUE(r.Open(t.path, &error)) << error;
  ASSERT_TRUE(r.Next(&error)) << error;
  EXPECT_EQ(r.segments_read(), 1u);
  EXPECT_FALSE(r.complete());
  EXPECT_EQ(r.profile().api_calls.size(), 2u);
  EXPECT_EQ(r.profile().kernels.size(), 1u);
  ASSERT_EQ(r.profile().ranges.size(), 1u);
  EXPECT_EQ(r.profile().strings.Get(r.profile().ranges[0].name), "inner");
  EXPECT_EQ(r.profile().marks.size(), 1u);
  ASSERT_TRUE(r.Next(&error)) << error;
  EXPECT_EQ(r.segments_read(), 2u);
  EXPECT_TRUE(r.complete());
  ASSERT_EQ(r.profile().api_calls.size(), 1u);
  EXPECT_EQ(r.profile().api_calls[0].correlation_id, 3u);
  ASSERT_EQ(r.profile().kernels.size(), 1u);
  EXPECT_EQ(r.profile().strings.Get(r.profile().kernels[0].name), "kernel_b");
  EXPECT_EQ(r.profile().launch_configs.size(), 2u);
  ASSERT_EQ(r.profile().ranges.size(), 1u);
  EXPECT_EQ(r.profile().strings.Get(r.profile().ranges[0].name), "outer");
  EXPECT_TRUE(r.profile().marks.empty());
  EXPECT_EQ(r.profile().threads.size(), 2u);
  EXPECT_EQ(r.profile().counters.cupti_dropped_records, 5u);
  EXPECT_EQ(r.profile().info.start_ns, 10u);
  EXPECT_EQ(r.profile().info.end_ns, 2000u);
  EXPECT_FALSE(r.Next(&error));
  EXPECT_EQ(error, "");
  std::filesystem::remove(t.path);
}

// A file a killed program left (segment 0 complete, segment 1 never written): one segment, then
// the end, as ReadDump reads it; a file that is not a dump is an error naming it.
TEST(DumpSegments, ASegmentReaderStopsAtACutShortTailAndRefusesANonDump) {
  const TwoSegments t = WriteTwoSegments("segreader-cut", /*publish=*/false);
  const std::string cut = TempPath("segreader-cut-copy");
  {
    std::ofstream out(cut, std::ios::binary);
    out.write(t.first_segment_only.data(), static_cast<std::streamsize>(t.first_segment_only.size()));
    out.write("GPROF", 5);  // the start of a segment that was never finished
  }
  DumpSegmentReader r;
  std::string error;
  ASSERT_TRUE(r.Open(cut, &error)) << error;
  ASSERT_TRUE(r.Next(&error)) << error;
  EXPECT_FALSE(r.Next(&error));
  EXPECT_EQ(error, "");
  EXPECT_FALSE(r.complete());
  {
    std::ofstream out(cut, std::ios::binary | std::ios::trunc);
    out << "not a dump at all";
  }
  DumpSegmentReader bad;
  ASSERT_TRUE(bad.Open(cut, &error)) << error;
  EXPECT_FALSE(bad.Next(&error));
  EXPECT_NE(error.find(cut), std::string::npos) << error;
  std::filesystem::remove(cut);
  std::filesystem::remove(t.temp);
}

// The checks of a whole read, made segment by segment (SegmentedGpuChecks): the counters ReadDump
// sets over the run (launch 2's kernel, stored in segment 1, is linked; launch 3 never got work),
// and launch 2's kernel put back into segment 0 with its call by PlaceInFlight.
TEST(DumpSegments, SegmentedGpuChecksCountAsAWholeReadAndPutInFlightWorkWithItsCall) {
  const TwoSegments t = WriteTwoSegments("segchecks", /*publish=*/true);
  Profile whole;
  std::string error;
  ASSERT_TRUE(ReadDump(t.path, &whole, &error)) << error;
  EXPECT_EQ(whole.counters.gpu_records_uncorrelated, 0u);
  EXPECT_EQ(whole.counters.gpu_launches_without_records, 1u);

  SegmentedGpuChecks checks;
  DumpSegmentReader r;
  ASSERT_TRUE(r.Open(t.path, &error)) << error;
  while (r.Next(&error)) checks.Add(r.profile());
  ASSERT_EQ(error, "");
  Profile run;
  run.counters.gpu_records_uncorrelated = 9;  // what the segments alone said is replaced
  checks.Finish(&run);
  EXPECT_EQ(run.counters.gpu_records_uncorrelated, whole.counters.gpu_records_uncorrelated);
  EXPECT_EQ(run.counters.gpu_launches_without_records,
            whole.counters.gpu_launches_without_records);
  EXPECT_EQ(run.counters.gpu_records_before_launch, whole.counters.gpu_records_before_launch);
  EXPECT_EQ(checks.in_flight(), 1u);

  DumpSegmentReader again;
  ASSERT_TRUE(again.Open(t.path, &error)) << error;
  ASSERT_TRUE(again.Next(&error)) << error;
  checks.PlaceInFlight(0, again.mutable_profile());
  ASSERT_EQ(again.profile().kernels.size(), 2u);  // its own, and launch 2's from segment 1
  EXPECT_EQ(again.profile().kernels[1].correlation_id, 2u);
  ASSERT_TRUE(again.Next(&error)) << error;
  checks.PlaceInFlight(1, again.mutable_profile());
  EXPECT_TRUE(again.profile().kernels.empty());
  std::filesystem::remove(t.path);
}

}  // namespace
}  // namespace gprof
