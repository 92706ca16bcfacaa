// `gprof-run diff A B` as a real process on dumps written with model/WriteDump: the table (golden,
// numbers derived by hand below), CSV with --by, JSON on directories, and the exit codes.
#include <algorithm>
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

class DiffCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    a_ = dir_ + "/app.77.gpdump";
    b_ = dir_ + "/app.78.gpdump";
  }
  ProcessResult Diff(std::vector<std::string> args) {
    args.insert(args.begin(), {LauncherPath(), "diff"});
    return RunProcess(args);
  }
  // A = SampleProfile; B = the same program after a change: matmul 500,000 -> 200,000 ns,
  // a new relu kernel of 50,000 ns at +3 ms, train_step 5 ms -> 4 ms.
  void WriteBoth() {
    ASSERT_EQ(WriteDump(SampleProfile(77, "app"), a_), "");
    Profile b = SampleProfile(78, "app");
    const uint64_t t0 = b.info.start_ns;
    b.kernels[0].end_ns = b.kernels[0].start_ns + 200'000;
    b.kernels.push_back({t0 + 3'000'000, t0 + 3'050'000, 3, b.strings.Intern("_Z4reluPf"), 0, 7});
    b.ranges[0].end_ns = t0 + 5'000'000;  // train_step [1 ms, 5 ms)
    ASSERT_EQ(WriteDump(b, b_), "");
  }
  std::string dir_, a_, b_;
};

// Hand derivation (every row has one instance per side, so every row but relu's is "few"):
//   Totals  wall 10 ms both. GPU busy A: matmul 500,000 + copy 100,000 = 600,000; B: 200,000 +
//           relu 50,000 + copy 100,000 = 350,000: -250,000, 350/600 = 0.58x. Kernels 1 -> 2.
//           Self CPU A: train_step 5,000,000 - forward 1,000,000 = 4,000,000, forward
//           1,000,000 - the two calls 400,000 = 600,000, calls 400,000: 5,000,000 (the root's
//           duration); B the same with train_step 4,000,000: 4,000,000: -1 ms, 0.80x.
//   GPU     matmul -300,000 (0.40x); relu only in B, +50,000, no ratio; the HtoD copy 0, 1.00x.
//   Ops     cudaLaunchKernel 100,000 and cudaMemcpyAsync 300,000 unchanged (delta 0: by name).
//   Ranges  train_step -1 ms (4/5 = 0.80x); forward 1 ms unchanged.
TEST_F(DiffCommandTest, TableGolden) {
  WriteBoth();
  const ProcessResult r = Diff({a_, b_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("gprof-run diff\n  A: " + a_ + " (1 profile)\n  B: " +
                                           b_ + " (1 profile)\n"));
  const size_t totals = r.out.find("\nTotals\n");
  ASSERT_NE(totals, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(totals),
            "\nTotals\n"
            "                        A          B       Delta  Ratio\n"
            "Wall time        10.000ms   10.000ms     0.000us  1.00x\n"
            "GPU busy        600.000us  350.000us  -250.000us  0.58x\n"
            "Kernels                 1          2          +1  2.00x\n"
            "Self CPU total    5.000ms    4.000ms    -1.000ms  0.80x\n"
            "\n"
            "GPU kernels, copies and memsets, by change of total\n"
            "     Delta  Ratio    Total A    Total B  Count A  Count B   Median A   Median B  "
            "Note            Name\n"
            "-300.000us  0.40x  500.000us  200.000us        1        1  500.000us  200.000us  "
            "few             matmul(float*, float*, float*, int)\n"
            " +50.000us      -    0.000us   50.000us        0        1          -   50.000us  "
            "only in B; few  relu(float*)\n"
            "   0.000us  1.00x  100.000us  100.000us        1        1  100.000us  100.000us  "
            "few             Memcpy HtoD (Pageable -> Device)\n"
            "\n"
            "Host ops (torch operators, CUDA API calls), by change of total\n"
            "  Delta  Ratio    Total A    Total B  Count A  Count B   Median A   Median B  Note  "
            "Name\n"
            "0.000us  1.00x  100.000us  100.000us        1        1  100.000us  100.000us  few   "
            "cudaLaunchKernel\n"
            "0.000us  1.00x  300.000us  300.000us        1        1  300.000us  300.000us  few   "
            "cudaMemcpyAsync\n"
            "\n"
            "Ranges (NVTX ranges, torch annotations, steps), by change of total\n"
            "   Delta  Ratio  Total A  Total B  Count A  Count B  Median A  Median B  Note  Name\n"
            "-1.000ms  0.80x  5.000ms  4.000ms        1        1   5.000ms   4.000ms  few   "
            "train_step\n"
            " 0.000us  1.00x  1.000ms  1.000ms        1        1   1.000ms   1.000ms  few   "
            "forward\n"
            "\n"
            "few: fewer than 5 instances in A or B; one slow instance can move the total and the "
            "median, so the change may be noise.\n");
}

TEST_F(DiffCommandTest, CsvByKernelHasOnlyKernelRows) {
  WriteBoth();
  const ProcessResult r = Diff({a_, b_, "--format=csv", "--by", "kernel"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "kind,name,count_a,count_b,total_a_ns,total_b_ns,delta_ns,ratio,median_a_ns,"
            "median_b_ns,note\n"
            "kernel,\"matmul(float*, float*, float*, int)\",1,1,500000,200000,-300000,0.400,"
            "500000.0,200000.0,few\n"
            "kernel,relu(float*),0,1,0,50000,50000,,0.0,50000.0,only in B; few\n"
            "kernel,Memcpy HtoD (Pageable -> Device),1,1,100000,100000,0,1.000,100000.0,"
            "100000.0,few\n");
}

// Directories are pooled as `stats` pools them: per process its whole run, else its windows.
TEST_F(DiffCommandTest, JsonOnDirectoriesPoolsWindowsOfAProcessWithoutAWholeRun) {
  const std::string before = dir_ + "/before", after = dir_ + "/after";
  fs::create_directories(before);
  fs::create_directories(after);
  ASSERT_EQ(WriteDump(SampleProfile(5, "app"), before + "/app.5.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(6, "app"), after + "/app.6.cycle1.steps1-2.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(6, "app"), after + "/app.6.cycle2.steps3-4.gpdump"), "");
  const ProcessResult r = Diff({before, after, "--format", "json", "--by=range"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["a"]["profiles"], 1);
  EXPECT_EQ(doc["b"]["profiles"], 2);
  // Kernels: 1 in A, 1 per window in B.
  EXPECT_EQ(doc["totals"]["kernels"]["b"], 2);
  ASSERT_EQ(doc["rows"].size(), 2u);  // train_step and forward
  // train_step: 5 ms once in A, twice in B: 10 ms, +5 ms, ratio 2.
  EXPECT_EQ(doc["rows"][0]["name"], "train_step");
  EXPECT_EQ(doc["rows"][0]["count_b"], 2);
  EXPECT_EQ(doc["rows"][0]["delta_ns"], 5'000'000);
  EXPECT_EQ(doc["rows"][0]["ratio"], 2.0);
  EXPECT_EQ(doc["rows"][0]["noisy"], true);
}

TEST_F(DiffCommandTest, ErrorsSayWhatIsWrongOnOneLineAndExit2) {
  WriteBoth();
  const auto one_line_error = [](const ProcessResult& r, const std::string& what) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_THAT(r.err, HasSubstr(what));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  one_line_error(Diff({a_, dir_ + "/nope.gpdump"}), "B: " + dir_ + "/nope.gpdump is neither");
  const std::string corrupt = dir_ + "/corrupt.1.gpdump";
  std::ofstream(corrupt, std::ios::binary) << "GPROFDMP not really";
  one_line_error(Diff({corrupt, b_}), "A: ");
  one_line_error(Diff({corrupt, b_}), "corrupt.1.gpdump");
  const std::string empty = dir_ + "/empty";
  fs::create_directories(empty);
  one_line_error(Diff({a_, empty}), "B: no dump in " + empty);
  one_line_error(Diff({a_, b_, "--format", "xml"}), "--format xml: expected table, csv or json");
  one_line_error(Diff({a_, b_, "--by", "stream"}), "--by stream: expected kernel, op, range");
  one_line_error(Diff({a_, b_, "--bogus"}), "unknown flag --bogus");
  one_line_error(Diff({a_}), "diff needs two profiles");
  one_line_error(Diff({a_, b_, a_}), "two profiles at a time");
  EXPECT_EQ(Diff({"--help"}).exit_code, 0);
  EXPECT_THAT(RunProcess({LauncherPath(), "--help"}).out, HasSubstr("gprof-run diff A B"));
}

}  // namespace
}  // namespace gprof::testing

namespace gprof::testing {
namespace {

// A side made of schedule windows against a whole run: diff sums the windows, which cover only
// some steps of the program, so it warns (on stderr; the diff itself is still printed). Two
// whole runs, or two windowed sides, get no warning.
TEST_F(DiffCommandTest, WindowsAgainstAWholeRunWarnsThatTheyAreNotComparable) {
  WriteBoth();
  const std::string window = dir_ + "/app.79.cycle0.steps2-3.gpdump";
  ASSERT_EQ(WriteDump(SampleProfile(79, "app"), window), "");
  ProcessResult r = Diff({window, b_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: A is 1 schedule window"));
  EXPECT_THAT(r.err, HasSubstr("B is a whole run"));
  EXPECT_THAT(r.err, HasSubstr("not comparable"));
  EXPECT_THAT(r.out, HasSubstr("Totals"));
  r = Diff({a_, b_});
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("not comparable")));
  r = Diff({window, window});
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("not comparable")));
}

}  // namespace
}  // namespace gprof::testing
