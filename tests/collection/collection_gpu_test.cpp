// The end-to-end collection checks on a real GPU (label gpu): the real driver, libcudart and
// libcupti, no stand-in. Skips cleanly where cuInit fails (no driver or no GPU).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include "tests/collection/collection_util.h"

namespace gprof::testing {
namespace {

#ifndef GPROF_CUDA_LIBRARY_DIR
#define GPROF_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

// cuInit(0) through a dlopen'ed libcuda.so.1, so this binary needs no driver to start.
bool GpuAvailable(std::string* why) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) {
    *why = "no libcuda.so.1 (no NVIDIA driver)";
    return false;
  }
  using CuInit = int (*)(unsigned int);
  auto cu_init = reinterpret_cast<CuInit>(dlsym(cuda, "cuInit"));
  if (cu_init == nullptr) {
    *why = "libcuda.so.1 lacks cuInit";
    return false;
  }
  int rc = cu_init(0);
  if (rc != 0) {
    *why = "cuInit failed with CUresult " + std::to_string(rc);
    return false;
  }
  return true;
}

class GpuCollection : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!GpuAvailable(&why)) GTEST_SKIP() << "no usable GPU: " << why;
    if (access(InjectLibPath().c_str(), F_OK) != 0 ||
        access(ExamplePath("launch_loop").c_str(), F_OK) != 0) {
      GTEST_SKIP() << "build gprof_inject and the CUDA examples first";
    }
  }
  ProfiledRun Run(const std::vector<std::string>& argv, const std::string& tag,
                  std::map<std::string, std::string> env = {}) {
    return RunProfiled(argv, GPROF_CUDA_LIBRARY_DIR, env, tag);
  }
};

TEST_F(GpuCollection, MatmulEveryKernelCopyAndMemsetAppearsOnceLinkedToItsCall) {
  ProfiledRun run = Run({ExamplePath("matmul_bias"), "256"}, "gpu_matmul");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
  EXPECT_EQ(run.profile.info.gpu_status, "collected") << run.process.err;
  EXPECT_FALSE(run.profile.info.cupti_library.empty());
  EXPECT_GT(run.profile.kernels.size(), 0u);
  EXPECT_GT(run.profile.memcpys.size(), 0u);
  EXPECT_FALSE(run.profile.devices.empty());
  ExpectEveryGpuRecordLinkedOnce(run.profile);
}

TEST_F(GpuCollection, MultistreamAndMultithreadStayLinked) {
  for (const char* example : {"multistream", "multithread"}) {
    ProfiledRun run = Run({ExamplePath(example)}, std::string("gpu_") + example);
    ASSERT_EQ(run.process.exit_code, 0) << example << "\n" << run.process.err;
    ASSERT_TRUE(run.has_dump) << run.dump_error;
    ExpectEveryGpuRecordLinkedOnce(run.profile);
  }
}

TEST_F(GpuCollection, MatmulSmallIsCpuBoundLargeIsGpuBound) {
  ProfiledRun small = Run({ExamplePath("matmul_bias"), "64"}, "gpu_mm64");
  ProfiledRun large = Run({ExamplePath("matmul_bias"), "4096"}, "gpu_mm4096");
  ASSERT_TRUE(small.has_dump && large.has_dump) << small.dump_error << large.dump_error;
  const double small_ratio =
      static_cast<double>(KernelNs(small.profile)) / static_cast<double>(StepNs(small.profile));
  const double large_ratio =
      static_cast<double>(KernelNs(large.profile)) / static_cast<double>(StepNs(large.profile));
  EXPECT_LT(small_ratio, 0.6) << "GPU/CPU at 64";
  EXPECT_GT(large_ratio, 0.6) << "GPU/CPU at 4096";
  EXPECT_LT(large_ratio, 1.5) << "GPU/CPU at 4096";
}

TEST_F(GpuCollection, ManyLaunchesLoseNothing) {
  ProfiledRun run = Run({ExamplePath("launch_loop"), "1000000"}, "gpu_loop1m");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_EQ(run.profile.kernels.size() + run.profile.counters.cupti_dropped_records, 1000000u);
  EXPECT_EQ(run.profile.counters.cupti_dropped_records, 0u);
  EXPECT_EQ(run.profile.counters.cupti_buffers_refused, 0u);
}

TEST_F(GpuCollection, CappedPoolReportsWhatItDropped) {
  ProfiledRun run = Run({ExamplePath("launch_loop"), "300000"}, "gpu_capped",
                        {{"GPROF_ACTIVITY_POOL", "2"}, {"GPROF_ACTIVITY_BUFFER_KIB", "64"}});
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  EXPECT_EQ(p.kernels.size() + p.counters.cupti_dropped_records, 300000u);
  if (p.counters.cupti_dropped_records > 0) {
    EXPECT_EQ(CountLines(run.process.err, "CUPTI activity records were dropped"), 1);
  }
}

TEST_F(GpuCollection, MissingLibcuptiLeavesProgramUntouched) {
  const std::vector<std::string> argv = {ExamplePath("matmul_bias"), "64"};
  ProcessResult plain = RunProcess(argv, PlainOptions(GPROF_CUDA_LIBRARY_DIR, {}));
  ProfiledRun run = Run(argv, "gpu_nocupti", {{"GPROF_CUPTI_LIB", "/nonexistent/libcupti.so.13"}});
  EXPECT_EQ(run.process.exit_code, plain.exit_code);
  EXPECT_EQ(run.process.out, plain.out);
  EXPECT_EQ(CountLines(run.process.err, "GPU collection is off"), 1) << run.process.err;
}

}  // namespace
}  // namespace gprof::testing
