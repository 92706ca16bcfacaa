// report.html from the command line: written after a run and by `gprof-run report DIR` with the
// other outputs, alone with `report DIR --html`, not at all with --no-html; <stem>.report.html for
// the other dumps; the merged page after a run of several ranks. Dumps are written with
// model/dump.h (report_profile.h) or by gprof_launch_probe, so no injection library is involved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "model/dump.h"
#include "tests/report/report_profile.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kProbe = GPROF_PROBE_PATH;

class HtmlCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("html_command"); }

  // A directory holding one dump of ReportProfile (`pid`), the main process's when alone.
  std::string DumpDir(const std::string& name, uint32_t pid = 4242) {
    const std::string d = dir_ + "/" + name;
    fs::create_directories(d);
    EXPECT_EQ(WriteDump(ReportProfile(ReportNames{}, pid), d + "/train." + std::to_string(pid) +
                                                              kDumpExtension),
              "");
    return d;
  }

  // gprof-run [args] with the probe's environment (merge_process_test.cpp: the probe never loads
  // the library, so any readable file stands in for it).
  ProcessResult Run(std::vector<std::string> args) {
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

  std::string dir_;
};

// Every file a page links to (href="./NAME").
std::set<std::string> Links(const std::string& page) {
  std::set<std::string> out;
  static const std::regex kHref("href=\"\\./([^\"]*)\"");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), kHref);
       it != std::sregex_iterator(); ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

TEST_F(HtmlCommandTest, ReportWritesThePageAfterTheOtherFilesAndLinksThem) {
  const std::string d = DumpDir("one");
  const ProcessResult r = Run({"report", d, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(d + "/report.html"));
  EXPECT_THAT(r.err, HasSubstr(", findings " + d + "/findings.txt, report " + d + "/report.html"));
  const std::string page = ReadFile(d + "/report.html");
  EXPECT_EQ(Links(page), (std::set<std::string>{"findings.json", "findings.txt", "table.txt",
                                                "trace.json", "trace.pftrace"}));
  for (const std::string& link : Links(page)) EXPECT_TRUE(fs::exists(d + "/" + link)) << link;
}

// --html: only the pages, from the dumps and what is already there; the files it does not find
// are not linked, and none is written.
TEST_F(HtmlCommandTest, ReportHtmlWritesOnlyThePages) {
  const std::string d = DumpDir("only");
  ASSERT_EQ(Run({"report", d, "-q", "--no-html"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(d + "/report.html"));
  ASSERT_TRUE(fs::exists(d + "/table.txt"));
  fs::remove(d + "/table.txt");
  const std::string trace = ReadFile(d + "/trace.json");
  const auto trace_time = fs::last_write_time(d + "/trace.json");
  const ProcessResult r = Run({"report", d, "--html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "gprof-run: wrote 1 report page: " + d + "/report.html\n");
  EXPECT_FALSE(fs::exists(d + "/table.txt"));  // not written again
  EXPECT_EQ(fs::last_write_time(d + "/trace.json"), trace_time);
  const std::string page = ReadFile(d + "/report.html");
  EXPECT_EQ(Links(page), (std::set<std::string>{"findings.json", "findings.txt", "trace.json",
                                                "trace.pftrace"}));
  EXPECT_THAT(page, HasSubstr("<b>3 steps</b>"));
}

TEST_F(HtmlCommandTest, HtmlAndNoHtmlTogetherAreAUsageError) {
  const std::string d = DumpDir("both");
  const ProcessResult r = Run({"report", d, "--html", "--no-html"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--html and --no-html together"));
}

// Two whole-run dumps and no manifest: neither is the main process's; each gets its own page.
TEST_F(HtmlCommandTest, OtherDumpsGetStemPages) {
  const std::string d = DumpDir("two", 10);
  EXPECT_EQ(WriteDump(ReportProfile(ReportNames{}, 11), d + "/train.11" + kDumpExtension), "");
  const ProcessResult r = Run({"report", d, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(d + "/report.html"));
  for (const char* stem : {"train.10", "train.11"}) {
    const std::string page = ReadFile(d + "/" + stem + ".report.html");
    EXPECT_THAT(page, HasSubstr("href=\"./" + std::string(stem) + ".table.txt\""));
    EXPECT_THAT(page, HasSubstr("href=\"./" + std::string(stem) + ".pftrace\""));
  }
}

TEST_F(HtmlCommandTest, ARunWritesThePageUnlessNoHtml) {
  ASSERT_EQ(Run({"-q", "-o", "with", kProbe, "dump"}).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ + "/with/report.html"));
  ASSERT_EQ(Run({"-q", "--no-html", "-o", "without", kProbe, "dump"}).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ + "/without/table.txt"));
  EXPECT_FALSE(fs::exists(dir_ + "/without/report.html"));
}

// probe ranks 3 1: rank 1's steps are 16 ms against 10 ms (merge_process_test.cpp): the merged
// page names it the straggler and has a row per rank.
TEST_F(HtmlCommandTest, TheMergedPageOfARunNamesTheSlowRank) {
  const ProcessResult r = Run({"-q", "-o", "out", kProbe, "ranks", "3", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string merged = dir_ + "/out/merged/report.html";
  EXPECT_THAT(r.err, HasSubstr(", report " + merged));
  const std::string page = ReadFile(merged);
  EXPECT_THAT(page, HasSubstr("<b>Straggler</b>: Straggler: rank 1"));
  for (const char* rank : {"rank 0 (testhost:", "rank 1 (testhost:", "rank 2 (testhost:"}) {
    EXPECT_THAT(page, HasSubstr(rank));
  }
  EXPECT_EQ(Links(page), (std::set<std::string>{"findings.json", "findings.txt", "table.txt",
                                                "trace.json"}));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
}

}  // namespace
}  // namespace gprof::testing
