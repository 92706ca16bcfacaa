// `gprof-run merge DIR...` as a real process on dumps written with model/WriteDump, and the merged
// view a run of several ranks gets (the probe writes the ranks' dumps): outputs, what `check`
// says about the merged trace, the exit codes and the error cases. Expected values are derived by
// hand from sample_profile.h in the comments.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
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
using ::testing::Not;
using nlohmann::json;

const std::string kProbe = GPROF_PROBE_PATH;

class MergeCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  ProcessResult Merge(std::vector<std::string> args) {
    args.insert(args.begin(), {LauncherPath(), "merge"});
    return RunProcess(args);
  }
  // Ranks 0..n-1 of `program` as pids first_pid + r on `host`, in `dir`.
  void WriteRanks(const std::string& dir, int n, uint32_t first_pid, const std::string& host,
                  const std::string& suffix = "") {
    fs::create_directories(dir);
    for (int r = 0; r < n; ++r) {
      Profile p = RankedSampleProfile(first_pid + r, "app", r, n);
      p.info.hostname = host;
      const std::string name = "app." + std::to_string(first_pid + r) + suffix + ".gpdump";
      ASSERT_EQ(WriteDump(p, dir + "/" + name), "");
    }
  }
  std::string dir_;
};

std::map<uint64_t, std::string> ProcessNames(const json& trace) {
  std::map<uint64_t, std::string> names;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") names[e["pid"]] = e["args"]["name"];
  }
  return names;
}

// The words of the table line that starts with `name` (a name without spaces).
std::vector<std::string> RowWords(const std::string& table, const std::string& name) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + " ", 0) != 0) continue;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    return w;
  }
  return {};
}

// Three ranks of SampleProfile, rank r r ms later: the origin is rank 0's start t0. Rank 2's
// matmul kernel runs at t0 + 2 ms + 2.25 ms: ts 4250.000 us, on input 2's GPU 0, pid 3001.
TEST_F(MergeCommandTest, ThreeRanksGiveOneTraceThatCheckAcceptsAndATableAcrossRanks) {
  WriteRanks(dir_, 3, 500, "testhost");
  const ProcessResult r = Merge({dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string trace_path = dir_ + "/merged/trace.json";
  const std::string table_path = dir_ + "/merged/table.txt";
  ASSERT_TRUE(fs::exists(trace_path));
  ASSERT_TRUE(fs::exists(table_path));
  EXPECT_THAT(r.err, HasSubstr("gprof-run: merged view: whole run of 3 processes: trace " +
                               trace_path + ", table " + table_path + ", findings " + dir_ +
                               "/merged/findings.txt, report " + dir_ + "/merged/report.html\n"));

  const json trace = json::parse(ReadFile(trace_path));
  EXPECT_EQ(trace["baseTimeNanoseconds"], SampleProfile(1, "x").info.start_ns);
  const std::map<uint64_t, std::string> names = ProcessNames(trace);
  EXPECT_EQ(names.at(1000), "rank 0 (testhost:500)");
  EXPECT_EQ(names.at(2000), "rank 1 (testhost:501)");
  EXPECT_EQ(names.at(3000), "rank 2 (testhost:502)");
  EXPECT_EQ(names.at(3001), "rank 2 (testhost:502) GPU 0 Test GPU");
  bool found = false;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "kernel" && e["pid"] == 3001) {
      EXPECT_EQ(e["ts"].get<double>(), 4250.0);
      found = true;
    }
  }
  EXPECT_TRUE(found);

  const ProcessResult check = RunProcess({LauncherPath(), "check", trace_path});
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_EQ(check.out, trace_path + ": ok\n");

  // forward: 1 ms, holding the two calls (100 + 300 us): Self CPU 600 us; it owns the kernel
  // (500 us) and the copy (100 us) that they launched: Self CUDA 600 us. The same in every rank.
  const std::string table = ReadFile(table_path);
  EXPECT_THAT(table, ::testing::StartsWith("Merged table: whole run\n3 processes: ranks 0-2;"));
  EXPECT_EQ(RowWords(table, "forward"),
            (std::vector<std::string>{"forward", "CPU", "3", "1", "1", "1", "0", "600.000us",
                                      "600.000us", "600.000us", "0", "600.000us", "600.000us",
                                      "600.000us", "0", "1.000ms", "1.000ms", "1.000ms", "0"}));
  EXPECT_THAT(r.err, HasSubstr(table));  // printed on stderr too
  // No steps: nothing to compare between the ranks; the findings say so.
  EXPECT_EQ(json::parse(ReadFile(dir_ + "/merged/findings.json")),
            json::parse(R"({"findings": []})"));
  EXPECT_THAT(r.err, HasSubstr(table + "Merged findings: none\n"));
}

// Four ranks of SampleProfile with three steps each (AddSampleSteps): 10 ms, rank 2's 16 ms.
// Per step rank 2 is 6 ms (1.60x) over the other ranks' median 10 ms: the slowest in 3 of 3
// steps, high (1.60 >= 1.5). Its step 1 starts at its shift (2 ms) + 1 ms: ts 3000 us, 16 ms
// long (equal excess in every step: the first step is the first place). GPU busy: the sample's
// kernel and copy, 600 us of 30 ms (2 %) and of rank 2's 48 ms (1.25 %): no imbalance.
TEST_F(MergeCommandTest, FindingsNameTheSlowRankAndByHowMuch) {
  fs::create_directories(dir_);
  for (int r = 0; r < 4; ++r) {
    Profile p = RankedSampleProfile(500 + r, "app", r, 4);
    AddSampleSteps(&p, r == 2);
    ASSERT_EQ(WriteDump(p, dir_ + "/app." + std::to_string(500 + r) + ".gpdump"), "");
  }
  const ProcessResult r = Merge({dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(ReadFile(dir_ + "/merged/findings.json"));
  ASSERT_EQ(doc["findings"].size(), 1u) << doc.dump(2);
  const json& f = doc["findings"][0];
  EXPECT_EQ(f["id"], "straggler");
  EXPECT_EQ(f["severity"], "high");
  EXPECT_EQ(f["evidence"]["rank"], 2);
  EXPECT_EQ(f["evidence"]["process"], "rank 2 (testhost:502)");
  EXPECT_EQ(f["evidence"]["metric"], "step_time");
  EXPECT_EQ(f["evidence"]["steps"], 3);
  EXPECT_EQ(f["evidence"]["slow_steps"], 3);
  EXPECT_EQ(f["evidence"]["median_excess_us"].get<double>(), 6000.0);
  EXPECT_EQ(f["evidence"]["median_factor"].get<double>(), 1.6);
  EXPECT_EQ(f["evidence"]["rank_median_us"].get<double>(), 16000.0);
  EXPECT_EQ(f["evidence"]["others_median_us"].get<double>(), 10000.0);
  EXPECT_EQ(f["where"]["step"], 1);
  EXPECT_EQ(f["where"]["ts_us"].get<double>(), 3000.0);
  EXPECT_EQ(f["where"]["dur_us"].get<double>(), 16000.0);
  EXPECT_EQ(f["where"]["context"][0], "rank 2 (testhost:502)");
  const std::string text = ReadFile(dir_ + "/merged/findings.txt");
  EXPECT_THAT(text, HasSubstr("[high] straggler: Straggler: rank 2 (testhost:502) has the "
                              "longest step in 3 of 3 steps, by 6.000ms (1.60x)"));
  // On stderr: the short section right after the merged table.
  EXPECT_THAT(r.err, HasSubstr(ReadFile(dir_ + "/merged/table.txt") +
                               "Merged findings:\n  high  straggler: Straggler: rank 2"));
}

TEST_F(MergeCommandTest, WindowsAreMergedPerCycleAndTheWholeRunApart) {
  WriteRanks(dir_, 2, 600, "h");
  WriteRanks(dir_, 2, 600, "h", ".cycle1.steps1-2");
  WriteRanks(dir_, 2, 600, "h", ".cycle2.steps3-4");
  const ProcessResult r = Merge({dir_, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("Merged table")));
  for (const char* prefix : {"", "cycle1.", "cycle2."}) {
    const std::string trace_path = dir_ + "/merged/" + prefix + "trace.json";
    ASSERT_TRUE(fs::exists(trace_path)) << trace_path;
    const json trace = json::parse(ReadFile(trace_path));
    ASSERT_EQ(trace["gprof"]["inputs"].size(), 2u) << prefix;
    EXPECT_EQ(RunProcess({LauncherPath(), "check", trace_path}).exit_code, 0) << prefix;
    // Findings per group too (none here: the sample has no steps).
    EXPECT_EQ(json::parse(ReadFile(dir_ + "/merged/" + prefix + "findings.json"))["findings"],
              json::array()) << prefix;
    EXPECT_TRUE(fs::exists(dir_ + "/merged/" + prefix + "findings.txt")) << prefix;
  }
  // The window's info is SampleProfile's (cycle 0): the group is the file name's cycle.
  EXPECT_EQ(json::parse(ReadFile(dir_ + "/merged/cycle2.trace.json"))["gprof"]["inputs"][1]["file"],
            dir_ + "/app.601.cycle2.steps3-4.gpdump");
  EXPECT_THAT(ReadFile(dir_ + "/merged/cycle1.table.txt"),
              ::testing::StartsWith("Merged table: cycle 1"));
  EXPECT_THAT(r.err, HasSubstr("whole run of 2 processes"));
  EXPECT_THAT(r.err, HasSubstr("; cycle 1"));
  EXPECT_THAT(r.err, HasSubstr("; cycle 2"));
}

// Two hosts, one directory each, merged into -o: four ranks, in rank order across the two.
TEST_F(MergeCommandTest, DirectoriesOfSeveralHostsMergeIntoTheOutputDirectory) {
  const std::string a = dir_ + "/hostA", b = dir_ + "/hostB", out = dir_ + "/all";
  fs::create_directories(a);
  fs::create_directories(b);
  for (int r = 0; r < 4; ++r) {
    Profile p = RankedSampleProfile(700 + r, "app", r, 4);
    p.info.hostname = r % 2 == 0 ? "hostA" : "hostB";
    ASSERT_EQ(WriteDump(p, (r % 2 == 0 ? a : b) + "/app." + std::to_string(700 + r) + ".gpdump"),
              "");
  }
  const ProcessResult r = Merge({a, b, "-o", out, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(a + "/merged"));
  const json trace = json::parse(ReadFile(out + "/trace.json"));
  const std::map<uint64_t, std::string> names = ProcessNames(trace);
  EXPECT_EQ(names.at(1000), "rank 0 (hostA:700)");
  EXPECT_EQ(names.at(2000), "rank 1 (hostB:701)");
  EXPECT_EQ(names.at(4000), "rank 3 (hostB:703)");
  EXPECT_EQ(trace["gprof"]["hosts"], json::array({"hostA", "hostB"}));
}

TEST_F(MergeCommandTest, BadInputExits2WithOneClearErrorAndWritesNothing) {
  WriteRanks(dir_, 2, 800, "h");
  const auto refused = [&](const ProcessResult& r, const std::string& what) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(what));
    EXPECT_FALSE(fs::exists(dir_ + "/merged"));
  };
  refused(Merge({dir_ + "/missing"}), dir_ + "/missing is not a directory; nothing was merged");
  refused(Merge({dir_, dir_ + "/missing"}), "is not a directory");
  const std::string empty = dir_ + "/empty";
  fs::create_directories(empty);
  refused(Merge({empty, "-o", dir_ + "/merged"}), "no dump in " + empty);
  // One unreadable dump among good ones: no output at all (a merge without a rank would look
  // like a balanced run).
  std::ofstream(dir_ + "/app.802.gpdump", std::ios::binary) << "GPROFDMP not really";
  const ProcessResult corrupt = Merge({dir_});
  refused(corrupt, "app.802.gpdump");
  EXPECT_THAT(corrupt.err, HasSubstr("nothing was merged"));
  refused(Merge({}), "no directory given");
  refused(Merge({dir_, "--bogus"}), "unknown flag --bogus");
  refused(Merge({dir_, "--row-limit", "many"}), "--row-limit many");
  refused(Merge({dir_, "-o"}), "-o needs a directory");
}

TEST_F(MergeCommandTest, HelpNamesTheCommand) {
  const ProcessResult r = Merge({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("Usage: gprof-run merge DIR..."));
  EXPECT_THAT(RunProcess({LauncherPath(), "--help"}).out, HasSubstr("gprof-run merge DIR..."));
}

// ---- after a run ----------------------------------------------------------------------------

class MergeAfterRunTest : public MergeCommandTest {
 protected:
  ProcessResult Run(std::vector<std::string> args) {
    // The probe never touches CUDA or NVTX, so the library is never loaded: any readable file.
    const std::string fake_lib = dir_ + "/libgprof_inject.so";
    std::ofstream(fake_lib) << "not a library\n";
    ProcessOptions o;
    o.cwd = dir_;
    o.set_env["GPROF_INJECT_LIB"] = fake_lib;
    o.unset_env = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "LD_PRELOAD",
                   "GPROF_OUTPUT_DIR"};
    args.insert(args.begin(), LauncherPath());
    return RunProcess(args, o);
  }
};

TEST_F(MergeAfterRunTest, ARunWithSeveralRanksGetsTheMergedViewInItsDirectory) {
  const ProcessResult r = Run({"-o", "out", kProbe, "ranks", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = fs::canonical(dir_ + "/out").string();
  ASSERT_TRUE(fs::exists(out + "/merged/trace.json")) << r.err;
  ASSERT_TRUE(fs::exists(out + "/merged/table.txt"));
  EXPECT_EQ(RunProcess({LauncherPath(), "check", out + "/merged/trace.json"}).exit_code, 0);
  // The closing line is still last, and names the merged outputs.
  const std::string last = r.err.substr(r.err.rfind("gprof-run: recorded "));
  EXPECT_THAT(last, ::testing::StartsWith("gprof-run: recorded 3 processes:"));
  EXPECT_THAT(last, HasSubstr("; merged view: whole run of 3 processes: trace " + out +
                              "/merged/trace.json, table " + out + "/merged/table.txt, findings " +
                              out + "/merged/findings.txt, report " + out +
                              "/merged/report.html\n"));
  EXPECT_EQ(std::count(last.begin(), last.end(), '\n'), 1);
  EXPECT_THAT(r.err, HasSubstr("Merged table: whole run\n3 processes: ranks 0-2;"));
}

// probe ranks 3 1: three ranks with three steps each, rank 1's 16 ms against 10 ms (the numbers
// of FindingsNameTheSlowRankAndByHowMuch): the run's merged findings name rank 1.
TEST_F(MergeAfterRunTest, TheMergedFindingsOfARunNameTheSlowRank) {
  const ProcessResult r = Run({"-o", "out", kProbe, "ranks", "3", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(ReadFile(dir_ + "/out/merged/findings.json"));
  ASSERT_EQ(doc["findings"].size(), 1u) << doc.dump(2);
  EXPECT_EQ(doc["findings"][0]["id"], "straggler");
  EXPECT_EQ(doc["findings"][0]["evidence"]["rank"], 1);
  EXPECT_EQ(doc["findings"][0]["evidence"]["median_excess_us"].get<double>(), 6000.0);
  EXPECT_THAT(r.err, HasSubstr("Merged findings:\n  high  straggler: Straggler: rank 1"));
  // -q: the files, not the section.
  const ProcessResult quiet = Run({"-q", "-o", "out2", kProbe, "ranks", "3", "1"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_TRUE(fs::exists(dir_ + "/out2/merged/findings.txt"));
  EXPECT_THAT(quiet.err, Not(HasSubstr("Merged findings")));
}

TEST_F(MergeAfterRunTest, ASingleProcessRunHasNoMergedView) {
  const ProcessResult r = Run({"-o", "out", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/out/merged"));
  EXPECT_THAT(r.err, Not(HasSubstr("merged")));
  EXPECT_THAT(r.err, HasSubstr("gprof-run: recorded 1 process:"));
}

TEST_F(MergeAfterRunTest, OneRankAloneHasNoMergedView) {
  const ProcessResult r = Run({"-q", "-o", "out", kProbe, "ranks", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/out/merged"));
}

}  // namespace
}  // namespace gprof::testing
