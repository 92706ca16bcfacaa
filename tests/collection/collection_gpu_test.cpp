// The end-to-end collection checks on a real GPU (label gpu): the real driver, libcudart and
// libcupti, no stand-in. Skips cleanly where cuInit fails (no driver or no GPU).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <regex>
#include <set>

#include "tests/collection/collection_util.h"
#include "tests/support/gpu_available.h"

namespace gprof::testing {
namespace {

#ifndef GPROF_CUDA_LIBRARY_DIR
#define GPROF_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

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
    // As its stand-in twin (Collection.MultistreamAndMultithreadStayLinked): without kernels
    // "every record linked once" holds of nothing.
    EXPECT_GT(run.profile.kernels.size(), 0u) << example;
    ExpectEveryGpuRecordLinkedOnce(run.profile);
    std::set<uint32_t> streams, tids;
    for (const Kernel& k : run.profile.kernels) streams.insert(k.stream_id);
    for (const ApiCall& c : run.profile.api_calls) tids.insert(c.tid);
    if (std::string(example) == "multistream") {
      EXPECT_GT(streams.size(), 1u);
    } else {
      EXPECT_GT(tids.size(), 1u);
    }
  }
}

// The real-hardware twin of Collection.MatmulSmallIsCpuBoundLargeIsGpuBoundOnStandInCostModel:
// the same verdict from real kernel and launch times.
TEST_F(GpuCollection, MatmulSmallIsCpuBoundLargeIsGpuBound) {
  ProfiledRun small = Run({ExamplePath("matmul_bias"), "64"}, "gpu_mm64");
  ProfiledRun large = Run({ExamplePath("matmul_bias"), "4096"}, "gpu_mm4096");
  ASSERT_TRUE(small.has_dump && large.has_dump) << small.dump_error << large.dump_error;
  // Without steps or kernels the ratios below are 0 or NaN and the verdicts mean nothing.
  ASSERT_GT(StepNs(small.profile), 0u);
  ASSERT_GT(StepNs(large.profile), 0u);
  ASSERT_GT(KernelNs(small.profile), 0u);
  ASSERT_GT(KernelNs(large.profile), 0u);
  const double small_ratio =
      static_cast<double>(KernelNs(small.profile)) / static_cast<double>(StepNs(small.profile));
  const double large_ratio =
      static_cast<double>(KernelNs(large.profile)) / static_cast<double>(StepNs(large.profile));
  EXPECT_LT(small_ratio, 0.6) << "GPU/CPU at 64";
  EXPECT_GT(large_ratio, 0.6) << "GPU/CPU at 4096";
  EXPECT_LT(large_ratio, 1.5) << "GPU/CPU at 4096";
}

// A time cell of the table ("1.234ms") in ns, or -1.
double TimeNs(const std::string& text) {
  std::smatch m;
  if (!std::regex_match(text, m, std::regex(R"(([0-9.]+)(us|ms|s))"))) return -1;
  return std::stod(m[1]) * (m[2] == "us" ? 1e3 : m[2] == "ms" ? 1e6 : 1e9);
}

// "Self CPU time total: 1.234ms" -> ns, or -1.
double FooterNs(const std::string& table, const std::string& footer) {
  std::smatch m;
  if (!std::regex_search(table, m, std::regex(footer + R"(: ([0-9.]+(?:us|ms|s)))"))) return -1;
  return TimeNs(m[1]);
}

// The Self CPU cell (third column) and "# of Calls" (last) of the row named `name`; -1 if none.
struct TableRow {
  double self_cpu_ns = -1;
  long calls = -1;
};
TableRow FindRow(const std::string& table, const std::string& name) {
  const std::string quoted =
      std::regex_replace(name, std::regex(R"([.*+?^${}()|\[\]\\])"), R"(\$&)");
  const std::regex row("^ *" + quoted + R"( +[0-9.]+% +([0-9.]+(?:us|ms|s)) .* ([0-9]+) *$)");
  std::smatch m;
  size_t start = 0;
  while (start < table.size()) {
    size_t end = table.find('\n', start);
    if (end == std::string::npos) end = table.size();
    const std::string line = table.substr(start, end - start);
    if (std::regex_match(line, m, row)) return {TimeNs(m[1]), std::stol(m[2])};
    start = end + 1;
  }
  return {};
}

// The real-hardware twin of the e2e test
// MainJob.MatmulOverheadBoundAtSmallSizeComputeBoundAtLargeOnStandInCostModel: the articles'
// workflow through gprof-run, schedule(wait=1, warmup=1, active=3), verdicts read from the
// window's table footers. Thresholds as in the twin above (real launch and kernel times, not a
// cost model); the stand-in test's "kernels take less time than launching them" at 64 is left
// out: on a real GPU a 64x64 matmul kernel and its launch call both take a few microseconds.
TEST_F(GpuCollection, MatmulTableOverheadBoundAtSmallComputeBoundAtLarge) {
  if (access(LauncherPath().c_str(), X_OK) != 0) GTEST_SKIP() << "build gprof-run first";
  double cpu[2], gpu[2], launch_cpu[2];
  const char* sizes[2] = {"64", "4096"};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(std::string("size ") + sizes[i]);
    const std::string dir = MakeTempDir(std::string("gpu_table_mm") + sizes[i]) + "/out";
    const ProcessResult r = RunProcess(
        {LauncherPath(), "-o", dir, "--wait", "1", "--warmup", "1", "--active", "3", "--repeat",
         "1", "--", ExamplePath("matmul_bias"), sizes[i], "6"},
        PlainOptions(GPROF_CUDA_LIBRARY_DIR, {}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string table;
    for (const std::string& f : ListDir(dir)) {
      if (f.find(".cycle0.steps2-4.table.txt") != std::string::npos) {
        table = ReadFile(dir + "/" + f);
      }
    }
    ASSERT_FALSE(table.empty()) << r.err;
    EXPECT_EQ(FindRow(table, "ProfilerStep*").calls, 3) << table;
    EXPECT_EQ(FindRow(table, "matmul_kernel(float const*, float const*, float*, int)").calls, 3)
        << table;
    // The runtime reports <<<>>> launches as cudaLaunchKernel or __cudaLaunchKernel.
    TableRow launch = FindRow(table, "cudaLaunchKernel");
    if (launch.calls < 0) launch = FindRow(table, "__cudaLaunchKernel");
    EXPECT_EQ(launch.calls, 6) << table;
    cpu[i] = FooterNs(table, "Self CPU time total");
    gpu[i] = FooterNs(table, "Self CUDA time total");
    launch_cpu[i] = launch.self_cpu_ns;
    ASSERT_GT(cpu[i], 0) << table;
    ASSERT_GT(gpu[i], 0) << table;
    ASSERT_GT(launch_cpu[i], 0) << table;
  }
  EXPECT_LT(gpu[0], 0.6 * cpu[0]) << "64: the GPU idles most of each step (overhead-bound)";
  EXPECT_GT(gpu[1], 0.6 * cpu[1]) << "4096: GPU time comparable to CPU time (compute-bound)";
  EXPECT_GT(gpu[1], 10 * launch_cpu[1]) << "4096: kernels dwarf the cost of launching them";
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
  // The program must have run for real: two failed runs would also be "untouched".
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(plain.out.empty());
  EXPECT_EQ(run.process.exit_code, plain.exit_code);
  EXPECT_EQ(run.process.out, plain.out);
  EXPECT_EQ(CountLines(run.process.err, "GPU collection is off"), 1) << run.process.err;
}

}  // namespace
}  // namespace gprof::testing
