// Unit tests: the kernel occupancy estimate (occupancy.h). Expected values are worked out by hand
// from the formula in each comment, not by calling the code.
#include <gtest/gtest.h>

#include "analysis/attribution/occupancy.h"

namespace gprof {
namespace {

// An H100 SXM: 132 SMs, warps of 32, 2048 threads, 65536 registers, 228 KiB shared memory per SM.
DeviceInfo H100() {
  DeviceInfo d{};
  d.id = 0;
  d.num_sms = 132;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_registers_per_block = 65536;
  d.max_registers_per_sm = 65536;
  d.max_shared_memory_per_block = 49152;
  d.max_shared_memory_per_sm = 233472;
  return d;
}

LaunchConfig Launch(uint32_t grid_x, uint32_t block_x, uint32_t registers, uint32_t shared) {
  LaunchConfig lc{};
  lc.grid[0] = grid_x;
  lc.grid[1] = lc.grid[2] = 1;
  lc.block[0] = block_x;
  lc.block[1] = lc.block[2] = 1;
  lc.registers_per_thread = registers;
  lc.dynamic_shared_bytes = shared;
  return lc;
}

TEST(EstimateOccupancy, RegistersLimitResidentBlocksAndThePercentIsTruncated) {
  // 2640 blocks of 96 threads, 40 registers per thread, no shared memory:
  //   blocks per SM      = 2640 / 132 = 20
  //   warps per block    = ceil(96 / 32) = 3            -> warps per SM = 20 * 3 = 60
  //   limit by threads   = floor(2048 / 96) = 21
  //   limit by registers = floor(65536 / (40 * 3 * 32)) = floor(65536 / 3840) = 17
  //   resident blocks    = min(17, ceil(20)) = 17
  //   occupancy          = 17 * 3 / (2048 / 32) * 100 = 51 / 64 * 100 = 79.6875 -> 79
  const std::optional<OccupancyEstimate> est = EstimateOccupancy(H100(), Launch(2640, 96, 40, 0));
  ASSERT_TRUE(est.has_value());
  EXPECT_DOUBLE_EQ(est->blocks_per_sm, 20.0);
  EXPECT_DOUBLE_EQ(est->warps_per_sm, 60.0);
  ASSERT_TRUE(est->achieved_percent.has_value());
  EXPECT_EQ(*est->achieved_percent, 79u);
}

TEST(EstimateOccupancy, ASmallGridLimitsResidentBlocksBeforeSharedMemory) {
  // 200 blocks of 256 threads, 32 registers per thread, 48 KiB shared memory per block:
  //   blocks per SM      = 200 / 132 = 1.51515...
  //   warps per block    = 256 / 32 = 8                 -> warps per SM = 12.1212...
  //   limit by threads   = 2048 / 256 = 8
  //   limit by registers = 65536 / (32 * 8 * 32) = 65536 / 8192 = 8
  //   limit by shared    = floor(233472 / 49152) = floor(4.75) = 4
  //   resident blocks    = min(4, ceil(1.515)) = 2
  //   occupancy          = 2 * 8 / 64 * 100 = 25
  const std::optional<OccupancyEstimate> est =
      EstimateOccupancy(H100(), Launch(200, 256, 32, 49152));
  ASSERT_TRUE(est.has_value());
  EXPECT_NEAR(est->blocks_per_sm, 1.51515, 1e-5);
  EXPECT_NEAR(est->warps_per_sm, 12.1212, 1e-4);
  ASSERT_TRUE(est->achieved_percent.has_value());
  EXPECT_EQ(*est->achieved_percent, 25u);
}

TEST(EstimateOccupancy, PartialWarpsCanOvershootAndAreCappedAtOneHundred) {
  // 13200 blocks of 33 threads (2 warps, one nearly empty), no registers or shared memory given:
  //   resident blocks = min(floor(2048 / 33), ceil(13200 / 132)) = min(62, 100) = 62
  //   occupancy       = 62 * 2 / 64 * 100 = 193.75 -> capped at 100
  const std::optional<OccupancyEstimate> est = EstimateOccupancy(H100(), Launch(13200, 33, 0, 0));
  ASSERT_TRUE(est.has_value());
  EXPECT_DOUBLE_EQ(est->warps_per_sm, 200.0);
  EXPECT_EQ(est->achieved_percent, std::optional<uint64_t>(100));
}

TEST(EstimateOccupancy, EmptyBlockHasNoAchievedOccupancyAndUnknownDeviceNoEstimate) {
  const std::optional<OccupancyEstimate> empty = EstimateOccupancy(H100(), LaunchConfig{});
  ASSERT_TRUE(empty.has_value());
  EXPECT_DOUBLE_EQ(empty->blocks_per_sm, 0.0);
  EXPECT_FALSE(empty->achieved_percent.has_value());

  DeviceInfo no_sms = H100();
  no_sms.num_sms = 0;
  EXPECT_FALSE(EstimateOccupancy(no_sms, Launch(2640, 96, 40, 0)).has_value());
}

}  // namespace
}  // namespace gprof
