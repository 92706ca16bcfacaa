// PartFindings (findings_parts.h): which part's finding a subject keeps, what it adds, where its
// places move. Findings made by hand.
#include "analysis/findings/findings_parts.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

Finding Make(const std::string& id, uint64_t saving_ns, uint32_t device, uint64_t ts_ns) {
  Finding f;
  f.id = id;
  f.severity = Severity::kWarn;
  Place p;
  p.ts_ns = ts_ns;
  p.device = device;
  f.where = p;
  f.places = {p};
  Saving s;
  s.run_ns = saving_ns;
  f.saving = s;
  return f;
}

// Part 1 (origin = the run's): gpu_idle of GPU 0 saving 5 ms, at 100 us. Part 2 (its origin
// 1 s after the run's): gpu_idle of GPU 0 saving 9 ms at 200 us of the part, gpu_idle of GPU 1
// saving 1 ms, sync saving 2 ms. Kept: GPU 0's of part 2 (9 > 5), seen in 2 of 2, at
// 1 s + 200 us on the run's trace; GPU 1's and sync's seen once; ordered by saving.
TEST(PartFindings, EachSubjectKeepsThePartThatSavesMostWithPlacesOnTheRunsTime) {
  PartFindings parts;
  parts.AddPart({Make("gpu_idle", 5'000'000, 0, 100'000)}, 0);
  parts.AddPart({Make("gpu_idle", 9'000'000, 0, 200'000), Make("gpu_idle", 1'000'000, 1, 5),
                 Make("sync", 2'000'000, 0, 7)},
                1'000'000'000);
  const std::vector<Finding> kept = parts.Take();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].id, "gpu_idle");
  EXPECT_EQ(kept[0].saving->run_ns, 9'000'000u);
  EXPECT_EQ(kept[0].where->ts_ns, 1'000'200'000u);
  EXPECT_EQ(kept[0].places[0].ts_ns, 1'000'200'000u);
  EXPECT_EQ(kept[0].Get("parts_seen")->n, 2u);
  EXPECT_EQ(kept[0].Get("parts")->n, 2u);
  EXPECT_EQ(kept[1].id, "sync");
  EXPECT_EQ(kept[1].Get("parts_seen")->n, 1u);
  EXPECT_EQ(kept[2].id, "gpu_idle");
  EXPECT_EQ(*kept[2].where->device, 1u);
  EXPECT_EQ(kept[2].Get("parts_seen")->n, 1u);
}

// One part is a whole run's analysis: its findings come back unchanged (no parts evidence).
TEST(PartFindings, OnePartAddsNothing) {
  PartFindings parts;
  parts.AddPart({Make("sync", 2'000'000, 0, 7)}, 0);
  const std::vector<Finding> kept = parts.Take();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].Get("parts"), nullptr);
  EXPECT_EQ(kept[0].where->ts_ns, 7u);
}

}  // namespace
}  // namespace gprof
