// Unit tests: trace JSON escaping, timestamps, flows and args (bytes per launch:
// trace_bytes_test.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "outputs/trace/trace_check.h"
#include "outputs/trace/trace_json.h"
#include "text/json_writer.h"

namespace gprof {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(JsonWriter, EscapesQuotesBackslashControlsAndRepairsUtf8) {
  const std::string path = testing::TempDir() + "/escape.json";
  JsonWriter w(path);
  w.String(std::string("q\"b\\c\x01n\nbad\xff ok\xC3\xA9", 17));
  w.Close();
  EXPECT_EQ(Read(path), "\"q\\\"b\\\\c\\u0001n\\nbad\xEF\xBF\xBD ok\xC3\xA9\"");
}

Profile Launches(int n) {
  Profile p;
  p.info.pid = 4242;
  p.info.start_ns = 1'700'000'000'000'000'000ull;
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.devices.push_back({0, p.strings.Intern("GPU"), 0, 9, 0, 132, 1024, 2048, 65536, 65536, 49152, 233472, 32});
  LaunchConfig lc{};
  lc.grid[0] = lc.grid[1] = lc.grid[2] = 1;
  lc.block[0] = 128, lc.block[1] = lc.block[2] = 1;
  lc.registers_per_thread = 32;
  p.launch_configs.push_back(lc);
  const StringId k = p.strings.Intern("_Z10add_scalarPff");
  for (int i = 0; i < n; ++i) {
    const uint64_t t = p.info.start_ns + 100'000'000ull + i * 10'000ull;
    const uint32_t corr = 100000 + i;
    p.api_calls.push_back({t, t + 4'000, corr, 4242, 211, ApiDomain::kRuntime, 0, 0});
    p.kernels.push_back({t + 5'000, t + 7'000, corr, k, 0, 7});
  }
  return p;
}

// Launches(2): the first call starts 100 ms after the start and lasts 4 us, so its event reads
// ts 100000 and dur 4 (exact microseconds; Kineto's "100000.000" without the zeros).
TEST(WriteTraceJson, TimesAreRelativeExactMicrosAndFlowsPair) {
  Profile p = Launches(2);
  const std::string path = testing::TempDir() + "/launch.json";
  WriteTraceJson(p, path);
  const nlohmann::json j = nlohmann::json::parse(Read(path));
  EXPECT_EQ(j["baseTimeNanoseconds"], p.info.start_ns);
  EXPECT_NE(Read(path).find("\"ts\":100000,\"dur\":4,"), std::string::npos);
  // Each launch's flow is on its two slices: "flow_out" on the call (pid 4242), "flow_in" on
  // the kernel (GPU 0, stream 7), bind_id 2^32 + the correlation id on both.
  std::set<uint64_t> s, f;
  for (const auto& e : j["traceEvents"]) {
    EXPECT_NE(e["ph"], "s");
    EXPECT_NE(e["ph"], "f");
    if (e.value("flow_out", false)) {
      s.insert(e["bind_id"].get<uint64_t>() - (1ull << 32));
      EXPECT_EQ(e["args"]["correlation"].get<uint64_t>(), *s.rbegin());
      EXPECT_EQ(e["cat"], "cuda_runtime");
      EXPECT_EQ(e["pid"], 4242);
    }
    if (e.value("flow_in", false)) {
      f.insert(e["bind_id"].get<uint64_t>() - (1ull << 32));
      EXPECT_EQ(e["args"]["correlation"].get<uint64_t>(), *f.rbegin());
      EXPECT_EQ(e["cat"], "kernel");
      EXPECT_EQ(e["pid"], 0);
      EXPECT_EQ(e["tid"], 7);
    }
    if (e["ph"] == "X" && e["cat"] == "kernel") {
      EXPECT_EQ(e["name"], "add_scalar(float*, float)");
      EXPECT_EQ(e["args"]["grid"], nlohmann::json::array({1, 1, 1}));
      EXPECT_TRUE(e["args"].contains("est. achieved occupancy %"));
    }
  }
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(f, s);
  EXPECT_TRUE(CheckTrace(path).empty());
}

TEST(WriteTraceJson, RankIsFoundByHtaRegexBeforeTraceEvents) {
  Profile p = Launches(1);
  p.info.rank = 3;
  p.info.world_size = 8;
  const std::string path = testing::TempDir() + "/rank.json";
  WriteTraceJson(p, path);
  const std::string text = Read(path);
  const size_t rank = text.find("\"rank\": 3");
  ASSERT_NE(rank, std::string::npos);
  EXPECT_LT(rank, text.find("\"traceEvents\""));
}

// The in-memory formatter (benchmarks, tools) is the same writer: same bytes as the file, handed
// over in chunks of at most 1 MiB, escaped names included.
TEST(FormatTraceJson, SameBytesAsTheFileInBoundedChunks) {
  Profile p = Launches(20000);  // ~13 MB: many chunks
  p.kernels[5].name = p.strings.Intern("quote\"and\ttab");
  const std::string path = testing::TempDir() + "/same.pt.trace.json";
  const TraceStats file_stats = WriteTraceJson(p, path);
  struct Chunks {
    std::string text;
    size_t largest = 0;
    int count = 0;
  } chunks;
  const TraceStats mem_stats = FormatTraceJson(
      p, "same.pt.trace.json", JsonSink{&chunks, [](void* ctx, const char* data, size_t size) {
        auto* c = static_cast<Chunks*>(ctx);
        c->text.append(data, size);
        c->largest = std::max(c->largest, size);
        ++c->count;
      }});
  EXPECT_EQ(chunks.text, Read(path));
  EXPECT_EQ(mem_stats.bytes, chunks.text.size());
  EXPECT_EQ(mem_stats.events, file_stats.events);
  EXPECT_GT(chunks.count, 1);
  EXPECT_LE(chunks.largest, size_t{1} << 20);
  EXPECT_NE(chunks.text.find("\"name\":\"quote\\\"and\\ttab\""), std::string::npos);
  EXPECT_EQ(FormatTraceJson(p, "same.pt.trace.json"), chunks.text);
}

// API calls and kernels have one formatting path: a name of any size (here 70 000 bytes, more
// than a writer region holds) and a launch configuration past the table (a damaged dump; it is
// formatted as the empty configuration) go through it like any other event.
TEST(WriteTraceJson, HugeNamesAndUnknownLaunchConfigsTakeTheOnePath) {
  Profile p = Launches(3);
  const std::string huge_api(70000, 'a');
  const std::string huge_kernel(70000, 'k');
  p.api_names[0].name = p.strings.Intern(huge_api);
  p.kernels[0].name = p.strings.Intern(huge_kernel);
  p.kernels[1].launch_config = 5;
  p.kernels[2].launch_config = 0xffffffffu;
  const std::string path = testing::TempDir() + "/huge.json";
  WriteTraceJson(p, path);
  const std::string text = Read(path);
  const nlohmann::json j = nlohmann::json::parse(text);
  int api = 0, kernels = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "cuda_runtime") {
      ++api;
      EXPECT_EQ(e["name"], huge_api);
    }
    if (e["cat"] == "kernel") {
      ++kernels;
      if (e["args"]["correlation"] == 100000) {
        EXPECT_EQ(e["name"], huge_kernel);
      }
    }
  }
  EXPECT_EQ(api, 3);
  EXPECT_EQ(kernels, 3);
  const std::string empty_config =
      ",\"device\":0,\"stream\":7,\"registers per thread\":0,\"shared memory\":0,"
      "\"blocks per SM\":0,\"grid\":[0,0,0],\"block\":[0,0,0]}}";
  const size_t first = text.find(empty_config);
  ASSERT_NE(first, std::string::npos);
  EXPECT_NE(text.find(empty_config, first + 1), std::string::npos);
  EXPECT_TRUE(CheckTrace(path).empty());
}

// torch op ranges: operators under cpu_op, record_function ranges under user_annotation, with
// Kineto's arg names; torch's printed shapes are a JSON array as they stand.
TEST(WriteTraceJson, TorchOpsAreCpuOpsWithKinetoArgs) {
  Profile p;
  p.info.pid = 9;
  HostRange mm{1'000, 2'000, p.strings.Intern("aten::mm"), 9, 0, kRangeTorch | kRangeCpuOp, 0};
  mm.op_id = 15;
  mm.seq = 7;
  mm.shapes = p.strings.Intern("[[2, 4], [4, 3]]");
  HostRange region{500, 3'000, p.strings.Intern("my_region"), 9, 0, kRangeTorch, 0};
  region.op_id = 12;
  p.ranges = {region, mm};
  const std::string path = testing::TempDir() + "/torch_ops.json";
  WriteTraceJson(p, path);
  const nlohmann::json j = nlohmann::json::parse(Read(path));
  int seen = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["name"] == "aten::mm") {
      ++seen;
      EXPECT_EQ(e["cat"], "cpu_op");
      EXPECT_EQ(e["args"]["Record function id"], 15);
      EXPECT_EQ(e["args"]["Sequence number"], 7);
      EXPECT_EQ(e["args"]["Input Dims"], nlohmann::json::parse("[[2, 4], [4, 3]]"));
    } else if (e["name"] == "my_region") {
      ++seen;
      EXPECT_EQ(e["cat"], "user_annotation");
      EXPECT_EQ(e["args"]["Record function id"], 12);
      EXPECT_FALSE(e["args"].contains("Sequence number"));
      EXPECT_FALSE(e["args"].contains("Input Dims"));
    }
  }
  EXPECT_EQ(seen, 2);
  EXPECT_TRUE(CheckTrace(path).empty());
}

TEST(WriteTraceJson, UnwritablePathThrows) {
  EXPECT_THROW(WriteTraceJson(Launches(1), "/nonexistent_dir/x/trace.json"), std::runtime_error);
}

}  // namespace
}  // namespace gprof

namespace gprof {
namespace {

// The start-up clock check (ProfileInfo::cupti_clock_*) in the trace's gprof metadata: the
// offset must lie within half the host reads' window plus kClockCheckSlackNs (1 us) to agree.
TEST(WriteTraceJson, ClockCheckIsInTheMetadata) {
  auto check_of = [](int64_t offset, uint64_t window) {
    Profile p;
    p.info.cupti_clock_offset_ns = offset;
    p.info.cupti_clock_window_ns = window;
    const nlohmann::json j = nlohmann::json::parse(FormatTraceJson(p, "clock.pt.trace.json"));
    EXPECT_EQ(j["gprof"]["cupti_clock"]["offset_ns"], offset);
    EXPECT_EQ(j["gprof"]["cupti_clock"]["window_ns"], window);
    return j["gprof"]["cupti_clock"]["check"].get<std::string>();
  };
  EXPECT_EQ(check_of(0, 0), "not checked");
  EXPECT_EQ(check_of(1400, 800), "agrees");    // 800 / 2 + 1000 = 1400: on the edge
  EXPECT_EQ(check_of(-1400, 800), "agrees");
  EXPECT_EQ(check_of(1401, 800), "differs");
  EXPECT_EQ(check_of(-5'000'000'000, 800), "differs");  // a TSC-like clock: seconds away
}

}  // namespace
}  // namespace gprof
