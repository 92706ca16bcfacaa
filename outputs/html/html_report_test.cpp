// The HTML report (outputs/html/html_report.h): the model's numbers for a hand-built profile, derived
// by hand below; the page's text for them; escaping of hostile names; no external references;
// the size bound on an adversarial profile; the merged page.
#include "outputs/html/html_report.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "analysis/findings/findings_test_util.h"
#include "analysis/ranks/merge_findings.h"
#include "analysis/samples/cpu_samples.h"
#include "analysis/samples/native_symbols.h"
#include "analysis/samples/python_samples.h"
#include "analysis/samples/python_sync.h"
#include "outputs/html/html_report_model.h"
#include "text/utf8.h"

namespace gprof {
namespace {

using namespace findings_test;  // NOLINT: t0, kTid, AddRange, AddApi, AddKernel
using html_internal::BuildModel;
using html_internal::Model;
using html_internal::TimelineTrack;

constexpr uint64_t kUs = 1000;

// Three steps of one thread and one stream, times in us after t0:
//   ProfilerStep#0 [0, 10000): load_batch [100, 900); launches at 900 (gemm [1000, 3000)) and
//                              3000 (bias [3010, 3110))
//   ProfilerStep#1 [10000, 14000): launch at 10000, gemm [11000, 12500)
//   ProfilerStep#2 [14000, 18000): launch at 14000, gemm [15000, 17500)
// Launch calls last 5 us. Derived:
//   window [0, 18000) (the steps); GPU busy 2000 + 100 + 1500 + 2500 = 6100 us (33.9%);
//   host busy: [100, 905) + 3 x 5 = 820 us (4.6%): neither overhead- nor compute-bound;
//   idle gaps >= 100 us: [0, 1000), [3110, 11000) = 7890, [12500, 15000), [17500, 18000):
//     11,890 us = 66.1% (gpu_idle, high); the largest at 3110 in step 0, while the host ran
//     only the launch at 10000 (5 us of the gap);
//   steps 10, 4, 4 ms: median 4 ms; step 0 is 2.5x the others' median and 6 ms more (cold
//     start) and >= 1.5 x 4 ms and 100 us more (an outlier); GPU busy per step 2100, 1500,
//     2500 us;
//   gemm: 3 instances 2000, 1500, 2500 us: min 1.5 ms, median 2 ms, p95 (the 3rd smallest)
//     2.5 ms, max 2.5 ms, total 6 ms; bias: one of 100 us.
Profile ThreeSteps() {
  Profile p = NewProfile();
  p.info.program = "train";
  p.info.command_line = "train --steps 3";
  p.info.hostname = "node1";
  p.info.end_ns = t0 + 18'500 * kUs;
  p.info.gpu_status = "collected";
  AddRange(&p, 0, 10'000 * kUs, "ProfilerStep#0");
  AddRange(&p, 10'000 * kUs, 14'000 * kUs, "ProfilerStep#1");
  AddRange(&p, 14'000 * kUs, 18'000 * kUs, "ProfilerStep#2");
  AddRange(&p, 100 * kUs, 900 * kUs, "load_batch");
  AddApi(&p, 900 * kUs, 905 * kUs, 1, kLaunch);
  AddKernel(&p, 1'000 * kUs, 3'000 * kUs, 1, "gemm");
  AddApi(&p, 3'000 * kUs, 3'005 * kUs, 2, kLaunch);
  AddKernel(&p, 3'010 * kUs, 3'110 * kUs, 2, "bias");
  AddApi(&p, 10'000 * kUs, 10'005 * kUs, 3, kLaunch);
  AddKernel(&p, 11'000 * kUs, 12'500 * kUs, 3, "gemm");
  AddApi(&p, 14'000 * kUs, 14'005 * kUs, 4, kLaunch);
  AddKernel(&p, 15'000 * kUs, 17'500 * kUs, 4, "gemm");
  return p;
}

struct Rendered {
  std::vector<Finding> findings;
  FindingsContext context;
  TableRows rows;
  HtmlReportInput input;
  std::string page;
};

// The page as RenderDirectory makes it.
void Render(const Profile& p, Rendered* r) {
  r->findings = FindFindings(p, &r->context);
  r->rows = SortedTableRows(p, TableOptions{});
  r->input.profile = &p;
  r->input.findings = &r->findings;
  r->input.context = &r->context;
  r->input.table = &r->rows;
  r->input.links.table = "table.txt";
  r->input.links.trace = "trace.json";
  r->input.links.pftrace = "trace.pftrace";
  r->input.links.findings_text = "findings.txt";
  r->input.links.findings_json = "findings.json";
  r->input.version = "0.1.0";
  r->page = FormatHtmlReport(r->input);
}

bool Has(const std::string& page, const std::string& text) {
  return page.find(text) != std::string::npos;
}

TEST(HtmlReportModel, StepsOfAKnownProfile) {
  const Profile p = ThreeSteps();
  Rendered r;
  Render(p, &r);
  const Model m = BuildModel(r.input);
  EXPECT_EQ(m.steps.count, 3u);
  EXPECT_EQ(m.steps.median_wall_ns, 4'000 * kUs);
  ASSERT_TRUE(m.steps.cold_step.has_value());
  EXPECT_EQ(*m.steps.cold_step, 0u);
  ASSERT_EQ(m.steps.bars.size(), 3u);
  EXPECT_TRUE(m.steps.bars[0].cold);
  EXPECT_TRUE(m.steps.bars[0].outlier);
  EXPECT_FALSE(m.steps.bars[1].cold || m.steps.bars[1].outlier);
  EXPECT_EQ(m.steps.bars[0].wall_ns, 10'000 * kUs);
  EXPECT_EQ(m.steps.bars[0].gpu_busy_ns, 2'100 * kUs);
  EXPECT_EQ(m.steps.bars[1].gpu_busy_ns, 1'500 * kUs);
  EXPECT_EQ(m.steps.bars[2].gpu_busy_ns, 2'500 * kUs);
  EXPECT_EQ(m.steps.outliers, 1u);
  ASSERT_EQ(m.steps.slowest.size(), 3u);
  EXPECT_EQ(m.steps.slowest[0].number, 0u);
  EXPECT_EQ(m.steps.slowest[1].number, 1u);  // ties keep step order
  EXPECT_EQ(m.steps.slowest[2].number, 2u);
}

TEST(HtmlReportModel, TimelineOfAKnownProfile) {
  const Profile p = ThreeSteps();
  Rendered r;
  Render(p, &r);
  const Model m = BuildModel(r.input);
  const html_internal::Timeline& tl = m.timeline;
  EXPECT_EQ(tl.start_ns, t0);
  EXPECT_EQ(tl.end_ns, t0 + 18'000 * kUs);
  ASSERT_EQ(tl.bins, 600u);  // of 30 us each
  ASSERT_EQ(tl.tracks.size(), 3u);  // thread 1, GPU 0, its stream 7
  EXPECT_EQ(tl.tracks[0].kind, TimelineTrack::Kind::kHost);
  EXPECT_EQ(tl.tracks[0].label, "thread 1");
  EXPECT_EQ(tl.tracks[0].busy_ns, 820 * kUs);
  EXPECT_EQ(tl.tracks[0].events, 5u);
  EXPECT_EQ(tl.tracks[1].label, "GPU 0 (all streams)");
  EXPECT_EQ(tl.tracks[1].busy_ns, 6'100 * kUs);
  EXPECT_EQ(tl.tracks[1].events, 4u);
  EXPECT_EQ(tl.tracks[2].label, "GPU 0 stream 7");
  EXPECT_EQ(tl.tracks[2].busy_ns, 6'100 * kUs);
  // Bin 33 is [990, 1020) us: gemm from 1000; bin 100 [3000, 3030): bias from 3010; bin 0 idle.
  EXPECT_EQ(tl.tracks[1].bins[33], 20 * kUs);
  EXPECT_EQ(tl.tracks[1].bins[100], 20 * kUs);
  EXPECT_EQ(tl.tracks[1].bins[34], 30 * kUs);
  EXPECT_EQ(tl.tracks[1].bins[0], 0u);
  // The host bin [90, 120) us: load_batch from 100.
  EXPECT_EQ(tl.tracks[0].bins[3], 20 * kUs);
  // The gpu_idle finding's gaps, the largest first.
  ASSERT_EQ(tl.gaps.size(), 3u);
  EXPECT_EQ(tl.gaps[0].start_ns, t0 + 3'110 * kUs);
  EXPECT_EQ(tl.gaps[0].dur_ns, 7'890 * kUs);
  ASSERT_TRUE(tl.gaps[0].step.has_value());
  EXPECT_EQ(*tl.gaps[0].step, 0u);
  ASSERT_FALSE(tl.gaps[0].context.empty());
  EXPECT_EQ(tl.gaps[0].context[0], "cudaLaunchKernel on thread 1 (5.000us of the gap)");
  EXPECT_EQ(tl.step_starts.size(), 3u);
}

TEST(HtmlReportModel, KernelDistributionsOfAKnownProfile) {
  const Profile p = ThreeSteps();
  Rendered r;
  Render(p, &r);
  const Model m = BuildModel(r.input);
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].name, "gemm");
  EXPECT_EQ(m.kernels[0].count, 3u);
  EXPECT_EQ(m.kernels[0].total_ns, 6'000 * kUs);
  EXPECT_EQ(m.kernels[0].min_ns, 1'500 * kUs);
  EXPECT_EQ(m.kernels[0].median_ns, 2'000.0 * kUs);
  EXPECT_EQ(m.kernels[0].p95_ns, 2'500 * kUs);
  EXPECT_EQ(m.kernels[0].max_ns, 2'500 * kUs);
  EXPECT_EQ(m.kernels[1].name, "bias");
  EXPECT_EQ(m.kernels[1].count, 1u);
  EXPECT_TRUE(m.memory.empty());
}

// Records out of start order take the second pass (buckets sorted, then swept): nested ranges
// as the collector stores them (the inner one, which ends first, first) and two streams of one
// GPU whose records interleave out of order. The same records in start order take the first
// pass; both give the same columns. Times in us after t0, the window [0, 600) (no steps: from
// the first GPU record or launch to the last), columns of 1 us:
//   thread 1: outer [0, 300) after inner [100, 200), the launch call [0, 10): busy 300 us;
//   GPU 0: stream 7 [400, 450) and [350, 380), stream 8 [420, 600) and [300, 330):
//   busy [300, 330) + [350, 380) + [400, 600) = 260 us.
TEST(HtmlReportModel, RecordsOutOfOrderGiveTheSameColumns) {
  const auto build = [](bool ordered) {
    Profile p = NewProfile();
    if (ordered) {
      AddRange(&p, 0, 300 * kUs, "outer");
      AddRange(&p, 100 * kUs, 200 * kUs, "inner");
    } else {
      AddRange(&p, 100 * kUs, 200 * kUs, "inner");
      AddRange(&p, 0, 300 * kUs, "outer");
    }
    AddApi(&p, 0, 10 * kUs, 1, kLaunch);
    const auto k = [&](uint64_t s, uint64_t e, uint32_t stream) {
      AddKernel(&p, s * kUs, e * kUs, 1, "k", stream);
    };
    if (ordered) {
      k(300, 330, 8); k(350, 380, 7); k(400, 450, 7); k(420, 600, 8);
    } else {
      k(400, 450, 7); k(420, 600, 8); k(350, 380, 7); k(300, 330, 8);
    }
    return p;
  };
  std::vector<html_internal::Timeline> timelines;
  for (const bool ordered : {true, false}) {
    const Profile p = build(ordered);
    Rendered r;
    Render(p, &r);
    timelines.push_back(BuildModel(r.input).timeline);
  }
  for (const html_internal::Timeline& tl : timelines) {
    ASSERT_EQ(tl.tracks.size(), 4u);  // thread 1, GPU 0, streams 7 and 8
    EXPECT_EQ(tl.start_ns, t0);
    EXPECT_EQ(tl.end_ns, t0 + 600 * kUs);
    EXPECT_EQ(tl.tracks[0].busy_ns, 300 * kUs);
    EXPECT_EQ(tl.tracks[1].label, "GPU 0 (all streams)");
    EXPECT_EQ(tl.tracks[1].busy_ns, 260 * kUs);
    EXPECT_EQ(tl.tracks[1].events, 4u);
    EXPECT_EQ(tl.tracks[2].busy_ns, 80 * kUs);   // stream 7
    EXPECT_EQ(tl.tracks[3].busy_ns, 210 * kUs);  // stream 8
  }
  for (size_t i = 0; i < timelines[0].tracks.size(); ++i) {
    EXPECT_EQ(timelines[0].tracks[i].bins, timelines[1].tracks[i].bins) << i;
  }
}

// An even count takes the mean of the two middle values, as `gprof-run stats` does.
TEST(HtmlReportModel, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  Profile p = NewProfile();
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t d = (i + 1) * 100 * kUs;  // 100, 200, 300, 400 us
    AddApi(&p, i * 1'000 * kUs, i * 1'000 * kUs + 5 * kUs, i + 1, kLaunch);
    AddKernel(&p, i * 1'000 * kUs + 10 * kUs, i * 1'000 * kUs + 10 * kUs + d, i + 1, "k");
  }
  Rendered r;
  Render(p, &r);
  const Model m = BuildModel(r.input);
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].median_ns, 250.0 * kUs);
  EXPECT_EQ(m.kernels[0].p95_ns, 400 * kUs);  // ceil(3.8) = the 4th smallest
}

// Device 0: +100 MiB at 500 us, +50 MiB at 5000 us, the first freed (size from its
// allocation) at 9000 us; +10 MiB at 20000 us, after the window [0, 18000): peak 150 MiB at
// 5000 us; bins of 30 us: [0, 480) 0, bin 16 [480, 510) 100 MiB, bin 166 [4980, 5010) 150 MiB,
// bin 300 [9000, 9030) 150 MiB (the level it starts with), bin 301 50 MiB.
TEST(HtmlReportModel, MemoryInUseFollowsAllocationsAndFrees) {
  Profile p = ThreeSteps();
  const auto op = [&](uint64_t us, uint64_t address, uint64_t bytes, MemoryOpKind kind) {
    MemoryOp m{};
    m.ts_ns = t0 + us * kUs;
    m.address = address;
    m.bytes = bytes;
    m.op = kind;
    m.stream_id = 0xffffffffu;
    p.memory_ops.push_back(m);
  };
  constexpr uint64_t kMiB = 1 << 20;
  op(500, 0x1000, 100 * kMiB, MemoryOpKind::kAlloc);
  op(5'000, 0x2000, 50 * kMiB, MemoryOpKind::kAlloc);
  op(9'000, 0x1000, 0, MemoryOpKind::kFree);
  op(20'000, 0x3000, 10 * kMiB, MemoryOpKind::kAlloc);
  Rendered r;
  Render(p, &r);
  const Model m = BuildModel(r.input);
  ASSERT_EQ(m.memory.size(), 1u);
  const html_internal::MemorySeries& s = m.memory[0];
  EXPECT_EQ(s.ops, 4u);
  EXPECT_EQ(s.peak, 150 * kMiB);
  EXPECT_EQ(s.peak_ns, t0 + 5'000 * kUs);
  EXPECT_EQ(s.at_start, 0u);
  EXPECT_EQ(s.bin_max[15], 0u);
  EXPECT_EQ(s.bin_max[16], 100 * kMiB);
  EXPECT_EQ(s.bin_max[166], 150 * kMiB);
  EXPECT_EQ(s.bin_max[300], 150 * kMiB);
  EXPECT_EQ(s.bin_max[301], 50 * kMiB);
  EXPECT_EQ(s.bin_max[599], 50 * kMiB);
  EXPECT_TRUE(Has(r.page, "peak <b>150.0 MiB</b> at 5.000ms"));
}

TEST(HtmlReportModel, BinsTileTheSpan) {
  html_internal::Timeline tl;
  for (const uint64_t span : {1ull, 599ull, 600ull, 601ull, 18'000'000ull, 7'777'777'777ull}) {
    tl.SetSpan(t0, t0 + span, 600);
    ASSERT_GE(tl.bins, 1u);
    EXPECT_LE(tl.bins, 600u);
    EXPECT_EQ(tl.BinStart(0), t0);
    EXPECT_EQ(tl.BinEnd(tl.bins - 1), t0 + span);
    for (uint64_t t = tl.start_ns; t < tl.end_ns; t += std::max<uint64_t>(1, span / 997)) {
      const size_t b = tl.BinOf(t);
      ASSERT_LT(b, tl.bins);
      EXPECT_LE(tl.BinStart(b), t) << span;
      EXPECT_LT(t, tl.BinEnd(b)) << span;
    }
  }
}

TEST(HtmlReport, PageOfAKnownProfileSaysWhatTheModelHas) {
  const Profile p = ThreeSteps();
  Rendered r;
  Render(p, &r);
  const std::string& h = r.page;
  // The headline: program, command line, verdict, what was recorded and lost.
  EXPECT_TRUE(Has(h, "gprof-run report: train")) << h.substr(0, 4000);
  EXPECT_TRUE(Has(h, "$ train --steps 3"));
  EXPECT_TRUE(Has(h, "<b>Neither overhead- nor compute-bound</b>"));
  EXPECT_TRUE(Has(h, "GPU 0 is busy 33.9% of the 18.000ms window and the host 4.6%"));
  EXPECT_TRUE(Has(h, "nothing (every loss counter is 0)"));
  EXPECT_TRUE(Has(h, "4 ranges, 4 CUDA calls, 4 kernels"));
  // The findings, most severe first: gpu_idle (high) before cold_start (warn).
  const size_t idle = h.find("<code>gpu_idle</code>"), cold = h.find("<code>cold_start</code>");
  ASSERT_NE(idle, std::string::npos);
  ASSERT_NE(cold, std::string::npos);
  EXPECT_LT(idle, cold);
  EXPECT_TRUE(Has(h, "GPU 0 idle 66.1% of the window in 4 gaps"));
  // Steps.
  EXPECT_TRUE(Has(h, "<b>3 steps</b>, median 4.000ms"));
  EXPECT_TRUE(Has(h, "<td>ProfilerStep#0</td><td>10.000ms</td><td>2.100ms</td><td>7.900ms</td>"
                     "<td>21.0%</td><td class=\"name\"><span class=\"tag cold\">cold start</span> "
                     "<span class=\"tag outlier\">outlier</span>"));
  // Timeline: the largest gap with what the host did.
  EXPECT_TRUE(Has(h, "GPU 0 idle <b>7.890ms</b> at 3.110ms (ProfilerStep#0); the host meanwhile: "
                     "cudaLaunchKernel on thread 1 (5.000us of the gap)"));
  // Top rows and the distribution.
  EXPECT_TRUE(Has(h, "<td class=\"name\" title=\"gemm\">gemm</td><td>3</td><td>6.000ms</td>"
                     "<td>1.500ms</td><td>2.000ms</td><td>2.500ms</td><td>2.500ms</td>"));
  EXPECT_TRUE(Has(h, "No memory data"));
  // Links.
  for (const char* link : {"href=\"./trace.json\"", "href=\"./trace.pftrace\"",
                           "href=\"./table.txt\"", "href=\"./findings.txt\"",
                           "href=\"./findings.json\""}) {
    EXPECT_TRUE(Has(h, link)) << link;
  }
  EXPECT_TRUE(Has(h, "ui.perfetto.dev"));
}

TEST(HtmlReport, SameInputSameBytes) {
  const Profile p = ThreeSteps();
  Rendered a, b;
  Render(p, &a);
  Render(p, &b);
  EXPECT_EQ(a.page, b.page);
}

TEST(HtmlReport, NoScriptsAndNothingFromOutside) {
  const Profile p = ThreeSteps();
  Rendered r;
  Render(p, &r);
  const std::string& h = r.page;
  EXPECT_TRUE(Has(h, "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\""));
  for (const char* bad : {"<script", "<link", "<img", "<iframe", "<object", "<embed", "src=",
                          "url(", "@import", "href=\"http", "href=\"//"}) {
    EXPECT_FALSE(Has(h, bad)) << bad;
  }
}

TEST(HtmlReport, NoStepsAndNoMemorySaySo) {
  Profile p = NewProfile();
  AddApi(&p, 0, 5 * kUs, 1, kLaunch);
  AddKernel(&p, 10 * kUs, 20 * kUs, 1, "k");
  Rendered r;
  Render(p, &r);
  EXPECT_TRUE(Has(r.page, "No steps in this profile"));
  EXPECT_TRUE(Has(r.page, "No memory data"));
  EXPECT_TRUE(Has(r.page, "(the active part: first to last GPU work and launch)"));
}

TEST(HtmlEscape, HostileBytesBecomeText) {
  using html_internal::Html;
  EXPECT_EQ(Html("</script><img src=x onerror=\"alert('x')\">&"),
            "&lt;/script&gt;&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;");
  EXPECT_EQ(Html("a\xff" "b"), "a\xEF\xBF\xBD" "b");        // invalid byte
  EXPECT_EQ(Html("a\x01\x7f" "b"), "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");  // controls
  EXPECT_EQ(Html("a\xC2\x85" "b"), "a\xEF\xBF\xBD" "b");     // C1 control (NEL)
  EXPECT_EQ(Html("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");  // valid UTF-8 kept
  EXPECT_EQ(Html("abcdef", 3), "abc\xE2\x80\xA6");           // capped, with an ellipsis
}

// Every string the profile controls, hostile: program, command line, host, kernel, range, thread,
// device and API names. The page must hold none of them as markup, and be valid UTF-8.
TEST(HtmlReport, HostileNamesAreEscapedEverywhere) {
  const std::string evil = "</script><img src=x onerror=alert(1)>\"'\xff\xfe<svg onload=alert(2)>";
  Profile h = NewProfile();
  h.info.program = evil;
  h.info.command_line = evil + " --flag";
  h.info.hostname = evil;
  h.info.gpu_status = evil;
  AddRange(&h, 0, 10'000 * kUs, "ProfilerStep#0");
  AddRange(&h, 10'000 * kUs, 14'000 * kUs, "ProfilerStep#1");
  AddRange(&h, 14'000 * kUs, 18'000 * kUs, "ProfilerStep#2");
  AddRange(&h, 100 * kUs, 9'000 * kUs, evil.c_str());
  AddApi(&h, 900 * kUs, 905 * kUs, 1, kLaunch);
  AddKernel(&h, 1'000 * kUs, 3'000 * kUs, 1, evil.c_str());
  AddApi(&h, 10'000 * kUs, 10'005 * kUs, 3, kLaunch);
  AddKernel(&h, 11'000 * kUs, 12'500 * kUs, 3, evil.c_str());
  AddApi(&h, 14'000 * kUs, 14'005 * kUs, 4, kLaunch);
  AddKernel(&h, 15'000 * kUs, 17'500 * kUs, 4, evil.c_str());
  h.threads.push_back({kTid, h.strings.Intern(evil)});
  DeviceInfo dev{};
  dev.name = h.strings.Intern(evil);
  h.devices.push_back(dev);
  Rendered r;
  Render(h, &r);
  const std::string& page = r.page;
  for (const char* bad : {"<img", "<script", "</script", "<svg onload", "onerror=alert(1)>"}) {
    EXPECT_FALSE(Has(page, bad)) << bad;
  }
  EXPECT_TRUE(Has(page, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;"));
  for (size_t i = 0; i < page.size();) {
    const size_t n = Utf8SequenceLength(page, i);
    ASSERT_GT(n, 0u) << "invalid UTF-8 at byte " << i;
    i += n;
  }
}

// A profile built to make every section as large as it can be: many threads, streams, devices,
// kernel names of 4000 characters, steps, memory devices and findings. The page stays under the
// bound.
TEST(HtmlReport, AnAdversarialProfileStaysUnderTheBound) {
  Profile p = NewProfile();
  for (uint32_t d = 1; d < 20; ++d) {
    LaunchConfig lc{};
    lc.device_id = d;
    p.launch_configs.push_back(lc);
  }
  uint32_t corr = 1;
  for (uint32_t step = 0; step < 2'000; ++step) {
    const uint64_t s = step * 100 * kUs;
    p.ranges.push_back({t0 + s, t0 + s + 100 * kUs,
                        p.strings.Intern("ProfilerStep#" + std::to_string(step)), kTid, 0, 0, 0});
  }
  for (uint32_t i = 0; i < 40'000; ++i) {
    const uint64_t s = i * 5 * kUs + (i % 7) * kUs;
    const std::string name = "kernel_" + std::to_string(i % 3'000) + std::string(4'000, 'x');
    p.api_calls.push_back(
        {t0 + s, t0 + s + 2 * kUs, corr, 100 + i % 500, kLaunch, ApiDomain::kRuntime, 0, 0});
    p.kernels.push_back({t0 + s + 3 * kUs, t0 + s + 4 * kUs + (i % 11) * kUs, corr,
                         p.strings.Intern(name), i % 20, i % 200});
    ++corr;
    if (i % 10 == 0) {
      MemoryOp m{};
      m.ts_ns = t0 + s;
      m.address = i;
      m.bytes = (i % 97) << 20;
      m.op = i % 20 == 0 ? MemoryOpKind::kAlloc : MemoryOpKind::kFree;
      m.device_id = static_cast<uint8_t>(i % 20);
      p.memory_ops.push_back(m);
    }
  }
  for (uint32_t t = 0; t < 500; ++t) {
    p.threads.push_back({100 + t, p.strings.Intern(std::string(3'000, 'T') + std::to_string(t))});
  }
  // --cpu-sampling: 4000 stacks of 4 distinct functions each, their names longer than any
  // place on the page shows (1000 characters), sampled on all 500 threads.
  CpuSampleNames cpu;
  for (uint32_t s = 0; s < 4'000; ++s) {
    cpu.frames_outermost_first.emplace_back();
    for (uint32_t d = 0; d < 4; ++d) {
      cpu.frames_outermost_first.back().push_back("fn_" + std::to_string(s * 4 + d) +
                                                  std::string(1'000, 'f'));
    }
    cpu.function.push_back(cpu.frames_outermost_first.back().back());
    cpu.location.push_back("");
    p.cpu_samples.push_back({t0 + s * kUs, 100 + s % 500, s, 1'000'000});
  }
  p.cpu_sample_counters = {1000, kCpuSamplesPerf, p.cpu_samples.size(), 0};
  Rendered r;
  r.input.cpu_samples = &cpu;
  Render(p, &r);
  const Model m = BuildModel(r.input);
  EXPECT_EQ(m.cpu.functions.size(), html_internal::kTopCpuFunctions);
  EXPECT_EQ(m.cpu.functions_total, 16'000u);
  EXPECT_EQ(m.cpu.threads.size(), html_internal::kTopSampledThreads);
  EXPECT_EQ(m.cpu.threads_total, 500u);
  EXPECT_LE(m.timeline.tracks.size(),
            html_internal::kMaxHostTracks + html_internal::kMaxGpuTracks +
                html_internal::kMaxDeviceRows);
  EXPECT_LE(m.steps.bars.size(), html_internal::kMaxStepBars);
  EXPECT_LE(m.memory.size(), html_internal::kMaxMemoryDevices);
  EXPECT_LT(r.page.size(), kHtmlReportMaxBytes) << r.page.size();
  std::printf("adversarial page: %zu bytes, %zu findings\n", r.page.size(), r.findings.size());
}

// Two ranks of the three-step profile, rank 1's steps 1 and 2 made 3 ms slower: rank 1 is the
// straggler by step time (2 of 3 steps 1.75x the other's), named on the page with both ranks'
// rows.
TEST(HtmlReport, MergedPageNamesTheRanks) {
  std::vector<MergeInput> inputs;
  for (int rank = 0; rank < 2; ++rank) {
    Profile p = ThreeSteps();
    p.info.rank = rank;
    p.info.world_size = 2;
    p.info.pid = 7 + static_cast<uint32_t>(rank);
    if (rank == 1) {
      p.ranges[1].end_ns += 3'000 * kUs;
      p.ranges[2].start_ns += 3'000 * kUs;
      p.ranges[2].end_ns += 6'000 * kUs;
    }
    inputs.push_back(SummarizeForMerge(p, "rank" + std::to_string(rank) + ".gpdump"));
  }
  SortMergeInputs(&inputs);
  const std::vector<Finding> findings = MergedFindings(inputs);
  MergedHtmlReportInput in;
  in.inputs = &inputs;
  in.findings = &findings;
  in.title = "whole run";
  in.links.trace = "trace.json";
  in.links.table = "table.txt";
  const std::string page = FormatMergedHtmlReport(in);
  EXPECT_TRUE(Has(page, "gprof-run merged report <span class=\"muted\">2 processes, whole run"));
  EXPECT_TRUE(Has(page, "rank 0 (node1:7)"));
  EXPECT_TRUE(Has(page, "rank 1 (node1:8)"));
  EXPECT_TRUE(Has(page, "<b>Straggler</b>: ")) << page;
  EXPECT_TRUE(Has(page, "<code>straggler</code>"));
  EXPECT_TRUE(Has(page, "href=\"./trace.json\""));
  EXPECT_FALSE(Has(page, "<script"));
  EXPECT_LT(page.size(), kHtmlReportMaxBytes);
}

// ---- Call stacks: "Python stacks (sampled)" -------------------------------------------------

// ThreeSteps plus three blocking calls on thread kTid, with native stacks, and Python samples of
// that thread every 1 ms (times in us after t0):
//   cudaDeviceSynchronize [4000, 4600) corr 10, stack 0; cudaStreamSynchronize [12600, 12800)
//   corr 11, stack 1; cudaDeviceSynchronize [16000, 16300) corr 12, stack 0; and the launch at
//   900 (corr 1) also has stack 1, but a launch does not block: not counted.
//   Samples (root first): 0, 1, 2 ms <module> step load; 3, 4, 5 ms <module> step sync;
//   6 ms <module>; 20 ms <module> step load (after the profile's end at 18.5 ms: left out).
// Derived: 7 samples of 1 thread. Self: load 3, sync 3, <module> 1, step 0; total: <module> 7,
// step 6, load 3, sync 3. Order (self, then total, then name): load, sync, <module>, step;
// shares of 7: 3 -> 42.9%, 6 -> 85.7%, 7 -> 100.0%.
// Syncs: the 4000 us call has the 4 ms sample inside it -> "sync (train.py:31)" (the line
// running), 1 call 600 us, 54.5% of the 1100 us the 3 calls blocked; the other two have no
// sample within 1 ms: not sampled.
// Native: (cudaDeviceSynchronize, stack 0) 2 calls 900 us = 81.8% of 1100; (cudaStreamSynchronize,
// stack 1) 1 call 200 us = 18.2%; frames from the first user frame (index 1) outwards.
struct StacksFixture {
  Profile profile = ThreeSteps();
  PythonSamples samples;
  PythonSyncs syncs;
  SymbolizedStacks native;

  explicit StacksFixture(const std::string& name_part = "") {
    Profile& p = profile;
    AddApi(&p, 4'000 * kUs, 4'600 * kUs, 10, kDeviceSync);
    AddApi(&p, 12'600 * kUs, 12'800 * kUs, 11, kStreamSync);
    AddApi(&p, 16'000 * kUs, 16'300 * kUs, 12, kDeviceSync);
    p.stacks = {{0, 3}, {3, 3}};
    p.stack_pcs = {1, 2, 3, 4, 5, 6};
    p.api_stacks = {{10, 0}, {11, 1}, {12, 0}, {1, 1}};
    native.frames = {{"cudaDeviceSynchronize", "sync_all" + name_part + "() (train.cu:10)",
                      "main (train.cu:40)"},
                     {"cudaStreamSynchronize", "wait_stream() (train.cu:20)", "main (train.cu:41)"}};
    native.top_user_frame = {1, 1};
    native.top_user_function = {"sync_all" + name_part + "()", "wait_stream()"};
    samples.pid = p.info.pid;
    samples.hz = 1000;
    samples.period_ns = 1'000'000;
    samples.start_ns = t0;
    samples.threads = {{kTid, 1, "MainThread"}};
    samples.frames = {{"train.py" + name_part, "<module>", 1, 50},
                      {"train.py" + name_part, "step" + name_part, 10, 12},
                      {"train.py" + name_part, "load", 20, 22},
                      {"train.py" + name_part, "sync", 30, 31}};
    samples.stacks = {{0, 1, 2}, {0, 1, 3}, {0}};
    for (uint64_t ms = 0; ms < 7; ++ms) {
      samples.samples.push_back({t0 + ms * 1'000'000, 0, ms < 3 ? 0u : ms < 6 ? 1u : 2u});
    }
    samples.samples.push_back({t0 + 20'000'000, 0, 0});
    syncs = SyncsByPythonLine(p, samples, p.info.start_ns, p.info.end_ns);
  }

  void Render(Rendered* r, bool python = true, bool with_native = true) {
    r->input.python_samples = python ? &samples : nullptr;
    r->input.python_syncs = python ? &syncs : nullptr;
    r->input.native_stacks = with_native ? &native : nullptr;
    gprof::Render(profile, r);
  }
};

TEST(HtmlReportModel, StacksOfAKnownProfile) {
  StacksFixture f;
  const html_internal::StacksModel m =
      html_internal::BuildStacksModel(f.profile, &f.samples, &f.syncs, &f.native);
  EXPECT_TRUE(m.sampled);
  EXPECT_EQ(m.hz, 1000u);
  EXPECT_EQ(m.samples, 7u);
  EXPECT_EQ(m.threads, 1u);
  ASSERT_EQ(m.functions.size(), 4u);
  EXPECT_EQ(m.functions_total, 4u);
  const std::vector<std::tuple<std::string, uint64_t, uint64_t>> want = {
      {"load (train.py:20)", 3, 3}, {"sync (train.py:30)", 3, 3},
      {"<module> (train.py:1)", 1, 7}, {"step (train.py:10)", 0, 6}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(m.functions[i].name, std::get<0>(want[i])) << i;
    EXPECT_EQ(m.functions[i].self, std::get<1>(want[i])) << i;
    EXPECT_EQ(m.functions[i].total, std::get<2>(want[i])) << i;
  }
  EXPECT_EQ(m.sync_calls, 3u);
  EXPECT_EQ(m.sync_blocked_ns, 1'100 * kUs);
  EXPECT_EQ(m.sync_not_sampled, 2u);
  ASSERT_EQ(m.sync_lines.size(), 1u);
  EXPECT_EQ(m.sync_lines[0].where, "sync (train.py:31)");
  EXPECT_EQ(m.sync_lines[0].calls, 1u);
  EXPECT_EQ(m.sync_lines[0].blocked_ns, 600 * kUs);
  EXPECT_EQ(m.native_calls, 3u) << "the launch's stack does not count: a launch does not block";
  EXPECT_EQ(m.native_blocked_ns, 1'100 * kUs);
  ASSERT_EQ(m.native.size(), 2u);
  EXPECT_EQ(m.native[0].api, "cudaDeviceSynchronize");
  EXPECT_EQ(m.native[0].calls, 2u);
  EXPECT_EQ(m.native[0].blocked_ns, 900 * kUs);
  EXPECT_EQ(m.native[0].caller, "sync_all()");
  EXPECT_EQ(m.native[0].frames,
            (std::vector<std::string>{"sync_all() (train.cu:10)", "main (train.cu:40)"}));
  EXPECT_EQ(m.native[1].api, "cudaStreamSynchronize");
  EXPECT_EQ(m.native[1].blocked_ns, 200 * kUs);
}

// A third stack that differs from stack 0 only in the runtime's frame (cudart's internal path)
// is the same place in the program: the 16000 us call moved to it still makes one row of 2 calls.
TEST(HtmlReportModel, NativeStacksDifferingOnlyInsideTheRuntimeAreOneRow) {
  StacksFixture f;
  f.profile.stacks.push_back({6, 3});
  f.profile.stack_pcs.insert(f.profile.stack_pcs.end(), {7, 2, 3});
  f.profile.api_stacks[2] = {12, 2};
  f.native.frames.push_back({"cudart internal (libcudart.so.13)", "sync_all() (train.cu:10)",
                             "main (train.cu:40)"});
  f.native.top_user_frame.push_back(1);
  f.native.top_user_function.push_back("sync_all()");
  const html_internal::StacksModel m =
      html_internal::BuildStacksModel(f.profile, &f.samples, &f.syncs, &f.native);
  ASSERT_EQ(m.native.size(), 2u);
  EXPECT_EQ(m.native_total, 2u);
  EXPECT_EQ(m.native[0].calls, 2u);
  EXPECT_EQ(m.native[0].blocked_ns, 900 * kUs);
}

TEST(HtmlReport, StacksSectionShowsTopFunctionsSyncLinesAndNativeStacks) {
  StacksFixture f;
  Rendered r;
  f.Render(&r);
  const std::string& page = r.page;
  EXPECT_TRUE(Has(page, "<section id=\"stacks\"><h2>Python stacks (sampled)</h2>"));
  EXPECT_TRUE(Has(page, "<a href=\"#stacks\">Stacks</a>"));
  EXPECT_TRUE(Has(page, "7 samples of 1 thread at 1000 Hz"));
  // load: self 3 (42.9%), total 3 (42.9%); <module>: total 7 (100.0%); step: total 6 (85.7%).
  EXPECT_TRUE(Has(page, "load (train.py:20)</td><td>3</td><td>42.9%</td><td>3</td><td>42.9%</td>"));
  EXPECT_TRUE(Has(page, "&lt;module&gt; (train.py:1)</td><td>1</td><td>14.3%</td><td>7</td><td>100.0%</td>"));
  EXPECT_TRUE(Has(page, "step (train.py:10)</td><td>0</td><td>0.0%</td><td>6</td><td>85.7%</td>"));
  EXPECT_LT(page.find("load (train.py:20)"), page.find("sync (train.py:30)"));
  EXPECT_TRUE(Has(page, "3 blocking calls"));
  EXPECT_TRUE(Has(page, "2 with no sample near them"));
  // The share is of all 1100 us of blocking calls, the two not sampled included (as
  // python_syncs.txt): 600 / 1100 = 54.5%.
  EXPECT_TRUE(Has(page, "sync (train.py:31)</td><td>1</td><td>600.000us</td><td>54.5%</td>"))
      << page.substr(page.find("id=\"stacks\""));
  EXPECT_TRUE(Has(page, "cudaDeviceSynchronize<br><span class=\"muted\">from sync_all()</span>"
                        "</td><td>2</td><td>900.000us</td><td>81.8%</td>"));
  EXPECT_TRUE(Has(page, "sync_all() (train.cu:10)<br>main (train.cu:40)"));
  EXPECT_TRUE(Has(page, "<td>1</td><td>200.000us</td><td>18.2%</td>"));
  EXPECT_FALSE(Has(page, "<script"));
}

TEST(HtmlReport, NoStacksNoStacksSection) {
  Rendered r;
  Render(ThreeSteps(), &r);
  EXPECT_FALSE(Has(r.page, "id=\"stacks\""));
  EXPECT_FALSE(Has(r.page, "href=\"#stacks\""));
}

TEST(HtmlReport, NativeStacksAloneHaveTheirOwnTitle) {
  StacksFixture f;
  Rendered r;
  f.Render(&r, /*python=*/false);
  EXPECT_TRUE(Has(r.page, "<section id=\"stacks\"><h2>Native stacks (--backtrace)</h2>"));
  EXPECT_TRUE(Has(r.page, "3 blocking calls with a native stack"));
  EXPECT_FALSE(Has(r.page, "Python stacks (sampled)"));
}

TEST(HtmlReport, HostileNamesInStacksAreEscaped) {
  const std::string evil = "</script><img src=x onerror=alert(1)>\"'\xff\xfe";
  StacksFixture f(evil);
  Rendered r;
  f.Render(&r);
  const std::string& page = r.page;
  for (const char* bad : {"<img", "<script", "</script", "onerror=alert(1)>"}) {
    EXPECT_FALSE(Has(page, bad)) << bad;
  }
  EXPECT_TRUE(Has(page, "sync_all&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;"));
  EXPECT_TRUE(Has(page, "train.py&lt;/script&gt;"));
  for (size_t i = 0; i < page.size();) {
    const size_t n = Utf8SequenceLength(page, i);
    ASSERT_GT(n, 0u) << "invalid UTF-8 at byte " << i;
    i += n;
  }
}

// Thousands of distinct functions and stacks: the section keeps its top rows.
TEST(HtmlReport, StacksSectionIsBounded) {
  StacksFixture f;
  for (uint32_t i = 0; i < 5'000; ++i) {
    f.samples.frames.push_back({"big.py", "fn_" + std::to_string(i) + std::string(500, 'x'), i, i});
    f.samples.stacks.push_back({0, static_cast<uint32_t>(f.samples.frames.size() - 1)});
    f.samples.samples.push_back({t0 + 7'000'000 + i, 0, static_cast<uint32_t>(f.samples.stacks.size() - 1)});
  }
  const html_internal::StacksModel m =
      html_internal::BuildStacksModel(f.profile, &f.samples, &f.syncs, &f.native);
  EXPECT_EQ(m.functions.size(), html_internal::kTopPythonFunctions);
  EXPECT_EQ(m.functions_total, 5'004u);
  Rendered r;
  f.Render(&r);
  EXPECT_LT(r.page.size(), kHtmlReportMaxBytes);
}

// ---- Host CPU samples (--cpu-sampling) -------------------------------------------------------

// ThreeSteps plus 10 samples of 1 ms CPU each (1000 Hz, perf): on kTid (unnamed) 6 in stack 0
// (main <- step() <- host_preprocess(int), innermost last) and 2 in stack 1 (main <- step() <-
// cudaLaunchKernel); on thread 200 ("loader") 2 in stack 2 (worker_main <- decode_jpeg).
// Derived: 10 samples of 2 threads, 10 ms of CPU. Self: host_preprocess 6 (60.0%, 6 ms),
// cudaLaunchKernel 2, decode_jpeg 2 (20.0% each); total: main 8, step() 8 (80.0%), worker_main
// 2. Order (self, then total, then name): host_preprocess(int), cudaLaunchKernel, decode_jpeg,
// main, step(), worker_main. Threads: kTid 8 (80.0%), its top host_preprocess(int) 6 of 8
// (75.0%); thread 200 2 (20.0%), decode_jpeg 2 of 2 (100.0%).
struct CpuSamplesFixture {
  Profile profile = ThreeSteps();
  CpuSampleNames names;

  CpuSamplesFixture() {
    Profile& p = profile;
    p.threads.push_back({200, p.strings.Intern("loader")});
    names.frames_outermost_first = {{"main", "step()", "host_preprocess(int)"},
                                    {"main", "step()", "cudaLaunchKernel"},
                                    {"worker_main", "decode_jpeg"}};
    names.function = {"host_preprocess(int)", "cudaLaunchKernel", "decode_jpeg"};
    names.location = {"main.cu:22", "", "loader.cpp:9"};
    p.stacks = {{0, 3}, {3, 3}, {6, 2}};
    p.stack_pcs = {1, 2, 3, 4, 2, 3, 5, 6};
    for (uint64_t ms = 0; ms < 10; ++ms) {
      const uint32_t stack = ms < 6 ? 0 : ms < 8 ? 1 : 2;
      p.cpu_samples.push_back({t0 + ms * 1'000'000, stack == 2 ? 200u : kTid, stack, 1'000'000});
    }
    p.cpu_sample_counters = {1000, kCpuSamplesPerf, 10, 0};
  }
};

TEST(HtmlReportModel, CpuSamplesOfAKnownProfile) {
  CpuSamplesFixture f;
  const html_internal::CpuSamplesModel m = html_internal::BuildCpuSamplesModel(f.profile, &f.names);
  EXPECT_EQ(m.samples, 10u);
  EXPECT_EQ(m.cpu_ns, 10'000'000u);
  EXPECT_EQ(m.hz, 1000u);
  EXPECT_EQ(m.backend, "perf_event_open, in process");  // kCpuSamplesPerf
  ASSERT_EQ(m.functions.size(), 6u);
  EXPECT_EQ(m.functions_total, 6u);
  const std::vector<std::tuple<std::string, uint64_t, uint64_t>> want = {
      {"host_preprocess(int)", 6, 6}, {"cudaLaunchKernel", 2, 2}, {"decode_jpeg", 2, 2},
      {"main", 0, 8},                 {"step()", 0, 8},           {"worker_main", 0, 2}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(m.functions[i].name, std::get<0>(want[i])) << i;
    EXPECT_EQ(m.functions[i].self, std::get<1>(want[i])) << i;
    EXPECT_EQ(m.functions[i].total, std::get<2>(want[i])) << i;
  }
  EXPECT_EQ(m.functions[0].self_cpu_ns, 6'000'000u);
  ASSERT_EQ(m.threads.size(), 2u);
  EXPECT_EQ(m.threads[0].tid, kTid);
  EXPECT_EQ(m.threads[0].samples, 8u);
  EXPECT_EQ(m.threads[0].top_function, "host_preprocess(int)");
  EXPECT_EQ(m.threads[0].top_self, 6u);
  EXPECT_EQ(m.threads[1].tid, 200u);
  EXPECT_EQ(m.threads[1].name, "loader");
  EXPECT_EQ(m.threads[1].top_function, "decode_jpeg");
}

TEST(HtmlReport, CpuSamplesSectionShowsTopHostFunctionsAndThreads) {
  CpuSamplesFixture f;
  Rendered r;
  r.input.cpu_samples = &f.names;
  Render(f.profile, &r);
  const std::string& page = r.page;
  EXPECT_TRUE(Has(page, "<section id=\"cpu\"><h2>Host CPU samples (--cpu-sampling)</h2>"));
  EXPECT_TRUE(Has(page, "<a href=\"#cpu\">CPU samples</a>"));
  EXPECT_TRUE(Has(page, "10 native stack samples of 2 threads at 1000 Hz (perf_event_open, in "
                        "process), standing for 10.000ms of CPU time"));
  EXPECT_TRUE(Has(page, "host_preprocess(int)</td><td>6</td><td>60.0%</td><td>6.000ms</td>"
                        "<td>6</td><td>60.0%</td>"));
  EXPECT_TRUE(Has(page, "step()</td><td>0</td><td>0.0%</td><td>0.000us</td><td>8</td>"
                        "<td>80.0%</td>"));
  EXPECT_TRUE(Has(page, "thread 1</td><td>8</td><td>80.0%</td>"));
  EXPECT_TRUE(Has(page, "host_preprocess(int)</td><td>75.0%</td>"));
  EXPECT_TRUE(Has(page, "thread 200 (loader)</td><td>2</td><td>20.0%</td>"));
  const size_t section = page.find("id=\"cpu\"");
  EXPECT_LT(page.find("host_preprocess(int)</td>", section), page.find("cudaLaunchKernel</td>", section));
  EXPECT_FALSE(Has(page, "<script"));
}

TEST(HtmlReport, NoCpuSamplesNoCpuSamplesSection) {
  Rendered r;
  Render(ThreeSteps(), &r);
  EXPECT_FALSE(Has(r.page, "id=\"cpu\""));
  EXPECT_FALSE(Has(r.page, "href=\"#cpu\""));
}

// The merged page says which ranks had sampled Python stacks (merged_view.cpp fills the counts).
TEST(HtmlReport, MergedPageSaysWhichRanksHadPythonSamples) {
  std::vector<MergeInput> inputs;
  for (int rank = 0; rank < 3; ++rank) {
    Profile p = ThreeSteps();
    p.info.rank = rank;
    p.info.world_size = 3;
    p.info.pid = 7 + static_cast<uint32_t>(rank);
    inputs.push_back(SummarizeForMerge(p, "rank" + std::to_string(rank) + ".gpdump"));
  }
  inputs[0].python_samples = 1234;
  inputs[0].python_hz = 500;
  inputs[2].python_samples = 7;
  inputs[2].python_hz = 1000;
  const std::vector<Finding> findings = MergedFindings(inputs);
  MergedHtmlReportInput in;
  in.inputs = &inputs;
  in.findings = &findings;
  in.title = "whole run";
  const std::string page = FormatMergedHtmlReport(in);
  EXPECT_TRUE(Has(page, "Python stacks (sampled): 2 of 3 processes had samples (rank 0 "
                        "(node1:7), rank 2 (node1:9))"));
  EXPECT_TRUE(Has(page, "<th>Python samples</th>"));
  EXPECT_TRUE(Has(page, "<td>1,234 at 500 Hz</td>"));
  EXPECT_TRUE(Has(page, "<td>7 at 1000 Hz</td>"));
  // Without samples, no column.
  for (MergeInput& i : inputs) i.python_samples = 0;
  EXPECT_FALSE(Has(FormatMergedHtmlReport(in), "Python samples"));
}

}  // namespace
}  // namespace gprof
