// CorrelationIndex: the same answers through its direct table (dense ids, the usual case) and its
// binary search (ids spread far apart), including ids between, below and above the recorded ones.
#include "analysis/attribution/correlation_index.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

Profile WithIds(std::vector<uint32_t> kernel_ids, std::vector<uint32_t> call_ids) {
  Profile p;
  p.launch_configs.push_back(LaunchConfig{});
  uint64_t t = 1000;
  for (uint32_t id : kernel_ids) {
    p.kernels.push_back({t, t + 10, id, 0, 0, 7});
    t += 100;
  }
  for (uint32_t id : call_ids) {
    p.api_calls.push_back({t, t + 5, id, 1, 211, ApiDomain::kRuntime, 0, 0});
    t += 100;
  }
  return p;
}

void ExpectLookups(uint32_t spread) {
  // Kernels with ids 1, 2, 2 (two records of one launch) and 5*spread; calls 1, 2, 3, 5*spread.
  const uint32_t far = 5 * spread;
  const CorrelationIndex index(WithIds({2, 1, 2, far}, {3, 1, 2, far, 2}));
  EXPECT_EQ(index.Gpu(0).size(), 0u);
  EXPECT_EQ(index.Gpu(1).size(), 1u);
  ASSERT_EQ(index.Gpu(2).size(), 2u);
  EXPECT_LT(index.Gpu(2)[0].start_ns, index.Gpu(2)[1].start_ns);  // earliest first
  EXPECT_EQ(index.Gpu(3).size(), 0u);
  EXPECT_EQ(index.Gpu(4).size(), 0u);
  EXPECT_EQ(index.Gpu(far).size(), 1u);
  EXPECT_EQ(index.Gpu(far + 1).size(), 0u);
  EXPECT_EQ(index.Gpu(UINT32_MAX).size(), 0u);
  EXPECT_EQ(index.ApiCall(0), -1);
  EXPECT_EQ(index.ApiCall(1), 1);
  EXPECT_EQ(index.ApiCall(2), 2);  // the first call with the id
  EXPECT_EQ(index.ApiCall(3), 0);
  EXPECT_EQ(index.ApiCall(4), -1);
  EXPECT_EQ(index.ApiCall(far), 3);
  EXPECT_EQ(index.ApiCall(far + 1), -1);
  EXPECT_EQ(index.GpuTimeNs(2), 20u);
}

TEST(CorrelationIndex, DenseIdsLookUpThroughTheTable) { ExpectLookups(1); }

// Records with id 0 (CUPTI's "none") start the table at 0: the largest id must still be outside
// it (fuzz/dump_fuzz found id - base + 1 wrapping to 0 for 2^32 - 1).
TEST(CorrelationIndex, TableStartingAtIdZeroStillBoundsTheLargestId) {
  const CorrelationIndex index(WithIds({0, 3, 4}, {0, 3}));
  EXPECT_EQ(index.Gpu(3).size(), 1u);
  EXPECT_EQ(index.Gpu(UINT32_MAX).size(), 0u);
  EXPECT_EQ(index.ApiCall(UINT32_MAX), -1);
  EXPECT_EQ(index.ApiCall(3), 1);
}
TEST(CorrelationIndex, SpreadIdsLookUpThroughBinarySearch) { ExpectLookups(1'000'000); }

}  // namespace
}  // namespace gprof
