// report.html's step-time breakdown and savings (html_step_breakdown.cpp, html_report.cpp): the
// page's text for a hand-built profile whose slices and savings are derived below.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/findings/findings_test_util.h"
#include "outputs/html/html_report.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: t0, kTid, AddRange, AddApi, AddKernel

constexpr uint64_t kUs = 1000;

// Steps (us after t0): #0 [0, 10000): the DataLoader range [0, 8000), a launch [8000, 8005) of
// gemm [8010, 9010); #1 [10000, 12000) and #2 [12000, 14000): a launch at the step's start
// (5 us) of gemm [+10, +1010).
// Slices: #0 Kernel 1000, Runtime 5, DataLoader 8000, Other 995 ([8005, 8010) + [9010, 10000));
// #1 and #2 Kernel 1000, Runtime 5, Other 995. Walls 10, 2, 2 ms: median 2 ms, so bars are cut
// at 4 ms and only #0's is marked. The mean step 14 / 3 = 4.667 ms; DataLoader 8 / 3 = 2.667 ms
// of it, 8 / 14 = 57.1 %; Kernel 1.000 ms, 21.4 %.
// gpu_idle: gaps [0, 8010), [9010, 10010), [11010, 12010), [13010, 14000) = 11 ms, 3.667 ms per
// step: the largest saving (cold_start's is step 0's 8 ms over the others' median, 2.667 ms per
// step), so "Fix this first: gpu_idle, up to 3.667ms of 4.667ms per step".
Profile LoaderSteps() {
  Profile p = NewProfile();
  p.info.program = "train";
  p.info.end_ns = t0 + 14'500 * kUs;
  p.info.gpu_status = "collected";
  AddRange(&p, 0, 10'000 * kUs, "ProfilerStep#0");
  AddRange(&p, 10'000 * kUs, 12'000 * kUs, "ProfilerStep#1");
  AddRange(&p, 12'000 * kUs, 14'000 * kUs, "ProfilerStep#2");
  AddRange(&p, 0, 8'000 * kUs, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  for (uint32_t i = 0; i < 3; ++i) {
    const uint64_t at = i == 0 ? 8'000 * kUs : (8'000 + 2'000 * i) * kUs;
    AddApi(&p, at, at + 5 * kUs, i + 1, kLaunch);
    AddKernel(&p, at + 10 * kUs, at + 1'010 * kUs, i + 1, "gemm");
  }
  return p;
}

std::string Page(const Profile& p) {
  FindingsContext context;
  const std::vector<Finding> findings = FindFindings(p, &context);
  const TableRows rows = SortedTableRows(p, TableOptions{});
  HtmlReportInput in;
  in.profile = &p;
  in.findings = &findings;
  in.context = &context;
  in.table = &rows;
  return FormatHtmlReport(in);
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlStepBreakdown, StackedBarsCutAtTwiceTheMedianAndTheMeanStepsSplit) {
  const std::string h = Page(LoaderSteps());
  EXPECT_NE(h.find("<a href=\"#breakdown\">Breakdown</a>"), std::string::npos);
  ASSERT_NE(h.find("<section id=\"breakdown\"><h2>Step time breakdown</h2>"), std::string::npos);
  EXPECT_NE(h.find("Bars over 4.000ms (2x the median step) are cut there"), std::string::npos);
  EXPECT_EQ(Count(h, "&#8673;</text>"), 1u);  // only step 0's bar is cut
  EXPECT_NE(h.find("<title>ProfilerStep#0: 10.000ms, Kernel 1.000ms"), std::string::npos);
  EXPECT_NE(h.find("DataLoader 8.000ms"), std::string::npos);
  EXPECT_NE(h.find("The mean step (4.667ms)"), std::string::npos);
  EXPECT_NE(h.find("DataLoader</td><td>2.667ms</td><td>57.1%</td>"), std::string::npos);
  EXPECT_NE(h.find("Kernel</td><td>1.000ms</td><td>21.4%</td>"), std::string::npos);
}

TEST(HtmlStepBreakdown, FindingsOpenWithFixThisFirstAndEachSaysItsSaving) {
  const std::string h = Page(LoaderSteps());
  const size_t headline = h.find("<b>Fix this first: gpu_idle, up to 3.667ms of 4.667ms per step");
  ASSERT_NE(headline, std::string::npos);
  const size_t idle = h.find("<code>gpu_idle</code>"), cold = h.find("<code>cold_start</code>");
  ASSERT_NE(cold, std::string::npos);
  EXPECT_LT(headline, idle);
  EXPECT_LT(idle, cold);  // the larger saving first
  EXPECT_NE(h.find("Fixing it saves up to <b>3.667ms</b> of 4.667ms per step (11.000ms in the "
                   "window)"),
            std::string::npos);
}

TEST(HtmlStepBreakdown, NoStepsNoBreakdownSection) {
  Profile p = LoaderSteps();
  p.ranges.erase(p.ranges.begin(), p.ranges.begin() + 3);
  const std::string h = Page(p);
  EXPECT_EQ(h.find("id=\"breakdown\""), std::string::npos);
  EXPECT_EQ(h.find("#breakdown"), std::string::npos);
}

}  // namespace
}  // namespace gprof
