// The merged trace places each rank on the first rank's clock (analysis/ranks/clock_align.h):
// two hand-built ranks whose clocks are 2 s apart, each with three gloo all_reduce work ranges
// that end at the same true time. Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/ranks/merge.h"
#include "outputs/trace/merged_trace.h"

namespace gprof {
namespace {

using nlohmann::json;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kTrue = 1'700'000'000'000'000'000ull;  // both ranks start at this true time

// Rank r: its clock reads true time + r * 2 s; starts at kTrue; "gloo:all_reduce" ranges of 1 ms
// ending at true kTrue + (k + 1) * 10 ms, k = 0..2, on thread 2.
Profile Rank(int32_t r) {
  const uint64_t skew = static_cast<uint64_t>(r) * 2'000 * kMs;
  Profile p;
  p.info.rank = r;
  p.info.world_size = 2;
  p.info.pid = 100 + static_cast<uint32_t>(r);
  p.info.program = "train";
  p.info.hostname = r == 0 ? "nodeA" : "nodeB";
  p.info.start_ns = kTrue + skew;
  p.info.end_ns = kTrue + skew + 50 * kMs;
  const StringId name = p.strings.Intern("gloo:all_reduce");
  for (uint64_t k = 0; k < 3; ++k) {
    const uint64_t end = kTrue + skew + (k + 1) * 10 * kMs;
    p.ranges.push_back({end - kMs, end, name, 2, 0, 0, 0});
  }
  p.threads.push_back({2, p.strings.Intern("gloo")});
  return p;
}

TEST(MergedTraceClock, SkewedRanksAllReduceEndsLineUpAndTheMetadataSaysByHowMuch) {
  std::vector<MergeInput> inputs;
  for (int32_t r : {1, 0}) inputs.push_back(SummarizeForMerge(Rank(r), "r.gpdump"));
  SortMergeInputs(&inputs);
  AlignMergeClocks(&inputs);
  std::string text;
  WriteMergedTrace(
      inputs, [&](size_t k, Profile* p) { *p = Rank(inputs[k].info.rank); }, "merged.json",
      JsonSink{&text, [](void* ctx, const char* d, size_t n) {
                 static_cast<std::string*>(ctx)->append(d, n);
               }});
  const json t = json::parse(text);
  // Both start at the same true time, so the origin is that time on rank 0's clock.
  EXPECT_EQ(t["baseTimeNanoseconds"].get<uint64_t>(), kTrue);
  // Ends per merged pid (rank 0: 1000, rank 1: 2000): 10, 20, 30 ms after the origin for both;
  // without the offset rank 1's would be 2,010 ms and later.
  std::map<uint64_t, std::vector<double>> ends;
  for (const json& e : t["traceEvents"]) {
    if (e.value("name", "") == "gloo:all_reduce" && e.value("ph", "") == "X") {
      ends[e["pid"].get<uint64_t>()].push_back(e["ts"].get<double>() + e["dur"].get<double>());
    }
  }
  ASSERT_EQ(ends.size(), 2u);
  for (const auto& [pid, v] : ends) {
    ASSERT_EQ(v.size(), 3u) << pid;
    for (size_t k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(v[k], (k + 1) * 10'000.0) << pid;
  }
  const json& in1 = t["gprof"]["inputs"][1];
  EXPECT_EQ(in1["clock"]["method"], "collectives");
  EXPECT_EQ(in1["clock"]["offset_ns"].get<int64_t>(), -2'000'000'000);
  EXPECT_EQ(in1["clock"]["residual_ns"].get<uint64_t>(), 0u);
  EXPECT_EQ(in1["offset_ns"].get<uint64_t>(), 0u);  // its aligned start is the origin
  EXPECT_EQ(t["gprof"]["clock_spread"]["median_ns"].get<uint64_t>(), 0u);
  EXPECT_EQ(t["gprof"]["clock_spread"]["instances"].get<uint64_t>(), 3u);
}

}  // namespace
}  // namespace gprof
