#include "collector/cupti/start_messages.h"

#include <gtest/gtest.h>

namespace gprof::collector {
namespace {

TEST(FriendlyHolder, NamesTheToolsUsersKnow) {
  EXPECT_EQ(FriendlyHolder("CUPTI for Kineto"), "torch.profiler (Kineto)");
  EXPECT_EQ(FriendlyHolder("CUPTI for libtorch_cuda.so"), "torch.profiler (Kineto)");
  EXPECT_EQ(FriendlyHolder("Nsight Systems"), "Nsight Systems (nsys)");
  EXPECT_EQ(FriendlyHolder("CUPTI for NSYS"), "Nsight Systems (nsys)");
  EXPECT_EQ(FriendlyHolder("Nsight Compute"), "Nsight Compute (ncu)");
  EXPECT_EQ(FriendlyHolder("compute-sanitizer"), "compute-sanitizer");
  EXPECT_EQ(FriendlyHolder("DCGM exporter"), "DCGM");
  EXPECT_EQ(FriendlyHolder(""), "another profiling tool");
  EXPECT_EQ(FriendlyHolder("my-tool"), "my-tool");
}

}  // namespace
}  // namespace gprof::collector
