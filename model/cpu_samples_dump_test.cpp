// The --cpu-sampling sections of the dump: samples and their counters come back as written, a
// sample whose stack index is past the stack table is refused, and a dump without sampling has
// neither section (so its bytes are those of a build without the feature).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "model/dump.h"
#include "model/profile.h"

namespace gprof {
namespace {

std::string SamplePath(const char* tag) {
  return testing::TempDir() + "/cpusamples_" + tag + "." + std::to_string(::getpid()) +
         kDumpExtension;
}

Profile SampledProfile() {
  Profile p;
  p.stack_pcs = {0x401010, 0x401020, 0x401030};
  p.stacks = {{0, 2}, {2, 1}};
  p.cpu_samples = {{1000, 11, 0, 500}, {2000, 11, 1, 500}, {3000, 12, 0, 4000000}};
  p.cpu_sample_counters = {997, kCpuSamplesTimer, 3, 4};
  return p;
}

TEST(CpuSamplesDump, SamplesAndCountersRoundTrip) {
  const std::string path = SamplePath("roundtrip");
  ASSERT_EQ(WriteDump(SampledProfile(), path), "");
  Profile back;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &back, &error)) << error;
  ASSERT_EQ(back.cpu_samples.size(), 3u);
  EXPECT_EQ(back.cpu_samples[1].time_ns, 2000u);
  EXPECT_EQ(back.cpu_samples[1].stack, 1u);
  EXPECT_EQ(back.cpu_samples[2].tid, 12u);
  EXPECT_EQ(back.cpu_samples[2].cpu_ns, 4000000u);
  EXPECT_EQ(back.cpu_sample_counters.hz, 997u);
  EXPECT_EQ(back.cpu_sample_counters.backend, kCpuSamplesTimer);
  EXPECT_EQ(back.cpu_sample_counters.taken, 3u);
  EXPECT_EQ(back.cpu_sample_counters.dropped, 4u);
  ::unlink(path.c_str());
}

TEST(CpuSamplesDump, SampleWithAStackPastTheTableIsRefused) {
  const std::string path = SamplePath("badstack");
  Profile p = SampledProfile();
  p.cpu_samples.push_back({4000, 11, 2, 500});  // two stacks: index 2 is past the table
  ASSERT_EQ(WriteDump(p, path), "");
  Profile back;
  std::string error;
  EXPECT_FALSE(ReadDump(path, &back, &error));
  EXPECT_NE(error.find("CPU sample"), std::string::npos) << error;
  ::unlink(path.c_str());
}

TEST(CpuSamplesDump, NoSamplingWritesNoSamplingSections) {
  const std::string off = SamplePath("off");
  ASSERT_EQ(WriteDump(Profile{}, off), "");
  const std::string on = SamplePath("on");
  Profile with;
  with.cpu_sample_counters.hz = 100;  // sampling on, nothing sampled: the counters section only
  ASSERT_EQ(WriteDump(with, on), "");
  const auto size = [](const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    std::fseek(f, 0, SEEK_END);
    const long n = std::ftell(f);
    std::fclose(f);
    return n;
  };
  // Each section: 16 bytes of header; the counters record is 24 bytes, no sample records.
  EXPECT_EQ(size(on) - size(off), 16 + 16 + 24);  // two section headers, one counters record
  ::unlink(off.c_str());
  ::unlink(on.c_str());
}

}  // namespace
}  // namespace gprof
