#include "model/dump.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace gprof {
namespace {

std::string TempPath(const char* tag) {
  return testing::TempDir() + "/" + tag + "." + std::to_string(::getpid()) + kDumpExtension;
}

Profile SampleProfile() {
  Profile p;
  p.info.pid = 4242;
  p.info.program = "train";
  p.info.hostname = "host";
  p.info.start_ns = 1'000;
  p.info.end_ns = 9'000;
  p.info.rank = 3;
  p.info.cycle = 2;
  p.info.first_step = 5;
  p.info.last_step = 7;
  p.info.partial_window = true;
  p.info.gpu_status = "collected";
  p.info.cupti_library = "/opt/cuda/libcupti.so.13";
  p.info.cupti_clock_offset_ns = -123456;
  p.info.cupti_clock_window_ns = 789;
  // Every counter a distinct value (1, 2, 3, ...), so a field read into its neighbour shows.
  uint64_t next = 1;
  ForEachCounter(p.counters, [&](const char*, uint64_t& v, const char*) { v = next++; });
  p.collector_cost = {101, 102, 103, 104, 105, 106};
  const StringId fwd = p.strings.Intern("forward");
  const StringId dom = p.strings.Intern("my-domain");
  p.domains.push_back(dom);
  p.threads.push_back({4242, p.strings.Intern("main")});
  p.ranges.push_back({1'100, 2'000, fwd, 4242, 1, kRangeOpenAtEnd, 7});
  p.marks.push_back({1'500, p.strings.Intern("checkpoint"), 4242, 0, 0, 0});
  p.api_calls.push_back({1'200, 1'300, 11, 4242, 505, ApiDomain::kRuntime, 0, 0});
  p.api_names.push_back({505, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.launch_configs.push_back({{4, 1, 1}, {256, 1, 1}, 32, 0, 128, 1, 0, 0, 0});
  p.kernels.push_back({1'400, 1'900, 11, p.strings.Intern("_Z6matmulPfS_S_i"), 0, 7});
  Memcpy m{};
  m.start_ns = 2'000;
  m.end_ns = 2'500;
  m.bytes = 4096;
  m.kind = CopyKind::kHtoD;
  m.src_kind = MemKind::kPageable;
  m.dst_kind = MemKind::kDevice;
  p.memcpys.push_back(m);
  p.steps.push_back({1'000, 3'000, 5, 4242});
  return p;
}

TEST(Dump, RoundTripKeepsEveryField) {
  const std::string path = TempPath("roundtrip");
  const Profile in = SampleProfile();
  ASSERT_EQ(WriteDump(in, path), "");
  Profile out;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &out, &error)) << error;
  EXPECT_EQ(out.info.pid, 4242u);
  EXPECT_EQ(out.info.program, "train");
  EXPECT_EQ(out.info.rank, 3);
  EXPECT_EQ(out.info.cycle, 2u);
  EXPECT_EQ(out.info.last_step, 7u);
  EXPECT_TRUE(out.info.partial_window);
  EXPECT_EQ(out.info.gpu_status, "collected");
  EXPECT_EQ(out.info.cupti_library, "/opt/cuda/libcupti.so.13");
  EXPECT_EQ(out.info.cupti_clock_offset_ns, -123456);
  EXPECT_EQ(out.info.cupti_clock_window_ns, 789u);
  uint64_t want = 1;
  ForEachCounter(out.counters, [&](const char* name, uint64_t v, const char*) {
    EXPECT_EQ(v, want++) << name;
  });
  EXPECT_EQ(out.collector_cost.api_samples, 101u);
  EXPECT_EQ(out.collector_cost.api_sample_ns, 102u);
  EXPECT_EQ(out.collector_cost.range_samples, 103u);
  EXPECT_EQ(out.collector_cost.range_sample_ns, 104u);
  EXPECT_EQ(out.collector_cost.activity_buffers, 105u);
  EXPECT_EQ(out.collector_cost.activity_bytes, 106u);
  ASSERT_EQ(out.ranges.size(), 1u);
  EXPECT_EQ(out.strings.Get(out.ranges[0].name), "forward");
  EXPECT_EQ(out.ranges[0].flags, kRangeOpenAtEnd);
  EXPECT_EQ(out.strings.Get(out.domains.at(out.ranges[0].domain)), "my-domain");
  ASSERT_EQ(out.kernels.size(), 1u);
  EXPECT_EQ(out.strings.Get(out.kernels[0].name), "_Z6matmulPfS_S_i");
  EXPECT_EQ(out.launch_configs.at(out.kernels[0].launch_config).block[0], 256u);
  ASSERT_EQ(out.memcpys.size(), 1u);
  EXPECT_EQ(out.memcpys[0].kind, CopyKind::kHtoD);
  EXPECT_EQ(out.memcpys[0].src_kind, MemKind::kPageable);
  EXPECT_EQ(out.api_calls.at(0).cbid, 505);
  EXPECT_EQ(out.steps.at(0).number, 5u);
  EXPECT_EQ(out.strings.Get(out.api_names.at(0).name), "cudaLaunchKernel");
  EXPECT_EQ(out.threads.at(0).tid, 4242u);
  std::remove(path.c_str());
}

TEST(Dump, NoTemporaryFileIsLeftBehind) {
  const std::string path = TempPath("atomic");
  ASSERT_EQ(WriteDump(SampleProfile(), path), "");
  std::ifstream tmp(path + ".tmp." + std::to_string(::getpid()));
  EXPECT_FALSE(tmp.good());
  std::remove(path.c_str());
}

TEST(Dump, WriteCreatesAMissingDirectory) {
  // A directory removed while the program runs is made again at the next write.
  const std::string dir = testing::TempDir() + "/dump-missing." + std::to_string(::getpid());
  const std::string path = dir + "/a/b/x.gpdump";
  ASSERT_EQ(WriteDump(SampleProfile(), path), "");
  Profile out;
  std::string error;
  EXPECT_TRUE(ReadDump(path, &out, &error)) << error;
  std::remove(path.c_str());
  ::rmdir((dir + "/a/b").c_str());
  ::rmdir((dir + "/a").c_str());
  ::rmdir(dir.c_str());
}

TEST(Dump, WriteUnderARegularFileFailsNamingIt) {
  const std::string file = TempPath("not-a-dir");
  std::ofstream(file) << "x";
  const std::string error = WriteDump(SampleProfile(), file + "/x.gpdump");
  EXPECT_NE(error.find("is not a directory"), std::string::npos) << error;
  std::remove(file.c_str());
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void Rewrite(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string ReadError(const std::string& path) {
  Profile p;
  std::string error;
  EXPECT_FALSE(ReadDump(path, &p, &error));
  return error;
}

TEST(Dump, RejectsTruncatedFile) {
  const std::string path = TempPath("truncated");
  ASSERT_EQ(WriteDump(SampleProfile(), path), "");
  const std::string bytes = Bytes(path);
  for (size_t keep : {size_t{0}, size_t{5}, size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
    Rewrite(path, bytes.substr(0, keep));
    const std::string error = ReadError(path);
    EXPECT_TRUE(error.find("truncated") != std::string::npos ||
                error.find("bad magic") != std::string::npos)
        << "kept " << keep << ": " << error;
    EXPECT_NE(error.find(path), std::string::npos);
  }
  std::remove(path.c_str());
}

TEST(Dump, RejectsCorruptedByte) {
  const std::string path = TempPath("corrupt");
  ASSERT_EQ(WriteDump(SampleProfile(), path), "");
  std::string bytes = Bytes(path);
  bytes[bytes.size() / 2] ^= 0x5a;
  Rewrite(path, bytes);
  EXPECT_NE(ReadError(path).find("checksum"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Dump, RejectsNewerFormatVersion) {
  const std::string path = TempPath("newer");
  ASSERT_EQ(WriteDump(SampleProfile(), path), "");
  std::string bytes = Bytes(path);
  const uint32_t newer = kDumpFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &newer, 4);
  Rewrite(path, bytes);
  EXPECT_NE(ReadError(path).find("newer than this gprof-run"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Dump, RejectsVersionOneFileWithClearMessage) {
  // A file from before the checksum change: same layout, version 1 in the header.
  const std::string path = TempPath("version1");
  ASSERT_EQ(WriteDump(SampleProfile(), path), "");
  std::string bytes = Bytes(path);
  const uint32_t old_version = 1;
  std::memcpy(bytes.data() + 8, &old_version, 4);
  Rewrite(path, bytes);
  const std::string error = ReadError(path);
  EXPECT_NE(error.find("unsupported dump format version 1"), std::string::npos) << error;
  EXPECT_NE(error.find("older gprof-run"), std::string::npos) << error;
  EXPECT_NE(error.find(path), std::string::npos) << error;
  std::remove(path.c_str());
}

TEST(Dump, RejectsUnknownOlderFormatVersion) {
  const std::string path = TempPath("version0");
  ASSERT_EQ(WriteDump(SampleProfile(), path), "");
  std::string bytes = Bytes(path);
  const uint32_t zero = 0;
  std::memcpy(bytes.data() + 8, &zero, 4);
  Rewrite(path, bytes);
  EXPECT_NE(ReadError(path).find("unsupported dump format version 0"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Dump, ChecksumCatchesAFlippedBitAnywhereInALargeDump) {
  // Large enough for the checksum's 32-byte stripes and its tail. The checksum is verified
  // before any section is parsed, so a flipped bit from the first section header to the last
  // byte before the trailer is reported as a checksum mismatch.
  Profile p = SampleProfile();
  for (uint32_t i = 0; i < 1000; ++i) {
    Kernel k{};
    k.start_ns = 10'000 + i;
    k.end_ns = 20'000 + i;
    k.correlation_id = i;
    p.kernels.push_back(k);
  }
  const std::string path = TempPath("large");
  ASSERT_EQ(WriteDump(p, path), "");
  Profile back;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &back, &error)) << error;
  ASSERT_EQ(back.kernels.size(), 1001u);  // SampleProfile's kernel and ours
  EXPECT_EQ(back.kernels.back().end_ns, 20'999u);
  const std::string bytes = Bytes(path);
  const size_t body_end = bytes.size() - 24;
  for (size_t at : {size_t{16}, bytes.size() / 3, body_end - 33, body_end - 5, body_end - 1}) {
    std::string bad = bytes;
    bad[at] ^= 0x01;
    Rewrite(path, bad);
    const std::string why = ReadError(path);
    EXPECT_NE(why.find("checksum mismatch"), std::string::npos) << "byte " << at << ": " << why;
  }
  std::remove(path.c_str());
}

TEST(Dump, RejectsMissingFile) {
  EXPECT_NE(ReadError("/nonexistent.gpdump").find("cannot open"), std::string::npos);
}

// A dump whose checksum is right but whose records point past its string table (a hand-made or
// buggy dump; the fuzzer's first find: the table then sized a name cache by the bad id) is
// rejected by name, and so are a range in a domain the dump does not have and a timestamp past
// 2^62 ns (the fuzzer's third: gap arithmetic in the findings overflowed).
TEST(Dump, RejectsRecordsPointingPastTheirTables) {
  const std::string path = TempPath("badref");
  Profile p;
  const StringId name = p.strings.Intern("forward");
  p.ranges.push_back({1, 2, name, 1, 0, 0, 0});
  p.ranges.push_back({3, 4, name + 1000, 1, 0, 0, 0});
  ASSERT_EQ(WriteDump(p, path), "");
  EXPECT_NE(ReadError(path).find("corrupt (range 1 refers to something the profile does not have)"),
            std::string::npos)
      << ReadError(path);
  p.ranges.pop_back();
  p.marks.push_back({5, name, 1, 7, 0, 0});  // domain 7 of 1
  ASSERT_EQ(WriteDump(p, path), "");
  EXPECT_NE(ReadError(path).find("corrupt (mark 0 refers"), std::string::npos) << ReadError(path);
  p.marks.clear();
  p.kernels.push_back({kMaxProfileTimeNs, kMaxProfileTimeNs + 5, 1, 0, 0, 7});  // past 2116
  ASSERT_EQ(WriteDump(p, path), "");
  EXPECT_NE(ReadError(path).find("corrupt (GPU record 0 has a timestamp past the year 2116)"),
            std::string::npos)
      << ReadError(path);
  p.kernels.clear();
  // 256 TiB (2^48) is past any device's or host's memory; one byte less is a size like any other.
  MemoryOp huge{};
  huge.ts_ns = 10;
  huge.bytes = uint64_t{1} << 48;
  p.memory_ops.push_back(huge);
  ASSERT_EQ(WriteDump(p, path), "");
  EXPECT_NE(ReadError(path).find("corrupt (memory record 0 has a size past 256 TiB)"),
            std::string::npos)
      << ReadError(path);
  p.memory_ops.back().bytes = (uint64_t{1} << 48) - 1;
  p.memsets.push_back({1, 2, uint64_t{1} << 48, 0, 0, 0, 0, MemKind::kDevice, 0, 0});
  ASSERT_EQ(WriteDump(p, path), "");
  EXPECT_NE(ReadError(path).find("corrupt (memset 0 has a size past 256 TiB)"), std::string::npos)
      << ReadError(path);
  p.memsets.clear();
  ASSERT_EQ(WriteDump(p, path), "");
  Profile back;
  std::string error;
  EXPECT_TRUE(ReadDump(path, &back, &error)) << error;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gprof

namespace gprof {
namespace {

// Every GPU record kind survives the dump: one record of each, distinct values, read back.
TEST(Dump, EveryGpuRecordKindRoundTrips) {
  Profile p;
  size_t kinds = 0;
  ForEachGpuKind(p, [&](GpuKind kind, auto& records) {
    ++kinds;
    typename std::decay_t<decltype(records)>::value_type r{};
    std::memset(&r, 0, sizeof r);
    const uint64_t ts = 1000 + 10 * static_cast<uint64_t>(kind);
    if constexpr (requires { r.start_ns; }) {
      r.start_ns = ts;
    } else {
      r.ts_ns = ts;
    }
    records.push_back(r);
  });
  EXPECT_EQ(kinds, kGpuKindCount);
  const std::string path = ::testing::TempDir() + "/every_kind.gpdump";
  ASSERT_EQ(WriteDump(p, path), "");
  Profile back;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &back, &error)) << error;
  ForEachGpuKind(back, [&](GpuKind kind, const auto& records) {
    ASSERT_EQ(records.size(), 1u) << static_cast<int>(kind);
    EXPECT_EQ(GpuRecordStartNs(records[0]), 1000 + 10 * static_cast<uint64_t>(kind));
  });
}

}  // namespace
}  // namespace gprof

namespace gprof {
namespace {

std::string StackTestPath(const char* tag) {
  return testing::TempDir() + "/" + tag + "." + std::to_string(::getpid()) + kDumpExtension;
}

std::string ReadStackDumpError(const std::string& path) {
  Profile back;
  std::string error;
  EXPECT_FALSE(ReadDump(path, &back, &error));
  return error;
}

// Two calls sharing one stack and a third with its own: the stack table, its PCs, the per-call
// references, the module map and the counters all come back as written.
Profile StackProfile() {
  Profile p;
  p.api_calls.push_back({100, 200, 7, 1, 165, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({300, 400, 8, 1, 165, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({500, 600, 9, 1, 20, ApiDomain::kRuntime, 0, 0});
  p.stack_pcs = {0x401010, 0x401020, 0x401030, 0x7f0000001234};
  p.stacks = {{0, 3}, {3, 1}};
  p.api_stacks = {{7, 0}, {8, 0}, {9, 1}};
  p.modules.push_back({p.strings.Intern("/usr/bin/prog"), p.strings.Intern("abcdef01"), 0,
                       0x400000, 0x402000});
  p.modules.push_back({p.strings.Intern("/lib/libcudart.so.13"), kNoString, 0x7f0000000000,
                       0x7f0000000000, 0x7f0000100000});
  p.stack_counters = {3, 2};
  return p;
}

TEST(DumpStacks, StackTablePcsCallRefsModulesAndCountersRoundTrip) {
  const std::string path = StackTestPath("stacks");
  const Profile p = StackProfile();
  ASSERT_EQ(WriteDump(p, path), "");
  Profile back;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &back, &error)) << error;
  EXPECT_EQ(back.stack_pcs, p.stack_pcs);
  ASSERT_EQ(back.stacks.size(), 2u);
  EXPECT_EQ(back.stacks[0].first_pc, 0u);
  EXPECT_EQ(back.stacks[0].depth, 3u);
  EXPECT_EQ(back.stacks[1].first_pc, 3u);
  EXPECT_EQ(back.stacks[1].depth, 1u);
  ASSERT_EQ(back.api_stacks.size(), 3u);
  EXPECT_EQ(back.api_stacks[1].correlation_id, 8u);
  EXPECT_EQ(back.api_stacks[1].stack, 0u);
  EXPECT_EQ(back.api_stacks[2].stack, 1u);
  ASSERT_EQ(back.modules.size(), 2u);
  EXPECT_EQ(back.strings.Get(back.modules[0].path), "/usr/bin/prog");
  EXPECT_EQ(back.strings.Get(back.modules[0].build_id), "abcdef01");
  EXPECT_EQ(back.modules[1].bias, 0x7f0000000000u);
  EXPECT_EQ(back.modules[1].end, 0x7f0000100000u);
  EXPECT_EQ(back.stack_counters.captured, 3u);
  EXPECT_EQ(back.stack_counters.dropped, 2u);
  std::remove(path.c_str());
}

TEST(DumpStacks, AProfileWithoutStacksReadsBackWithNone) {
  const std::string path = StackTestPath("nostacks");
  Profile p;
  p.api_calls.push_back({100, 200, 7, 1, 165, ApiDomain::kRuntime, 0, 0});
  ASSERT_EQ(WriteDump(p, path), "");
  Profile back;
  std::string error;
  ASSERT_TRUE(ReadDump(path, &back, &error)) << error;
  EXPECT_TRUE(back.stacks.empty());
  EXPECT_TRUE(back.api_stacks.empty());
  EXPECT_TRUE(back.modules.empty());
  std::remove(path.c_str());
}

TEST(DumpStacks, CheckProfileRejectsStackIndicesPastTheirTables) {
  const std::string path = StackTestPath("badstacks");
  {
    Profile p = StackProfile();
    p.api_stacks[2].stack = 2;  // 2 stacks: index 2 is past the table
    ASSERT_EQ(WriteDump(p, path), "");
    EXPECT_NE(ReadStackDumpError(path).find("API stack 2 refers"), std::string::npos);
  }
  {
    Profile p = StackProfile();
    p.api_stacks[0].stack = kNoStack;  // stored refs always name a stack
    ASSERT_EQ(WriteDump(p, path), "");
    EXPECT_NE(ReadStackDumpError(path).find("API stack 0 refers"), std::string::npos);
  }
  {
    Profile p = StackProfile();
    p.stacks[1] = {3, 2};  // PCs 3..4 of 4
    ASSERT_EQ(WriteDump(p, path), "");
    EXPECT_NE(ReadStackDumpError(path).find("stack 1 refers"), std::string::npos);
  }
  {
    Profile p = StackProfile();
    p.stacks[1] = {0xffffffffu, 2};  // first_pc + depth overflows u32
    ASSERT_EQ(WriteDump(p, path), "");
    EXPECT_NE(ReadStackDumpError(path).find("stack 1 refers"), std::string::npos);
  }
  {
    Profile p = StackProfile();
    p.stacks[0].depth = 0;
    ASSERT_EQ(WriteDump(p, path), "");
    EXPECT_NE(ReadStackDumpError(path).find("stack 0 refers"), std::string::npos);
  }
  {
    Profile p = StackProfile();
    p.modules[1].path = 999;
    ASSERT_EQ(WriteDump(p, path), "");
    EXPECT_NE(ReadStackDumpError(path).find("module 1 refers"), std::string::npos);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gprof
