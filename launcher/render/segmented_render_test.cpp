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

// A window of one record is the first segment: its 3 launches with their 3 kernels (the third
// put back from segment 1) and its step; the findings say it covers 1 of 5 segments.
TEST(SegmentedRender, SmallWindowIsTheFirstSegmentWithItsInFlightWorkAndSaysSo) {
  const std::string dir = Dir("segmented_window");
  const std::string dump = gprof::testing::WriteLongRun(dir, 5, 3);
  Progress progress(stderr, false);
  TraceOptions traces;
  traces.pftrace = false;
  const SegmentedRender r = RenderDumpInSegments(dump, TableOptions{}, traces,
                                                 dir + "/trace.json", dir + "/trace.pftrace",
                                                 &progress, "long: ", /*window_records=*/1);
  EXPECT_EQ(r.segments, 5u);
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
  // Segment 0's host records end at its step's end, 9.990 ms after the trace's start.
  const std::string scope = SegmentedFindingsScope(r);
  EXPECT_THAT(scope, HasSubstr("the run's first 1 of 5 segments (9.990ms from the trace's "
                               "start)"));
  EXPECT_THAT(SegmentedRenderNote(r, "long.4242.gpdump"),
              HasSubstr("the findings, report.html and SQLite export its first 1 segments"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/trace.json"));

  // A window of the default size is the whole run here: nothing to say.
  const SegmentedRender whole = RenderDumpInSegments(dump, TableOptions{}, traces,
                                                     dir + "/trace.json", dir + "/trace.pftrace",
                                                     &progress, "long: ");
  EXPECT_EQ(whole.window_segments, 5u);
  EXPECT_EQ(whole.window.kernels.size(), 16u);
  EXPECT_EQ(SegmentedFindingsScope(whole), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gprof::launcher
