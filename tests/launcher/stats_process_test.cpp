// `gprof-run stats` as a real process on dumps written with model/WriteDump: one row of each
// kind of input (directory, single dump, window dumps summed), the formats, and the exit codes.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/dump.h"
#include "tests/launcher/sample_profile.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class StatsCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  ProcessResult Stats(std::vector<std::string> args) {
    args.insert(args.begin(), {LauncherPath(), "stats"});
    return RunProcess(args);
  }
  std::string dir_;
};

// SampleProfile: cudaLaunchKernel 100,000 ns and cudaMemcpyAsync 300,000 ns (of 400,000: 75 %),
// one kernel of 500,000 ns, one HtoD copy of 1 MiB = 1,048,576 bytes = 1.048576 MB in 100,000 ns.
TEST_F(StatsCommandTest, DirectoryCsvRowAndExitZero) {
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.gpdump"), "");
  const ProcessResult r = Stats({dir_, "--report", "cuda_api_sum", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
            "Name\n"
            "75.0,300000,1,300000.0,300000.0,300000,300000,0.0,cudaMemcpyAsync\n"
            "25.0,100000,1,100000.0,100000.0,100000,100000,0.0,cudaLaunchKernel\n");
}

TEST_F(StatsCommandTest, OneDumpFileAndCommaList) {
  const std::string dump = dir_ + "/app.77.gpdump";
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dump), "");
  const ProcessResult r =
      Stats({dump, "--report=cuda_gpu_mem_size_sum,cuda_gpu_kern_sum", "--format=csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith(" ** CUDA GPU MemOps Summary (by Size) (cuda_gpu_mem_size_sum):"));
  EXPECT_THAT(r.out, HasSubstr("\n1.048576,1,1.048576,1.048576,1.048576,1.048576,0.000000,"
                               "[CUDA memcpy Host-to-Device]\n"));
  EXPECT_THAT(r.out, HasSubstr("\n100.0,500000,1,500000.0,500000.0,500000,500000,0.0,"
                               "\"matmul(float*, float*, float*, int)\"\n"));
}

TEST_F(StatsCommandTest, DefaultTableHasAllFiveReports) {
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.gpdump"), "");
  const ProcessResult r = Stats({dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
                           "cuda_gpu_mem_size_sum", "nvtx_sum"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("(") + name + "):")) << r.out;
  }
  // train_step: 5,000,000 ns of 5,000,000 + 1,000,000 (forward) -> 83.3 %.
  EXPECT_THAT(r.out, HasSubstr("83.3        5,000,000"));
  EXPECT_THAT(r.out, HasSubstr("PushPop  train_step"));
}

TEST_F(StatsCommandTest, WindowDumpsOfAProcessAreSummedAndAWholeRunWins) {
  const std::string windows = dir_ + "/windows";
  fs::create_directories(windows);
  ASSERT_EQ(WriteDump(SampleProfile(5, "app"), windows + "/app.5.cycle1.steps1-2.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(5, "app"), windows + "/app.5.cycle2.steps3-4.gpdump"), "");
  // Another process with a whole run and a window: only its whole run counts.
  ASSERT_EQ(WriteDump(SampleProfile(6, "app"), windows + "/app.6.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(6, "app"), windows + "/app.6.cycle1.steps1-2.gpdump"), "");
  const ProcessResult r = Stats({windows, "--report", "cuda_gpu_kern_sum", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.at("cuda_gpu_kern_sum").size(), 1u);
  // 2 windows of pid 5 + the whole run of pid 6 = 3 instances of 500,000 ns.
  EXPECT_EQ(doc["cuda_gpu_kern_sum"][0].at("Instances"), 3);
  EXPECT_EQ(doc["cuda_gpu_kern_sum"][0].at("Total Time (ns)"), 1'500'000);
}

TEST_F(StatsCommandTest, ByStepListsEachStepAndItsTimeBreakdown) {
  Profile p = SampleProfile(77, "app");
  const uint64_t t0 = p.info.start_ns;
  p.steps.push_back({t0 + 1'000'000, t0 + 6'000'000, 3, 77});
  ASSERT_EQ(WriteDump(p, dir_ + "/app.77.gpdump"), "");
  const ProcessResult r = Stats({dir_, "--by-step", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Step 3 spans 5,000,000 ns; the kernel (500,000) and the copy (100,000) lie inside and do not
  // overlap: 600,000 ns busy = 12.0 %; one kernel.
  // Its breakdown: Kernel 500,000 [2.25, 2.75) ms; Memcpy 100,000 [2.8, 2.9); Runtime 100,000
  // (cudaLaunchKernel [2.1, 2.2); cudaMemcpyAsync [2.3, 2.6) runs under the kernel); CPU Exec: the
  // range train_step covers the step, less those 700,000 = 4,300,000; nothing else.
  EXPECT_EQ(r.out,
            " ** Per-Step Summary (step_sum):\n\n"
            "Step,PID,Wall Time (ns),GPU Busy (ns),GPU Busy (%),Kernels\n"
            "3,77,5000000,600000,12.0,1\n"
            "\n ** Step Time Breakdown (step_breakdown):\n\n"
            "Step,PID,Wall Time (ns),Kernel (ns),Memcpy (ns),Memset (ns),Runtime (ns),"
            "DataLoader (ns),CPU Exec (ns),Other (ns)\n"
            "3,77,5000000,500000,100000,0,100000,0,4300000,0\n");
}

TEST_F(StatsCommandTest, UsageErrorsExit2AndMissingDumpsExit1) {
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.gpdump"), "");
  ProcessResult r = Stats({dir_, "--report", "cuda_kern_sum"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--report cuda_kern_sum: unknown report"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(Stats({dir_, "--report", "cuda_api_sum,"}).exit_code, 2);  // empty name
  EXPECT_EQ(Stats({dir_, "--format", "xml"}).exit_code, 2);
  EXPECT_EQ(Stats({dir_, "--by-step=yes"}).exit_code, 2);
  EXPECT_EQ(Stats({dir_, "--bogus"}).exit_code, 2);
  EXPECT_EQ(Stats({}).exit_code, 2);
  EXPECT_EQ(Stats({dir_ + "/nope"}).exit_code, 2);
  EXPECT_EQ(Stats({"--help"}).exit_code, 0);
  EXPECT_THAT(RunProcess({LauncherPath(), "--help"}).out, HasSubstr("gprof-run stats PATH"));

  const std::string empty = dir_ + "/empty";
  fs::create_directories(empty);
  r = Stats({empty});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no dump"));

  const std::string corrupt = dir_ + "/corrupt.1.gpdump";
  std::ofstream(corrupt, std::ios::binary) << "GPROFDMP not really";
  r = Stats({corrupt});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("corrupt.1.gpdump"));
}

}  // namespace
}  // namespace gprof::testing
