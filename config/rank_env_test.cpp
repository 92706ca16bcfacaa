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

// The variables as each launcher sets them for one process (their documentation: Slurm's srun
// "OUTPUT ENVIRONMENT VARIABLES", torch.distributed.run's worker environment, Open MPI's
// "Environment variables set for MPI applications", MPICH's Hydra).
TEST(NodePlaceFromEnv, SrunTaskFiveOfEightOnTheSecondNode) {
  // srun -N 2 -n 8: tasks 4..7 on node 1, task 5 the second of them.
  const std::map<std::string, std::string> env = {
      {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "1"},
      {"SLURM_NTASKS", "8"}, {"SLURM_JOB_ID", "4242"}};
  int32_t rank = 0, world = 0, local = 0, node = 0;
  RankFromEnv(env, &rank, &world);
  NodePlaceFromEnv(env, &local, &node);
  EXPECT_EQ(rank, 5);
  EXPECT_EQ(world, 8);
  EXPECT_EQ(local, 1);
  EXPECT_EQ(node, 1);
}

TEST(NodePlaceFromEnv, MultiNodeTorchrunWorkerUnderSrunTakesTorchrunsNumbers) {
  // srun -N 2 torchrun --nnodes 2 --nproc-per-node 4: node 1's third worker is rank 6; srun's own
  // variables describe the torchrun agent (one task per node), not the worker.
  const std::map<std::string, std::string> env = {
      {"RANK", "6"}, {"LOCAL_RANK", "2"}, {"GROUP_RANK", "1"}, {"WORLD_SIZE", "8"},
      {"LOCAL_WORLD_SIZE", "4"}, {"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "0"},
      {"SLURM_NODEID", "1"}, {"SLURM_NTASKS", "2"}};
  int32_t rank = 0, world = 0, local = 0, node = 0;
  RankFromEnv(env, &rank, &world);
  NodePlaceFromEnv(env, &local, &node);
  EXPECT_EQ(rank, 6);
  EXPECT_EQ(world, 8);
  EXPECT_EQ(local, 2);
  EXPECT_EQ(node, 1);
}

TEST(NodePlaceFromEnv, MpiLaunchersGiveTheLocalRankButNoNodeIndex) {
  int32_t local = 0, node = 0;
  // mpirun -H a:2,b:2 -n 4: rank 3 is b's second process.
  NodePlaceFromEnv({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                    {"OMPI_COMM_WORLD_NODE_RANK", "1"}}, &local, &node);
  EXPECT_EQ(local, 1);
  EXPECT_EQ(node, -1);  // OMPI_COMM_WORLD_NODE_RANK is not the node's index
  NodePlaceFromEnv({{"PMI_RANK", "3"}, {"MPI_LOCALRANKID", "1"}}, &local, &node);  // Hydra
  EXPECT_EQ(local, 1);
  EXPECT_EQ(node, -1);
  NodePlaceFromEnv({}, &local, &node);
  EXPECT_EQ(local, -1);
  EXPECT_EQ(node, -1);
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
