// Unit tests of the memory findings (findings_memory.cpp, docs/FINDINGS.md) on hand-built
// profiles: every number below is worked out from the records in the comments.
#include <gtest/gtest.h>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_test_util.h"

namespace gprof::findings_test {
namespace {

constexpr uint64_t kMb = 1 << 20;
constexpr uint16_t kMalloc = 20, kFree = 16;

// Steps of 1 ms each from t0 + 1 ms (ProfilerStep#0 ...).
void AddSteps(Profile* p, int n) {
  for (int s = 0; s < n; ++s) {
    p->steps.push_back({t0 + (1 + s) * 1'000'000ull, t0 + (2 + s) * 1'000'000ull,
                        static_cast<uint32_t>(s), kTid});
  }
}

void AddMemory(Profile* p, uint64_t at, uint64_t addr, uint64_t bytes, MemoryOpKind op,
               uint32_t corr, bool async = false) {
  p->memory_ops.push_back({t0 + at, addr, bytes, corr, 0xffffffffu, op, MemKind::kDevice, 0,
                           static_cast<uint8_t>(async ? 1 : 0), 0});
}

Profile WithMallocApi() {
  Profile p = NewProfile();
  p.api_names.push_back({kMalloc, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMalloc")});
  p.api_names.push_back({kFree, ApiDomain::kRuntime, 0, p.strings.Intern("cudaFree")});
  return p;
}

// A leak: each of 6 steps allocates 2 MB (in range "forward", through cudaMalloc) and frees
// nothing. In use at the ends of steps 0..5: 2, 4, 6, 8, 10, 12 MB.
TEST(MemoryFindings, MemoryGrowsStepAfterStep) {
  Profile p = WithMallocApi();
  AddSteps(&p, 6);
  for (uint32_t s = 0; s < 6; ++s) {
    const uint64_t at = (1 + s) * 1'000'000ull + 100'000;
    AddRange(&p, at - 10'000, at + 50'000, "forward");
    AddApi(&p, at, at + 20'000, 100 + s, kMalloc);
    AddMemory(&p, at + 5'000, 0x10000 + s * 0x1000, 2 * kMb, MemoryOpKind::kAlloc, 100 + s);
  }
  const auto fs = FindFindings(p);
  const Finding* g = Find(fs, "memory_growth");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(Ns(*g, "steps"), 6u);
  EXPECT_EQ(Ns(*g, "first_step_end_bytes"), 2 * kMb);
  EXPECT_EQ(Ns(*g, "last_step_end_bytes"), 12 * kMb);
  EXPECT_EQ(Ns(*g, "growth_per_step_bytes"), 2 * kMb);  // (12 - 2) / 5
  EXPECT_DOUBLE_EQ(X(*g, "rising_steps_pct"), 100.0);
  EXPECT_NE(g->title.find("+2.00 MB per step"), std::string::npos) << g->title;
  // The peak is the last allocation: 12 MB, 6 live, in step 5, in "forward".
  const Finding* peak = Find(fs, "memory_peak");
  ASSERT_NE(peak, nullptr);
  EXPECT_EQ(Ns(*peak, "peak_bytes"), 12 * kMb);
  EXPECT_EQ(Ns(*peak, "live_allocations"), 6u);
  ASSERT_TRUE(peak->where.has_value());
  EXPECT_EQ(peak->where->step, 5u);
  EXPECT_EQ(peak->where->name, "cudaMalloc");
  ASSERT_FALSE(peak->where->context.empty());
  EXPECT_EQ(peak->where->context.front(), "forward");
  EXPECT_NE(peak->title.find("12.00 MB in step 5, in forward"), std::string::npos) << peak->title;
  // One allocation per step is no churn.
  EXPECT_EQ(Find(fs, "alloc_churn"), nullptr);
}

// A torch program with --profile-memory: CUDA sees one 20 MB segment, allocated before the steps
// and never freed (flat: no growth in CUDA's view); torch's blocks leak 1 MB per step, made in
// aten::mm inside "forward" on thread kTid, and a 4 MB temporary in each step is freed in the same
// step. Allocated at the ends of steps 0..5: 1, 2, 3, 4, 5, 6 MB; the peak is step 5's temporary
// on top of its 6 MB: 10 MB, 7 live blocks (6 x 1 MB + 4 MB), in step 5, in aten::mm.
TEST(MemoryFindings, TorchBlocksGrowWhileCudaSegmentsStayFlat) {
  Profile p = WithMallocApi();
  AddSteps(&p, 6);
  AddApi(&p, 500'000, 520'000, 99, kMalloc);
  AddMemory(&p, 505'000, 0x7000000, 20 * kMb, MemoryOpKind::kAlloc, 99);
  p.torch_memory.push_back({t0 + 505'000, 0x7000000, 20 * kMb, kTid, 0,
                            TorchMemAction::kSegmentAlloc, 0, 0});
  const auto block = [&](uint64_t at, uint64_t addr, uint64_t bytes, TorchMemAction a) {
    p.torch_memory.push_back({t0 + at, addr, bytes, kTid, 0, a, 0, 0});
  };
  for (uint32_t s = 0; s < 6; ++s) {
    const uint64_t at = (1 + s) * 1'000'000ull + 100'000;
    AddRange(&p, at - 10'000, at + 500'000, "forward");
    AddRange(&p, at, at + 100'000, "aten::mm");
    block(at + 10'000, 0x7000000 + s * kMb, kMb, TorchMemAction::kAlloc);
    block(at + 20'000, 0x7800000, 4 * kMb, TorchMemAction::kAlloc);
    block(at + 300'000, 0x7800000, 4 * kMb, TorchMemAction::kFree);
  }
  const auto fs = FindFindings(p);
  const Finding* g = Find(fs, "memory_growth");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(Ns(*g, "first_step_end_bytes"), kMb);
  EXPECT_EQ(Ns(*g, "last_step_end_bytes"), 6 * kMb);
  EXPECT_EQ(Ns(*g, "growth_per_step_bytes"), kMb);  // (6 - 1) / 5
  EXPECT_EQ(g->title.rfind("Tensor memory (torch's caching allocator) grows step after step", 0),
            0u) << g->title;
  const Finding* peak = Find(fs, "memory_peak");
  ASSERT_NE(peak, nullptr);
  EXPECT_EQ(Ns(*peak, "peak_bytes"), 10 * kMb);
  EXPECT_EQ(Ns(*peak, "live_allocations"), 7u);
  EXPECT_EQ(Ns(*peak, "cuda_peak_bytes"), 20 * kMb);
  ASSERT_TRUE(peak->where.has_value());
  EXPECT_EQ(peak->where->step, 5u);
  EXPECT_EQ(peak->where->name, "aten::mm");
  ASSERT_FALSE(peak->where->context.empty());
  EXPECT_EQ(peak->where->context.front(), "forward");
  EXPECT_NE(peak->title.find("10.00 MB in step 5, in aten::mm (7 live blocks; largest 4.00 MB, "
                             "1.00 MB, 1.00 MB)"),
            std::string::npos)
      << peak->title;
}

// The same allocations, each freed in the next step: in use 2 MB at every step end, no growth.
TEST(MemoryFindings, SteadyMemoryIsNoGrowth) {
  Profile p = WithMallocApi();
  AddSteps(&p, 6);
  for (uint32_t s = 0; s < 6; ++s) {
    const uint64_t at = (1 + s) * 1'000'000ull + 100'000;
    if (s > 0) AddMemory(&p, at, 0x10000 + (s - 1) * 0x1000, 0, MemoryOpKind::kFree, 0);
    AddMemory(&p, at + 5'000, 0x10000 + s * 0x1000, 2 * kMb, MemoryOpKind::kAlloc, 0);
  }
  const auto fs = FindFindings(p);
  EXPECT_EQ(Find(fs, "memory_growth"), nullptr);
  const Finding* peak = Find(fs, "memory_peak");
  ASSERT_NE(peak, nullptr);
  EXPECT_EQ(Ns(*peak, "peak_bytes"), 2 * kMb);  // the free (size from its allocation) comes first
}

// Churn: every step allocates and frees 3 buffers (6 operations); pool allocations in between
// (stream-ordered) do not count.
TEST(MemoryFindings, ManySynchronousAllocationsPerStepAreChurnPoolOnesAreNot) {
  Profile p = WithMallocApi();
  AddSteps(&p, 4);
  for (uint32_t s = 0; s < 4; ++s) {
    for (uint32_t k = 0; k < 3; ++k) {
      const uint64_t at = (1 + s) * 1'000'000ull + 100'000 + k * 200'000;
      const uint64_t addr = 0x100000 + k * 0x1000;
      AddMemory(&p, at, addr, kMb, MemoryOpKind::kAlloc, 0);
      AddMemory(&p, at + 50'000, addr, kMb, MemoryOpKind::kFree, 0);
      AddMemory(&p, at + 60'000, 0x900000 + k, 4096, MemoryOpKind::kAlloc, 0, /*async=*/true);
      AddMemory(&p, at + 70'000, 0x900000 + k, 4096, MemoryOpKind::kFree, 0, /*async=*/true);
    }
  }
  const auto fs = FindFindings(p);
  const Finding* c = Find(fs, "alloc_churn");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Ns(*c, "median_per_step"), 6u);
  EXPECT_EQ(Ns(*c, "allocations"), 12u);
  EXPECT_EQ(Ns(*c, "frees"), 12u);
  EXPECT_EQ(Ns(*c, "pinned"), 0u);
  EXPECT_EQ(Find(fs, "memory_growth"), nullptr);
}

TEST(MemoryFindings, NoMemoryRecordsNoMemoryFindings) {
  Profile p = WithMallocApi();
  AddSteps(&p, 6);
  const auto fs = FindFindings(p);
  EXPECT_EQ(Find(fs, "memory_peak"), nullptr);
  EXPECT_EQ(Find(fs, "memory_growth"), nullptr);
  EXPECT_EQ(Find(fs, "alloc_churn"), nullptr);
}

}  // namespace
}  // namespace gprof::findings_test
