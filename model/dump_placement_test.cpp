// The dump's placement section (ProcessPlacement: local and node rank, boot id, clock pairs, NTP
// state): it comes back as written, the later segments of a dump keep the first one's start
// clocks, and a dump written before the section existed still reads, with the defaults.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "model/dump.h"

namespace gprof {
namespace {

std::string TempPath(const char* tag) {
  return testing::TempDir() + "/" + tag + "." + std::to_string(::getpid()) + kDumpExtension;
}

Profile Placed() {
  Profile p;
  p.info.pid = 31;
  p.info.program = "train";
  p.info.start_ns = 5'000;
  p.info.end_ns = 9'000;
  ProcessPlacement& w = p.info.placement;
  w.local_rank = 2;
  w.node_rank = 1;
  w.boot_id = "0b5c6a3e-8d7e-4f6a-9c2e-1d2f3a4b5c6d";
  w.clock_start = {1'700'000'000'000'000'123, 42'000, 80};
  w.clock_end = {1'700'000'060'000'000'456, 60'000'042'000, 95};
  w.ntp = {true, 5, 0x40, -1'500, 16'000'000, 16'000'000};
  return p;
}

TEST(DumpPlacement, RoundTripKeepsRanksBootIdClockPairsAndNtpState) {
  const std::string path = TempPath("placement");
  ASSERT_EQ(WriteDump(Placed(), path), "");
  Profile out;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &out, &error)) << error;
  const ProcessPlacement& w = out.info.placement;
  EXPECT_EQ(w.local_rank, 2);
  EXPECT_EQ(w.node_rank, 1);
  EXPECT_EQ(w.boot_id, "0b5c6a3e-8d7e-4f6a-9c2e-1d2f3a4b5c6d");
  EXPECT_EQ(w.clock_start.realtime_ns, 1'700'000'000'000'000'123u);
  EXPECT_EQ(w.clock_start.monotonic_ns, 42'000u);
  EXPECT_EQ(w.clock_start.read_ns, 80u);
  EXPECT_EQ(w.clock_end.monotonic_ns, 60'000'042'000u);
  EXPECT_TRUE(w.ntp.known);
  EXPECT_EQ(w.ntp.state, 5);
  EXPECT_EQ(w.ntp.status, 0x40);
  EXPECT_EQ(w.ntp.offset_ns, -1'500);
  EXPECT_EQ(w.ntp.maxerror_us, 16'000'000);
  ::unlink(path.c_str());
}

TEST(DumpPlacement, LaterSegmentsKeepTheFirstStartClockAndTakeTheLastEndClock) {
  const std::string path = TempPath("placement_segments");
  SegmentedDumpWriter writer;
  ASSERT_EQ(writer.Open(path), "");
  Profile p = Placed();
  ASSERT_EQ(writer.Append(p, /*last=*/false), "");
  p.info.placement.clock_start = {7, 7, 7};  // a later segment's own start reading
  p.info.placement.clock_end = {1'700'000'120'000'000'000, 120'000'042'000, 90};
  ASSERT_EQ(writer.Append(p, /*last=*/true), "");
  ASSERT_EQ(writer.Publish(), "");
  Profile out;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &out, &error)) << error;
  EXPECT_EQ(out.info.placement.clock_start.monotonic_ns, 42'000u);
  EXPECT_EQ(out.info.placement.clock_end.monotonic_ns, 120'000'042'000u);
  ::unlink(path.c_str());
}

// The bytes of a dump as a gprof-run before the placement section wrote it: the same file with
// that section (tag 26) taken out and the checksum made again.
std::string WithoutPlacementSection(const std::string& bytes) {
  std::string out = bytes.substr(0, 16);  // magic, version, reserved
  size_t pos = 16;
  for (;;) {
    uint32_t tag = 0, size = 0;
    uint64_t count = 0;
    std::memcpy(&tag, bytes.data() + pos, 4);
    if (tag == 0xffffffffu) break;
    std::memcpy(&size, bytes.data() + pos + 4, 4);
    std::memcpy(&count, bytes.data() + pos + 8, 8);
    const size_t len = 16 + size * count;
    if (tag != 26) out += bytes.substr(pos, len);
    pos += len;
  }
  const uint64_t hash = DumpChecksum(out.data(), out.size());
  const uint32_t end[2] = {0xffffffffu, 0};
  out.append(reinterpret_cast<const char*>(end), 8);
  out.append(reinterpret_cast<const char*>(&hash), 8);
  out += "GPROFEND";
  return out;
}

TEST(DumpPlacement, DumpWithoutTheSectionStillReadsWithUnknownPlacement) {
  const std::string path = TempPath("placement_old");
  ASSERT_EQ(WriteDump(Placed(), path), "");
  std::string bytes;
  {
    std::ifstream f(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  const std::string old = WithoutPlacementSection(bytes);
  ASSERT_LT(old.size(), bytes.size());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << old;
  Profile out;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &out, &error)) << error;
  EXPECT_EQ(out.info.pid, 31u);
  EXPECT_EQ(out.info.placement.local_rank, -1);
  EXPECT_EQ(out.info.placement.boot_id, "");
  EXPECT_EQ(out.info.placement.clock_start.realtime_ns, 0u);
  EXPECT_FALSE(out.info.placement.ntp.known);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace gprof
