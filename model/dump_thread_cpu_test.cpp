// Thread CPU samples in the dump (model/dump.h): they round-trip, a dump without them reads back
// with none, and a reader that does not know their section skips it (how a gprof-run older than
// the samples reads a dump that has them).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/dump.h"
#include "model/dump_codec.h"

namespace gprof {
namespace {

std::string TempPath(const char* tag) {
  return testing::TempDir() + "/threadcpu_" + tag + "." + std::to_string(::getpid()) +
         kDumpExtension;
}

Profile WithSamples() {
  Profile p;
  p.info.start_ns = 1'000;
  p.info.end_ns = 9'000;
  p.api_calls.push_back({1'200, 1'300, 11, 4242, 505, ApiDomain::kRuntime, 0, 0});
  p.thread_cpu.push_back({1'000, 5'000'000, 70, 4242, 0});
  p.thread_cpu.push_back({1'000, 300, 0, 4243, 0});
  p.thread_cpu.push_back({9'000, 5'007'000, 90, 4242, 0});
  return p;
}

std::vector<char> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(DumpThreadCpu, SamplesRoundTripFieldByField) {
  const std::string path = TempPath("roundtrip");
  const Profile p = WithSamples();
  ASSERT_EQ(WriteDump(p, path), "");
  Profile back;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &back, &error)) << error;
  ASSERT_EQ(back.thread_cpu.size(), 3u);
  EXPECT_EQ(back.thread_cpu[2].ts_ns, 9'000u);
  EXPECT_EQ(back.thread_cpu[2].cpu_ns, 5'007'000u);
  EXPECT_EQ(back.thread_cpu[2].wait_ns, 90u);
  EXPECT_EQ(back.thread_cpu[2].tid, 4242u);
  EXPECT_EQ(back.thread_cpu[1].tid, 4243u);
  EXPECT_EQ(back.thread_cpu[1].cpu_ns, 300u);
  std::remove(path.c_str());
}

// A dump written without samples (as every dump before them) reads with none, and is byte for
// byte what it was: the section is left out, not written empty.
TEST(DumpThreadCpu, ADumpWithoutSamplesHasNoSectionAndReadsBackWithNone) {
  const std::string with = TempPath("with"), without = TempPath("without");
  Profile p = WithSamples();
  ASSERT_EQ(WriteDump(p, with), "");
  p.thread_cpu.clear();
  ASSERT_EQ(WriteDump(p, without), "");
  // 16 bytes of section header and 3 samples of 32 bytes.
  EXPECT_EQ(ReadBytes(with).size(), ReadBytes(without).size() + 16 + 3 * 32);
  Profile back;
  std::string error;
  ASSERT_TRUE(ReadDump(without, &back, &error)) << error;
  EXPECT_TRUE(back.thread_cpu.empty());
  EXPECT_EQ(back.api_calls.size(), 1u);
  std::remove(with.c_str());
  std::remove(without.c_str());
}

// An older reader does not know the samples' tag: the same file with that tag changed to one no
// reader knows (checksum recomputed) reads, without samples, everything else intact.
TEST(DumpThreadCpu, AReaderThatDoesNotKnowTheSectionSkipsIt) {
  const std::string path = TempPath("unknown");
  ASSERT_EQ(WriteDump(WithSamples(), path), "");
  std::vector<char> bytes = ReadBytes(path);
  const uint32_t tag = dump_detail::kThreadCpu, size = sizeof(ThreadCpuSample);
  char header[8];
  std::memcpy(header, &tag, 4);
  std::memcpy(header + 4, &size, 4);
  auto it = std::search(bytes.begin(), bytes.end(), header, header + 8);
  ASSERT_NE(it, bytes.end());
  const uint32_t unknown = 0x7777;
  std::memcpy(&*it, &unknown, 4);
  const size_t body = bytes.size() - 24;  // the trailer: tag, 0, checksum, "GPROFEND"
  const uint64_t sum = DumpChecksum(bytes.data(), body);
  std::memcpy(bytes.data() + body + 8, &sum, 8);
  Profile back;
  std::string error;
  ASSERT_TRUE(ParseDump(bytes, "patched", &back, &error)) << error;
  EXPECT_TRUE(back.thread_cpu.empty());
  EXPECT_EQ(back.api_calls.size(), 1u);
  std::remove(path.c_str());
}

// A whole run in segments: each segment's samples, joined.
TEST(DumpThreadCpu, SegmentsJoinTheirSamples) {
  const std::string path = TempPath("segments");
  SegmentedDumpWriter w;
  ASSERT_EQ(w.Open(path), "");
  Profile p = WithSamples();
  ASSERT_EQ(w.Append(p, false), "");
  p.api_calls.clear();
  p.thread_cpu = {{12'000, 5'010'000, 95, 4242, 0}};
  ASSERT_EQ(w.Append(p, true), "");
  ASSERT_EQ(w.Publish(), "");
  Profile back;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &back, &error)) << error;
  ASSERT_EQ(back.thread_cpu.size(), 4u);
  EXPECT_EQ(back.thread_cpu[3].ts_ns, 12'000u);
  EXPECT_EQ(back.thread_cpu[3].cpu_ns, 5'010'000u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gprof
