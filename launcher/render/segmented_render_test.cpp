// The segmented render's window and what it says of it (segmented_render.h), on a dump written in
// segments (tests/support/long_run.h: 5 segments of 3 launches, the last kernel of each segment
// stored in the next). Expected values worked out by hand from that run.
#include "launcher/render/segmented_render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/support/long_run.h"

namespace gprof::launcher {
namespace {

using ::testing::HasSubstr;

std::string Dir(const char* tag) {
  const std::string dir = ::testing::TempDir() + "/" + tag;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Findings parts of one record are the segments: 5 parts; the first (report.html's) holds segment
// 0's 3 launches with their 3 kernels (the third put back from segment 1) and its step; the
// findings say how they were made.
TEST(SegmentedRender, SmallFindingsPartsAreTheSegmentsAndTheFindingsSaySo) {
  const std::string dir = Dir("segmented_window");
  const std::string dump = gprof::testing::WriteLongRun(dir, 5, 3);
  Progress progress(stderr, false);
  TraceOptions traces;
  traces.pftrace = false;
  const SegmentedRender r = RenderDumpInSegments(dump, TableOptions{}, traces,
                                                 dir + "/trace.json", dir + "/trace.pftrace",
                                                 &progress, "long: ", /*part_records=*/1);
  EXPECT_EQ(r.segments, 5u);
  EXPECT_EQ(r.finding_parts, 5u);
  EXPECT_EQ(r.window_segments, 1u);
  EXPECT_EQ(r.window.api_calls.size(), 3u);
  EXPECT_EQ(r.window.kernels.size(), 3u);
  ASSERT_EQ(r.window.ranges.size(), 1u);
  EXPECT_EQ(r.window.strings.Get(r.window.ranges[0].name), "step");
  // The closing line's counts and the losses are the run's.
  EXPECT_EQ(r.totals.api_calls, 15u);
  EXPECT_EQ(r.totals.kernels, 16u);
  EXPECT_EQ(r.totals.ranges, 6u);
  EXPECT_EQ(r.window.counters.gpu_records_uncorrelated, 1u);
  EXPECT_THAT(SegmentedFindingsScope(r),
              HasSubstr("the run in 5 parts of about a million launches each, each analysed "
                        "alone"));
  EXPECT_THAT(SegmentedFindingsScope(r), HasSubstr("is of the first part (1 of 5 segments)"));
  EXPECT_THAT(SegmentedRenderNote(r, "long.4242.gpdump"),
              HasSubstr("(the findings part by part, 5 parts), report.html's timeline its "
                        "first 1 segments"));
  // Every finding of a part says how many parts saw it, of how many.
  for (const Finding& f : r.findings) {
    ASSERT_NE(f.Get("parts"), nullptr) << f.id;
    EXPECT_EQ(f.Get("parts")->n, 5u) << f.id;
    EXPECT_GE(f.Get("parts_seen")->n, 1u) << f.id;
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/trace.json"));

  // Parts of the default size: the whole run is one part, as a whole render: nothing to say.
  const SegmentedRender whole = RenderDumpInSegments(dump, TableOptions{}, traces,
                                                     dir + "/trace.json", dir + "/trace.pftrace",
                                                     &progress, "long: ");
  EXPECT_EQ(whole.window_segments, 5u);
  EXPECT_EQ(whole.finding_parts, 1u);
  EXPECT_EQ(whole.window.kernels.size(), 16u);
  EXPECT_EQ(SegmentedFindingsScope(whole), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gprof::launcher
