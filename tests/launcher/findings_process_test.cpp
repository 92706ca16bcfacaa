// Findings as a user meets them: `gprof-run report DIR` on dumps written with model/WriteDump
// writes findings.json and findings.txt next to each table and prints a short Findings section on
// stderr between the table and the closing line (not with -q).
#include <filesystem>
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

class FindingsCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  std::string dir_;
};

// SampleProfile (ms after t0 = the collection start = the trace origin), thread 77:
//   train_step [1, 6) > forward [2, 3) > cudaLaunchKernel [2.1, 2.2) -> matmul [2.25, 2.75) and
//   cudaMemcpyAsync [2.3, 2.6) -> HtoD pageable -> device, async, 1 MiB, [2.8, 2.9).
// Window (no steps): first launch 2.1 .. last GPU end 2.9 = 800 us. GPU busy 500 + 100 = 75 %:
// neither overhead- nor compute-bound. Gaps >= 100 us: [2.1, 2.25) = 150 us (the other,
// [2.75, 2.8), is 50) = 18.75 %: gpu_idle warn; the host's own time in it: cudaLaunchKernel
// [2.1, 2.2) 100 us, forward 150 - 100 = 50 us (train_step's is all in forward). Pageable: one
// async copy, 1,048,576 bytes, 100 us = 12.5 % of the window: pageable_memcpy warn. No syncs.
TEST_F(FindingsCommandTest, ReportWritesFindingsAndPrintsTheSection) {
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.cycle1.steps2-4.gpdump"), "");
  const ProcessResult r = RunProcess({LauncherPath(), "report", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const nlohmann::json doc = nlohmann::json::parse(ReadFile(dir_ + "/findings.json"));
  ASSERT_EQ(doc.at("findings").size(), 2u) << doc.dump(2);
  const nlohmann::json& idle = doc["findings"][0];
  EXPECT_EQ(idle.at("id"), "gpu_idle");
  EXPECT_EQ(idle.at("severity"), "warn");
  EXPECT_EQ(idle.at("evidence").at("idle_us"), 150.0);
  EXPECT_EQ(idle["evidence"].at("idle_pct"), 18.75);
  EXPECT_EQ(idle["evidence"].at("window_us"), 800.0);
  EXPECT_EQ(idle.at("where").at("ts_us"), 2100.0);
  EXPECT_EQ(idle["where"].at("dur_us"), 150.0);
  EXPECT_EQ(idle["where"].at("context"),
            nlohmann::json::array({"cudaLaunchKernel on thread 77 (100.000us of the gap)",
                                   "forward on thread 77 (50.000us of the gap)"}));
  const nlohmann::json& copy = doc["findings"][1];
  EXPECT_EQ(copy.at("id"), "pageable_memcpy");
  EXPECT_EQ(copy.at("severity"), "warn");
  EXPECT_EQ(copy.at("evidence").at("copies"), 1);
  EXPECT_EQ(copy["evidence"].at("bytes"), 1'048'576);
  EXPECT_EQ(copy["evidence"].at("copy_time_us"), 100.0);
  EXPECT_EQ(copy.at("where").at("name"), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(copy["where"].at("thread"), 77);
  EXPECT_EQ(copy["where"].at("context"), nlohmann::json::array({"forward", "train_step"}));
  for (const auto& f : doc["findings"]) {
    EXPECT_NE(f.at("id"), "sync");  // no synchronization in this profile
    EXPECT_NE(f.at("id"), "overhead_bound");
    EXPECT_NE(f.at("id"), "compute_bound");
  }

  const std::string text = ReadFile(dir_ + "/findings.txt");
  EXPECT_THAT(text, HasSubstr("[warn] gpu_idle: GPU 0 idle 18.8% of the window"));
  EXPECT_THAT(text, HasSubstr("[warn] pageable_memcpy: 1 async copy from or to pageable host "
                              "memory (1048576 bytes, 100.000us on the GPU)"));

  // The window dump gets its own pair, with the same findings (the same profile).
  const std::string stem = dir_ + "/app.77.cycle1.steps2-4";
  EXPECT_EQ(ReadFile(stem + ".findings.json"), ReadFile(dir_ + "/findings.json"));
  EXPECT_TRUE(fs::exists(stem + ".findings.txt"));

  // stderr: table, then the section, then the closing line naming findings.txt.
  const size_t table = r.err.find("Self CPU time total");
  const size_t section = r.err.find("Findings:\n  warn  gpu_idle: GPU 0 idle 18.8%");
  const size_t copy_line = r.err.find("\n  warn  pageable_memcpy: 1 async copy");
  const size_t closing = r.err.find("gprof-run: recorded");
  ASSERT_NE(table, std::string::npos) << r.err;
  ASSERT_NE(section, std::string::npos) << r.err;
  ASSERT_NE(copy_line, std::string::npos) << r.err;
  ASSERT_NE(closing, std::string::npos) << r.err;
  EXPECT_LT(table, section);
  EXPECT_LT(copy_line, closing);
  EXPECT_THAT(r.err.substr(closing), HasSubstr(", findings " + dir_ + "/findings.txt"));
}

TEST_F(FindingsCommandTest, QuietWritesFindingsButPrintsNoSection) {
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.gpdump"), "");
  const ProcessResult r = RunProcess({LauncherPath(), "report", dir_, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ + "/findings.json"));
  EXPECT_TRUE(fs::exists(dir_ + "/findings.txt"));
  EXPECT_EQ(r.err.find("Findings:"), std::string::npos) << r.err;
}

// A profile without GPU data and without syncs: an empty list, said plainly.
TEST_F(FindingsCommandTest, NvtxOnlyProfileHasNoFindings) {
  Profile p = SampleProfile(77, "app");
  p.kernels.clear();
  p.memcpys.clear();
  p.api_calls.clear();
  ASSERT_EQ(WriteDump(p, dir_ + "/app.77.gpdump"), "");
  const ProcessResult r = RunProcess({LauncherPath(), "report", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir_ + "/findings.json")),
            nlohmann::json::parse(R"({"findings": []})"));
  EXPECT_THAT(r.err, HasSubstr("Findings: none\n"));
}

}  // namespace
}  // namespace gprof::testing
