// findings_patterns_test's twin on a real GPU (label gpu): the same patterns.cu modes under
// `gprof-run` with the real driver, libcudart and libcupti, asserting each mode's finding id and
// the opposite finding's absence. Exact numbers there come from the stand-in's knobs; here only
// the counts and bytes the program fixes are asserted. Skips where cuInit fails.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/gpu_available.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

using Json = nlohmann::json;

class FindingsPatternsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!GpuAvailable(&why)) GTEST_SKIP() << "no usable GPU: " << why;
  }
  // The findings of one run of `mode` (patterns MODE, or `program`).
  Json Run(const std::string& mode, std::vector<std::string> program = {}) {
    if (program.empty()) program = {GPROF_PATTERNS, mode};
    const std::string dir = MakeTempDir("gpu_patterns_" + mode) + "/out";
    std::vector<std::string> argv = {LauncherPath(), "-q", "-o", dir, "--"};
    argv.insert(argv.end(), program.begin(), program.end());
    const ProcessResult p = RunProcess(argv);
    EXPECT_EQ(p.exit_code, 0) << p.err;
    return Json::parse(ReadFile(dir + "/findings.json")).at("findings");
  }
  static const Json* Find(const Json& fs, const std::string& id) {
    for (const Json& f : fs) {
      if (f.at("id") == id) return &f;
    }
    return nullptr;
  }
};

TEST_F(FindingsPatternsGpu, ComputeAndOverheadModesGetOppositeVerdicts) {
  const Json compute = Run("compute");
  ASSERT_NE(Find(compute, "compute_bound"), nullptr) << compute.dump(2);
  EXPECT_EQ(Find(compute, "overhead_bound"), nullptr);
  EXPECT_EQ(Find(compute, "compute_bound")->at("evidence").at("kernels"), 10);
  const Json overhead = Run("overhead");
  ASSERT_NE(Find(overhead, "overhead_bound"), nullptr) << overhead.dump(2);
  EXPECT_EQ(Find(overhead, "compute_bound"), nullptr);
  EXPECT_EQ(Find(overhead, "sync"), nullptr);
}

// The seeds' verdicts: matmul + bias at 64 is overhead-bound, at 4096 compute-bound.
TEST_F(FindingsPatternsGpu, SeedsMatmulIsOverheadBoundAt64AndComputeBoundAt4096) {
  const Json small = Run("matmul64", {GPROF_MATMUL_BIAS, "64", "10"});
  ASSERT_NE(Find(small, "overhead_bound"), nullptr) << small.dump(2);
  EXPECT_EQ(Find(small, "compute_bound"), nullptr);
  const Json large = Run("matmul4096", {GPROF_MATMUL_BIAS, "4096", "10"});
  ASSERT_NE(Find(large, "compute_bound"), nullptr) << large.dump(2);
  EXPECT_EQ(Find(large, "overhead_bound"), nullptr);
}

TEST_F(FindingsPatternsGpu, HostPatternsAreNamed) {
  const Json idle = Run("idle");
  ASSERT_NE(Find(idle, "gpu_idle"), nullptr) << idle.dump(2);
  const Json sync = Run("sync");
  ASSERT_NE(Find(sync, "sync"), nullptr) << sync.dump(2);
  EXPECT_EQ(Find(sync, "sync")->at("evidence").at("synchronous_copies"), 10);
  const Json cold = Run("cold");
  ASSERT_NE(Find(cold, "cold_start"), nullptr) << cold.dump(2);
}

TEST_F(FindingsPatternsGpu, CopyPatternsAreNamed) {
  const Json pageable = Run("pageable");
  ASSERT_NE(Find(pageable, "pageable_memcpy"), nullptr) << pageable.dump(2);
  EXPECT_EQ(Find(pageable, "pageable_memcpy")->at("evidence").at("bytes"), 83'886'080);
  const Json serial = Run("serial");
  ASSERT_NE(Find(serial, "serialized_copy"), nullptr) << serial.dump(2);
  EXPECT_EQ(Find(Run("overlap"), "serialized_copy"), nullptr);
  const Json addmm = Run("addmm");
  ASSERT_NE(Find(addmm, "gemm_bias_copy"), nullptr) << addmm.dump(2);
}

TEST_F(FindingsPatternsGpu, KernelPatternsAreNamed) {
  const Json heavy = Run("heavy");
  ASSERT_NE(Find(heavy, "heavy_kernel"), nullptr) << heavy.dump(2);
  EXPECT_EQ(Find(heavy, "heavy_kernel")->at("evidence").at("heavy_launches"), 10);
  const Json spread = Run("spread");
  ASSERT_NE(Find(spread, "kernel_spread"), nullptr) << spread.dump(2);
  const Json short_kernels = Run("short");
  ASSERT_NE(Find(short_kernels, "short_kernels"), nullptr) << short_kernels.dump(2);
}

}  // namespace
}  // namespace gprof::testing
