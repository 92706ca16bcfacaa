// A long run's dump rendered segment by segment (launcher/render/segmented_render.h) as a user
// meets it: `gprof-run report DIR --segment-render-mb 0` on a dump written in segments with
// model/SegmentedDumpWriter, beside the same dump rendered whole. The expected numbers are worked
// out by hand from the records LongRun writes; the whole render is the second witness.
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/dump.h"
#include "tests/support/process.h"
#include "tests/support/long_run.h"

namespace gprof::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// The table's cells of row `name` by column heading (torch's layout: columns apart by 2+ spaces).
std::map<std::string, std::string> Row(const std::string& table, const std::string& name) {
  std::vector<std::vector<std::string>> lines;
  static const std::regex kGap(" {2,}");
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::sregex_token_iterator it(line.begin(), line.end(), kGap, -1), end;
    for (; it != end; ++it) {
      if (!it->str().empty()) cells.push_back(*it);
    }
    lines.push_back(cells);
  }
  const auto header = std::find_if(lines.begin(), lines.end(), [](const auto& c) {
    return !c.empty() && c[0] == "Name";
  });
  std::map<std::string, std::string> row;
  if (header == lines.end()) return row;
  for (const auto& cells : lines) {
    if (cells.size() != header->size() || cells[0] != name) continue;
    for (size_t k = 0; k < cells.size(); ++k) row[(*header)[k]] = cells[k];
  }
  return row;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class SegmentedRenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    whole_ = MakeTempDir(name + "_whole");
    parts_ = MakeTempDir(name + "_segments");
  }
  // The same long run rendered whole (the default for a small dump) and in segments.
  std::pair<ProcessResult, ProcessResult> RenderBothWays(uint32_t segments, uint32_t launches,
                                                         bool cpu_samples = false) {
    WriteLongRun(whole_, segments, launches, cpu_samples);
    WriteLongRun(parts_, segments, launches, cpu_samples);
    return {RunProcess({LauncherPath(), "report", whole_}),
            RunProcess({LauncherPath(), "report", parts_, "--segment-render-mb", "0"})};
  }
  std::string whole_, parts_;
};

// 5 segments x 3 launches: 15 launches of 2 us kernels = 30 us of GPU time, all inside "step"
// ranges inside "epoch". epoch: 1 call, CPU total 50 ms - 2 us = 49998 us, Self CPU = that minus
// its 5 steps (9980 us each) = 98 us, CUDA total 30 us, Self CUDA 0 (its steps hold every
// launch). step: 5 calls, CUDA total 30 us. k_lost: its own row (5 us), counted as a loss.
TEST_F(SegmentedRenderTest, TableAddsUpAcrossSegmentsAsTheWholeRenderDoes) {
  const auto [a, b] = RenderBothWays(5, 3);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_THAT(a.err, Not(HasSubstr("segment by segment")));
  EXPECT_THAT(b.err, HasSubstr("long.4242.gpdump is long (5 segments): rendered segment by "
                               "segment"));
  const std::string table = ReadFile(parts_ + "/table.txt");
  EXPECT_EQ(table, ReadFile(whole_ + "/table.txt"));
  // The run is one findings part (far under a million launches): the findings are the whole's.
  EXPECT_EQ(ReadFile(parts_ + "/findings.json"), ReadFile(whole_ + "/findings.json"));

  const auto epoch = Row(table, "epoch");
  ASSERT_FALSE(epoch.empty()) << table;
  EXPECT_EQ(epoch.at("# of Calls"), "1");
  EXPECT_EQ(epoch.at("CPU total"), "49.998ms");
  EXPECT_EQ(epoch.at("Self CPU"), "98.000us");
  EXPECT_EQ(epoch.at("CUDA total"), "30.000us");
  EXPECT_EQ(epoch.at("Self CUDA"), "0.000us");
  const auto step = Row(table, "step");
  EXPECT_EQ(step.at("# of Calls"), "5");
  EXPECT_EQ(step.at("CUDA total"), "30.000us");
  EXPECT_EQ(step.at("Self CUDA"), "30.000us");
  const auto launch = Row(table, "cudaLaunchKernel");
  EXPECT_EQ(launch.at("# of Calls"), "15");
  EXPECT_EQ(launch.at("CUDA total"), "30.000us");
  EXPECT_EQ(Row(table, "k_a").at("# of Calls"), "15");
  EXPECT_EQ(Row(table, "k_lost").at("Self CUDA"), "5.000us");

  // The losses are the run's, counted across segments: the kernel with no call, and no launch
  // without its kernel (the in-flight ones came in the next segment).
  for (const ProcessResult* r : {&a, &b}) {
    EXPECT_THAT(r->err, HasSubstr("LOSSES: gpu_records_uncorrelated=1;")) << r->err;
    EXPECT_THAT(r->err, Not(HasSubstr("gpu_launches_without_records")));
    EXPECT_THAT(r->err, HasSubstr("recorded 1 process: 6 ranges, 15 API calls, 16 kernels"));
  }
}

// The trace of a segmented render: every event as often as in the whole render's trace (a range
// is a CPU slice and, over the work it launched, a gpu_user_annotation), openable (gprof-run
// check), and every launch with its flow arrow: the kernels in flight at a cut are drawn with
// their launch's segment.
TEST_F(SegmentedRenderTest, TraceHasEveryEventOfTheWholeTraceAndPassesTheCheck) {
  const auto [a, b] = RenderBothWays(5, 3);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string whole = ReadFile(whole_ + "/trace.json");
  const std::string trace = ReadFile(parts_ + "/trace.json");
  EXPECT_EQ(Count(trace, "\"cat\":\"kernel\""), 16u);
  EXPECT_EQ(Count(trace, "\"name\":\"cudaLaunchKernel\""), 15u);
  EXPECT_EQ(Count(trace, "\"flow_in\":true"), 15u);
  EXPECT_EQ(Count(trace, "\"flow_out\":true"), 15u);
  for (const char* name : {"\"name\":\"epoch\"", "\"name\":\"step\"", "\"name\":\"k_lost\"",
                           "\"cat\":\"gpu_user_annotation\"", "\"name\":\"thread_name\""}) {
    EXPECT_EQ(Count(trace, name), Count(whole, name)) << name;
  }
  const ProcessResult check = RunProcess({LauncherPath(), "check", parts_ + "/trace.json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_GT(fs::file_size(parts_ + "/trace.pftrace"), 0u);
}

// --cpu-sampling's samples in a segmented render: every segment's in the traces and in the
// folded stacks, as a whole render has them (5 segments x 2 samples = 10, in one stack of thread
// 7), and in the findings' inputs.
TEST_F(SegmentedRenderTest, CpuSamplesOfEverySegmentAreInTheTracesAndFoldedStacks) {
  const auto [a, b] = RenderBothWays(5, 3, /*cpu_samples=*/true);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string folded = ReadFile(parts_ + "/long.4242.cpu.folded");
  EXPECT_EQ(folded, ReadFile(whole_ + "/long.4242.cpu.folded"));
  EXPECT_THAT(folded, ::testing::StartsWith("thread 7;"));
  EXPECT_THAT(folded, ::testing::EndsWith(" 10\n"));
  EXPECT_THAT(b.err, HasSubstr("long.4242.cpu.folded: 10 CPU samples at 1000 Hz"));
  EXPECT_EQ(Count(ReadFile(parts_ + "/trace.json"), "\"cat\":\"cpu_sample\""), 10u);
  EXPECT_EQ(Count(ReadFile(whole_ + "/trace.json"), "\"cat\":\"cpu_sample\""), 10u);
  EXPECT_EQ(ReadFile(parts_ + "/findings.json"), ReadFile(whole_ + "/findings.json"));
  const ProcessResult check = RunProcess({LauncherPath(), "check", parts_ + "/trace.json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

// `gprof-run report DIR --html` reads a long dump segment by segment too: the run is one findings
// part here, so its page is the whole read's, byte for byte.
TEST_F(SegmentedRenderTest, HtmlOnlyPageOfASegmentedReadIsTheWholeReadsPage) {
  WriteLongRun(whole_, 5, 3);
  WriteLongRun(parts_, 5, 3);
  const ProcessResult a = RunProcess({LauncherPath(), "report", whole_, "--html"});
  const ProcessResult b =
      RunProcess({LauncherPath(), "report", parts_, "--html", "--segment-render-mb", "0"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string page = ReadFile(parts_ + "/report.html");
  EXPECT_THAT(page, HasSubstr("epoch"));
  EXPECT_EQ(page, ReadFile(whole_ + "/report.html"));
}

// --python-sampling's stacks in a segmented render: the python_function slices of the whole run
// (<module> and train over all 5 segments) in a trace that passes the check, and the blocking
// calls by Python line (a cudaDeviceSynchronize per segment, each given train's line from the
// sample 400 us after it) in python_syncs.txt and in each call's args, as the whole render has
// them.
TEST_F(SegmentedRenderTest, PythonSlicesAndSyncLinesOfTheWholeRunAreInASegmentedRender) {
  WriteLongRun(whole_, 5, 3, /*cpu_samples=*/false, /*syncs=*/true);
  WriteLongRun(parts_, 5, 3, /*cpu_samples=*/false, /*syncs=*/true);
  WriteLongRunPythonSamples(whole_, 5);
  WriteLongRunPythonSamples(parts_, 5);
  const ProcessResult a = RunProcess({LauncherPath(), "report", whole_});
  const ProcessResult b = RunProcess({LauncherPath(), "report", parts_, "--segment-render-mb", "0"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string trace = ReadFile(parts_ + "/trace.json");
  const size_t slices = Count(trace, "\"cat\":\"python_function\"");
  EXPECT_GE(slices, 2u);
  EXPECT_EQ(slices, Count(ReadFile(whole_ + "/trace.json"), "\"cat\":\"python_function\""));
  EXPECT_EQ(Count(trace, "\"name\":\"train\""), Count(ReadFile(whole_ + "/trace.json"),
                                                      "\"name\":\"train\""));
  // Each segment's cudaDeviceSynchronize carries train's line and stack in its args.
  const std::string line = "\"python_line\":\"train (/w/long.py:4)\"";
  EXPECT_EQ(Count(trace, line), 5u);
  EXPECT_EQ(Count(ReadFile(whole_ + "/trace.json"), line), 5u);
  EXPECT_EQ(Count(trace, "\"python_stack\":[\"train (/w/long.py:4)\""), 5u);
  const ProcessResult check = RunProcess({LauncherPath(), "check", parts_ + "/trace.json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_GT(fs::file_size(parts_ + "/trace.pftrace"), 0u);
  const std::string syncs = ReadFile(parts_ + "/python_syncs.txt");
  EXPECT_THAT(syncs, HasSubstr("train (/w/long.py:4)"));
  EXPECT_EQ(syncs, ReadFile(whole_ + "/python_syncs.txt"));
  EXPECT_THAT(b.err, HasSubstr("most blocking CUDA time from Python: train (/w/long.py:4): 5 of 5 "
                               "calls"));
}

// --with-stack in a segmented render: the table grouped by Python source location as the whole
// render groups it. Every range (5 steps and epoch, on thread 7) has a sample inside it, all of
// one stack (<module> at long.py:20 calling train at long.py:4), so each row's Source Location
// is that stack, innermost first, and the note counts 6 ranges, none unsampled. report.html's op
// table stays by name (the page of the whole render, byte for byte).
TEST_F(SegmentedRenderTest, TableGroupedBySourceLocationIsTheWholeRendersTable) {
  WriteLongRun(whole_, 5, 3);
  WriteLongRun(parts_, 5, 3);
  WriteLongRunPythonSamples(whole_, 5);
  WriteLongRunPythonSamples(parts_, 5);
  const ProcessResult a = RunProcess({LauncherPath(), "report", whole_, "--with-stack"});
  const ProcessResult b = RunProcess(
      {LauncherPath(), "report", parts_, "--with-stack", "--segment-render-mb", "0"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_THAT(b.err, Not(HasSubstr("not grouped by source location")));
  const std::string table = ReadFile(parts_ + "/table.txt");
  EXPECT_EQ(table, ReadFile(whole_ + "/table.txt"));
  EXPECT_THAT(table, HasSubstr("Grouped by Python source location (--group-by-stack 5)"));
  EXPECT_THAT(table, HasSubstr("0 of 6 ranges were not sampled"));
  EXPECT_THAT(table, HasSubstr("/w/long.py(4): train"));
  EXPECT_EQ(Row(table, "step")["# of Calls"], "5");
  EXPECT_EQ(Row(table, "epoch")["# of Calls"], "1");
  EXPECT_EQ(ReadFile(parts_ + "/report.html"), ReadFile(whole_ + "/report.html"));
}

// With --max-trace-mb the segmented trace is cut into parts of at most the cap, each a trace
// that passes the check, together holding every kernel once. 4 segments x 3000 launches: about
// 3 MB of JSON, so 1 MiB parts make three or more.
TEST_F(SegmentedRenderTest, CappedTraceIsCutIntoCheckedPartsUnderTheCap) {
  WriteLongRun(parts_, 4, 3000);
  const ProcessResult b = RunProcess({LauncherPath(), "report", parts_, "--segment-render-mb",
                                      "0", "--max-trace-mb", "1", "--trace-format", "json"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_FALSE(fs::exists(parts_ + "/trace.json"));
  size_t kernels = 0, parts = 0;
  for (size_t k = 1; fs::exists(parts_ + "/trace.part" + std::to_string(k) + ".json"); ++k) {
    const std::string path = parts_ + "/trace.part" + std::to_string(k) + ".json";
    EXPECT_LE(fs::file_size(path), 1u << 20) << path;
    kernels += Count(ReadFile(path), "\"cat\":\"kernel\"");
    const ProcessResult check = RunProcess({LauncherPath(), "check", path});
    EXPECT_EQ(check.exit_code, 0) << path << check.out << check.err;
    ++parts;
  }
  EXPECT_GE(parts, 3u);
  EXPECT_EQ(kernels, 4u * 3000u + 1u);  // and k_lost
}

// `gprof-run stats` reads a long dump segment by segment for its default reports: the same rows as
// a whole read (every sample kept, so medians are exact), 15 launches and 16 kernels.
TEST_F(SegmentedRenderTest, StatsOfADumpReadInSegmentsAreTheWholeReadsStats) {
  const std::string dump = WriteLongRun(parts_, 5, 3);
  const ProcessResult a = RunProcess({LauncherPath(), "stats", dump, "--format", "json"});
  const ProcessResult b = RunProcess({LauncherPath(), "stats", dump, "--format", "json",
                                      "--segment-render-mb", "0"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out, a.out);
  EXPECT_THAT(b.out, HasSubstr("\"k_a\""));
  EXPECT_EQ(Count(b.out, "\"cudaLaunchKernel\""), 1u);
}

}  // namespace
}  // namespace gprof::testing
