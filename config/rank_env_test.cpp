// Rank detection from the launchers' variables, and the rank as file names show it.
#include "config/rank_env.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

TEST(RankFromEnv, FirstKnownLauncherVariableWins) {
  int32_t rank = 0, world = 0;
  RankFromEnv({}, &rank, &world);
  EXPECT_EQ(rank, -1);
  EXPECT_EQ(world, -1);
  RankFromEnv({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_RANK", "5"}}, &rank, &world);
  EXPECT_EQ(rank, 3);
  EXPECT_EQ(world, 8);
  RankFromEnv({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "16"}}, &rank, &world);
  EXPECT_EQ(rank, 5);
  EXPECT_EQ(world, 16);
  RankFromEnv({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}}, &rank, &world);
  EXPECT_EQ(rank, 2);
  EXPECT_EQ(world, 4);
  RankFromEnv({{"RANK", "x1"}, {"PMI_RANK", "7"}, {"PMI_SIZE", "9"}}, &rank, &world);
  EXPECT_EQ(rank, 7);  // a malformed RANK is skipped
  EXPECT_EQ(world, 9);
}

TEST(RankLabel, ZeroPaddedToTheWorldSizesWidth) {
  EXPECT_EQ(RankLabel(-1, 8), "");
  EXPECT_EQ(RankLabel(3, 8), "3");      // ranks 0..7: one digit
  EXPECT_EQ(RankLabel(3, 16), "03");    // ranks 0..15
  EXPECT_EQ(RankLabel(9, 10), "9");     // ranks 0..9: still one digit
  EXPECT_EQ(RankLabel(7, 1000), "007");
  EXPECT_EQ(RankLabel(12, -1), "12");   // world size unknown: as is
}

}  // namespace
}  // namespace gprof
