// Unit tests: lane packing keeps every track nested.
#include "analysis/timeline/lane_packer.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

TEST(PackNestedLanes, NestedAndSequentialStayOnOneLane) {
  const auto lanes = PackNestedLanes({{0, 100, 0, 0}, {10, 20, 0, 1}, {20, 30, 0, 2}, {100, 200, 0, 3}});
  EXPECT_EQ(lanes, (std::vector<uint32_t>{0, 0, 0, 0}));
}

TEST(PackNestedLanes, PartialOverlapMovesToNextLane) {
  const auto lanes = PackNestedLanes({{0, 100, 0, 0}, {50, 150, 0, 1}, {60, 70, 0, 2}, {120, 300, 0, 3}});
  EXPECT_EQ(lanes, (std::vector<uint32_t>{0, 1, 0, 0}));
}

TEST(PackNestedLanes, EqualIntervalsNestByOrder) {
  const auto lanes = PackNestedLanes({{0, 100, 5, 0}, {0, 100, 1, 1}});
  EXPECT_EQ(lanes, (std::vector<uint32_t>{0, 0}));
}

}  // namespace
}  // namespace gprof
