// Unit tests: the merged trace written in time order across ranks from inputs read segment by
// segment (merged_trace.h), one segment per input held at a time. Expected values are derived by
// hand in the comments from the segments below.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/ranks/merge.h"
#include "outputs/trace/merged_trace.h"

namespace gprof {
namespace {

using nlohmann::json;

constexpr uint64_t kB = 1'700'000'000'000'000'000ull;
constexpr uint64_t kUs = 1000;
constexpr int kRanks = 3;
constexpr int kSegments = 4;

// Rank r (pid 100 + r, host node<r>), segment s: ranges "a" at kB + s ms + r * 100 us and "b" at
// kB + s ms + r * 100 us + 300 us, 50 us each, on the main thread. So within segment s the six
// ranges go r0a, r1a, r2a, r0b, r1b, r2b, and segment s + 1 starts after all of them.
Profile Segment(int r, int s) {
  Profile p;
  p.info.pid = 100 + r;
  p.info.program = "train";
  p.info.hostname = "node" + std::to_string(r);
  p.info.rank = r;
  p.info.world_size = kRanks;
  p.info.start_ns = kB;
  p.info.end_ns = kB + kSegments * 1'000 * kUs;
  p.threads.push_back({p.info.pid, p.strings.Intern("main")});
  const uint64_t t = kB + s * 1'000 * kUs + r * 100 * kUs;
  for (const char* name : {"a", "b"}) {
    const uint64_t at = t + (name[0] == 'b' ? 300 * kUs : 0);
    p.ranges.push_back({at, at + 50 * kUs, p.strings.Intern(name), p.info.pid, 0, 0, 0});
  }
  return p;
}

// Segments of one rank handed out one at a time; `held` counts those handed out and not yet
// replaced by the next (a source drops its segment when asked for the next one).
struct Log {
  std::vector<int> requests;  // the rank of each Next that gave a segment
  int held = 0;
  int most_held = 0;
};

class CountedSegments : public MergeSegments {
 public:
  CountedSegments(int rank, Log* log) : rank_(rank), log_(log) {}
  ~CountedSegments() override {
    if (holding_) --log_->held;
  }
  const Profile* Next() override {
    if (holding_) --log_->held;
    holding_ = false;
    if (next_ == kSegments) return nullptr;
    current_ = Segment(rank_, next_++);
    holding_ = true;
    log_->most_held = std::max(log_->most_held, ++log_->held);
    log_->requests.push_back(rank_);
    return &current_;
  }

 private:
  const int rank_;
  Log* log_;
  int next_ = 0;
  bool holding_ = false;
  Profile current_;
};

std::vector<MergeInput> Survey() {
  std::vector<MergeInput> inputs;
  for (int r = 0; r < kRanks; ++r) {
    MergeInput in;
    in.file = "rank" + std::to_string(r) + ".gpdump";
    for (int s = 0; s < kSegments; ++s) AddSegmentToMerge(Segment(r, s), s == 0, &in);
    inputs.push_back(std::move(in));
  }
  SortMergeInputs(&inputs);
  return inputs;  // clocks as recorded (offset 0): one host clock per rank, no collectives
}

json Write(const std::vector<MergeInput>& inputs, Log* log, const MergedTraceContent& content) {
  std::string text;
  WriteMergedTrace(
      inputs,
      [&](size_t k) -> std::unique_ptr<MergeSegments> {
        return std::make_unique<CountedSegments>(static_cast<int>(k), log);
      },
      "m.json",
      JsonSink{&text,
               [](void* ctx, const char* d, size_t n) { static_cast<std::string*>(ctx)->append(d, n); }},
      nullptr, content);
  return json::parse(text);
}

// The survey adds the segments up: 8 ranges per rank, "a" and "b" 4 calls each.
TEST(MergedTraceStream, TheSurveyOfSegmentsAddsThemUp) {
  const std::vector<MergeInput> inputs = Survey();
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[1].events, 8u);
  EXPECT_EQ(inputs[1].origin_ns, kB);
  for (const EventStats& row : inputs[1].rows) EXPECT_EQ(row.count, 4u) << row.name;
}

// 24 slices (3 ranks x 4 segments x 2), in time order across the ranks: r0a r1a r2a r0b r1b r2b
// per segment (pids 1000, 2000, 3000 in turn). Segments are asked for in that order too: the 3
// first segments to start, then each rank's next when its last range of the one before is
// written: r0, r1, r2 four times; at most 3 segments (one per rank) are held at once.
TEST(MergedTraceStream, EventsComeInTimeOrderAcrossRanksOneSegmentPerRankHeld) {
  Log log;
  const json doc = Write(Survey(), &log, {});
  std::vector<double> ts;
  std::vector<int> pids;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ts.push_back(e["ts"].get<double>());
    pids.push_back(e["pid"].get<int>());
  }
  ASSERT_EQ(ts.size(), 24u);
  EXPECT_TRUE(std::is_sorted(ts.begin(), ts.end()));
  for (size_t i = 0; i < pids.size(); ++i) EXPECT_EQ(pids[i], 1000 * (1 + i % 3)) << i;
  EXPECT_EQ(ts[3], 300.0);   // r0b of segment 0: 300 us after the origin kB
  EXPECT_EQ(ts[6], 1000.0);  // r0a of segment 1
  std::vector<int> expected;
  for (int s = 0; s < kSegments; ++s) expected.insert(expected.end(), {0, 1, 2});
  EXPECT_EQ(log.requests, expected);
  EXPECT_EQ(log.most_held, 3);
}

// Only rank 1 in full, with the summary: rank 1's 8 slices, no segment of ranks 0 and 2 read,
// and a "run" slice per rank (they have no steps) on its summary process (pid base + 999).
TEST(MergedTraceStream, ASummaryTraceReadsOnlyTheRanksInFull) {
  Log log;
  MergedTraceContent content;
  content.full = {false, true, false};
  content.summary = true;
  content.left_out = "ranks 0 and 2";
  const json doc = Write(Survey(), &log, content);
  int full = 0, runs = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["name"] == "run") {
      ++runs;
      EXPECT_EQ(e["pid"].get<int>() % 1000, 999);
    } else {
      ++full;
      EXPECT_EQ(e["pid"], 2000);
    }
  }
  EXPECT_EQ(full, 8);
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(log.requests, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(doc["gprof"]["left_out"], "ranks 0 and 2");
}

}  // namespace
}  // namespace gprof
