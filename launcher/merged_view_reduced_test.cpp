// Unit test: the merged view of segmented dumps past a (small) trace budget (merged_view.h,
// merge_trace_policy.h): what the files say. Expected values are derived by hand in the comments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launcher/merged_view.h"
#include "model/dump.h"

namespace gprof::launcher {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t kB = 1'700'000'000'000'000'000ull;
constexpr uint64_t kMs = 1'000'000;

// Rank r (pid 101 + r, host "node"): steps 1-3 at kB + s * 100 ms, 10 ms long on ranks 0 and 1,
// 30 ms on rank 2 (the straggler in every step); written in two segments, steps 1-2 and step 3.
void WriteRank(const std::string& dir, int32_t r) {
  Profile p;
  p.info.pid = 101 + static_cast<uint32_t>(r);
  p.info.program = "train";
  p.info.hostname = "node";
  p.info.rank = r;
  p.info.world_size = 3;
  p.info.start_ns = kB;
  p.info.end_ns = kB + 400 * kMs;
  p.threads.push_back({p.info.pid, p.strings.Intern("main")});
  const uint64_t wall = r == 2 ? 30 * kMs : 10 * kMs;
  const auto step = [&](uint32_t s) {
    return Step{kB + s * 100 * kMs, kB + s * 100 * kMs + wall, s, p.info.pid};
  };
  SegmentedDumpWriter w;
  ASSERT_EQ(w.Open(dir + "/train." + std::to_string(p.info.pid) + ".gpdump"), "");
  p.steps = {step(1), step(2)};
  ASSERT_EQ(w.Append(p, /*last=*/false), "");
  p.steps = {step(3)};
  ASSERT_EQ(w.Append(p, /*last=*/true), "");
  ASSERT_EQ(w.Publish(), "");
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Budget 1 byte: only the slowest rank, rank 2 (trace pid 3000), in full: its 3 steps; ranks 0
// and 1 (pids 1000, 2000) as summaries only. Every rank's summary process (pid 1000 (k + 1) +
// 999) has its 3 ProfilerStep slices. The note, the trace's gprof.left_out and the finding
// merged_trace_reduced say 2 of 3 processes are left out.
TEST(MergedViewReduced, PastTheBudgetTheSlowestRankIsInFullAndTheOthersAreSummaries) {
  const std::string dir = testing::TempDir() + "/merged-reduced." + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/in");
  for (int32_t r = 0; r < 3; ++r) WriteRank(dir + "/in", r);
  std::string error;
  const std::vector<MergeGroup> groups = FindMergeGroups({dir + "/in"}, &error);
  ASSERT_EQ(error, "");
  const MergeResult result =
      WriteMergedView(groups, dir + "/out", -1, /*html=*/false, MergedTraceChoice{false, {}, 1});
  ASSERT_EQ(result.error, "");
  EXPECT_NE(result.notes.find("gprof-run: note:"), std::string::npos) << result.notes;
  EXPECT_NE(result.notes.find("rank 2 (node:103)"), std::string::npos) << result.notes;
  const json trace = json::parse(Slurp(dir + "/out/trace.json"));
  std::map<int, int> slices;  // by pid
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++slices[e["pid"].get<int>()];
  }
  EXPECT_EQ(slices, (std::map<int, int>{{1999, 3}, {2999, 3}, {3000, 3}, {3999, 3}}));
  EXPECT_NE(trace["gprof"]["left_out"].get<std::string>().find("2 of 3 processes"),
            std::string::npos);
  const json findings = json::parse(Slurp(dir + "/out/findings.json"));
  bool reduced = false;
  for (const json& f : findings["findings"]) reduced = reduced || f["id"] == "merged_trace_reduced";
  EXPECT_TRUE(reduced);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gprof::launcher
