// Ops by Python source location (op_stacks.h) and the table grouped by it, on a hand-built
// profile and sample set whose every attribution is worked out in the comments.
#include "analysis/tables/op_stacks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/tables/key_averages.h"
#include "analysis/tables/segment_rows.h"
#include "outputs/table/table.h"

namespace gprof {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kUs = 1'000;
constexpr uint32_t kTid = 100;

const std::string kAttention = "/w/train.py(12): attention";
const std::string kMlp = "/w/train.py(22): mlp";
const std::string kForward = "/w/train.py(41): forward";
const std::string kMain = "/w/train.py(55): main";
const std::string kModule = "/w/train.py(30): <module>";
const std::string kTorchCall =
    "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py(1750): _call_impl";

// Frames (file, function, first line, line running) and stacks (root first):
//   kA: <module> -> main -> attention
//   kB: <module> -> main -> mlp
//   kC: <module> -> main -> forward -> torch's _call_impl -> attention (a layer called
//       through nn.Module: torch's frame is left out of the key)
//   kD: <module> -> gprof-run's hook (left out)
//   kE: torch's _call_impl only (nothing of the program: kept as it is)
enum Stack : uint32_t { kA, kB, kC, kD, kE };

PythonSamples Samples() {
  PythonSamples s;
  s.hz = 1000;
  s.period_ns = kMs;
  s.threads = {{kTid, 1, "MainThread"}, {0, 2, "dummy"}};
  s.frames = {{"/w/train.py", "<module>", 1, 30},
              {"/w/train.py", "attention", 10, 12},
              {"/w/train.py", "mlp", 20, 22},
              {"/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", "_call_impl",
               1700, 1750},
              {"/w/train.py", "forward", 40, 41},
              {"/opt/gprof/python/gprof_run_hook/_gprof_run_torch.py", "step", 5, 6},
              {"/w/train.py", "main", 50, 55}};
  s.stacks = {{0, 6, 1}, {0, 6, 2}, {0, 6, 4, 3, 1}, {0, 5}, {3}};
  return s;
}

void Sample(PythonSamples* s, uint64_t ts, Stack stack, uint32_t thread = 0) {
  s->samples.push_back({ts, thread, stack});
}

uint32_t Range(Profile* p, const char* name, uint64_t start, uint64_t end, uint32_t tid = kTid,
               uint16_t flags = kRangeTorch | kRangeCpuOp) {
  p->ranges.push_back({start, end, p->strings.Intern(name), tid, 0, flags, 0});
  return static_cast<uint32_t>(p->ranges.size() - 1);
}

const std::vector<std::string>& KeyOf(const RangeStacks& r, uint32_t range) {
  static const std::vector<std::string> kNone = {"(no key)"};
  return r.of_range[range] < r.keys.size() ? r.keys[r.of_range[range]] : kNone;
}

// The row of `name` whose stack starts with `innermost` ("" : the row without a stack).
const EventStats* Row(const std::vector<EventStats>& rows, const std::string& name,
                      const std::string& innermost) {
  for (const EventStats& e : rows) {
    if (e.name != name) continue;
    if (innermost.empty() ? e.stack.empty() : !e.stack.empty() && e.stack[0] == innermost) {
      return &e;
    }
  }
  return nullptr;
}

// aten::mm from attention (10..11 ms, inside aten::linear 9.8..11.2 ms) and from mlp (20..22 ms),
// and once where no sample came near (30..30.1 ms: the nearest sample, 20.9 ms, is 9 ms away).
// Samples: 10.5 ms kA; 20.2 ms kA and 20.9 ms kB, both inside the second mm: the nearest the
// middle (21 ms) is 20.9 ms, so kB, although 20.2 ms comes first.
TEST(OpStacks, TwoCallsOfOneOpFromTwoFunctionsAreTwoRowsWithTheirOwnCountsAndTimes) {
  Profile p;
  const uint32_t linear = Range(&p, "aten::linear", 9800 * kUs, 11200 * kUs);
  const uint32_t mm1 = Range(&p, "aten::mm", 10 * kMs, 11 * kMs);
  const uint32_t mm2 = Range(&p, "aten::mm", 20 * kMs, 22 * kMs);
  const uint32_t mm3 = Range(&p, "aten::mm", 30 * kMs, 30100 * kUs);
  PythonSamples s = Samples();
  Sample(&s, 10500 * kUs, kA);
  Sample(&s, 20200 * kUs, kA);
  Sample(&s, 20900 * kUs, kB);

  const RangeStacks r = StacksOfRanges(p, s, 5);
  const std::vector<std::string> attention = {kAttention, kMain, kModule};
  EXPECT_EQ(KeyOf(r, linear), attention);  // 10.5 ms, the middle of 9.8..11.2 exactly
  EXPECT_EQ(KeyOf(r, mm1), attention);
  EXPECT_EQ(KeyOf(r, mm2), (std::vector<std::string>{kMlp, kMain, kModule}));
  EXPECT_EQ(KeyOf(r, mm3), std::vector<std::string>{kNotSampledKey});
  EXPECT_EQ(r.grouped, 4u);
  EXPECT_EQ(r.inside, 3u);
  EXPECT_EQ(r.near_start, 0u);
  EXPECT_EQ(r.not_sampled, 1u);

  KeyAveragesOptions o;
  o.stacks = &r;
  const std::vector<EventStats> rows = KeyAverages(p, o);
  ASSERT_EQ(rows.size(), 4u);  // linear; mm x attention, mlp, not sampled
  const EventStats* a = Row(rows, "aten::mm", kAttention);
  const EventStats* m = Row(rows, "aten::mm", kMlp);
  const EventStats* n = Row(rows, "aten::mm", kNotSampledKey);
  const EventStats* l = Row(rows, "aten::linear", kAttention);
  ASSERT_TRUE(a && m && n && l);
  EXPECT_EQ(a->count, 1u);
  EXPECT_EQ(a->cpu_total_ns, 1 * kMs);
  EXPECT_EQ(a->self_cpu_ns, 1 * kMs);
  EXPECT_EQ(m->count, 1u);
  EXPECT_EQ(m->cpu_total_ns, 2 * kMs);
  EXPECT_EQ(n->count, 1u);
  EXPECT_EQ(n->cpu_total_ns, 100 * kUs);
  // linear: 1.4 ms, of which its mm child took 1 ms: as without grouping.
  EXPECT_EQ(l->cpu_total_ns, 1400 * kUs);
  EXPECT_EQ(l->self_cpu_ns, 400 * kUs);

  // Ungrouped, the same profile has one aten::mm row with the sums of the three.
  const std::vector<EventStats> plain = KeyAverages(p);
  const EventStats* all = Row(plain, "aten::mm", "");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->count, 3u);
  EXPECT_EQ(all->cpu_total_ns, a->cpu_total_ns + m->cpu_total_ns + n->cpu_total_ns);
}

// No sample inside: the nearest within one period (1 ms) of the start, before or after it.
// Range 40.0..40.3 ms: samples at 38.9 ms (1.1 ms before: too far) and 40.8 ms (0.8 ms after the
// start): kB. Range 50.0..50.2 ms: 49.4 ms (0.6 before, kA) beats 50.7 ms (0.7 after, kB).
TEST(OpStacks, WithNoSampleInsideTheNearestWithinOnePeriodOfTheStartIsTaken) {
  Profile p;
  const uint32_t r1 = Range(&p, "aten::add", 40 * kMs, 40300 * kUs);
  const uint32_t r2 = Range(&p, "aten::add", 50 * kMs, 50200 * kUs);
  PythonSamples s = Samples();
  Sample(&s, 38900 * kUs, kA);
  Sample(&s, 40800 * kUs, kB);
  Sample(&s, 49400 * kUs, kA);
  Sample(&s, 50700 * kUs, kB);
  const RangeStacks r = StacksOfRanges(p, s, 5);
  EXPECT_EQ(KeyOf(r, r1)[0], kMlp);
  EXPECT_EQ(KeyOf(r, r2)[0], kAttention);
  EXPECT_EQ(r.near_start, 2u);
  EXPECT_EQ(r.inside, 0u);
}

// N keeps the innermost N frames of the program's code: the key of kC is attention, forward,
// main, <module> (torch's _call_impl between forward and attention is left out).
TEST(OpStacks, TheKeyIsTheInnermostNProgramFramesWithTorchAndGprofFramesLeftOut) {
  Profile p;
  const uint32_t via_layer = Range(&p, "aten::mm", 10 * kMs, 11 * kMs);
  const uint32_t direct = Range(&p, "aten::mm", 20 * kMs, 21 * kMs);
  const uint32_t in_hook = Range(&p, "aten::zeros", 30 * kMs, 31 * kMs);
  const uint32_t only_torch = Range(&p, "aten::zeros", 40 * kMs, 41 * kMs);
  PythonSamples s = Samples();
  Sample(&s, 10500 * kUs, kC);
  Sample(&s, 20500 * kUs, kA);
  Sample(&s, 30500 * kUs, kD);
  Sample(&s, 40500 * kUs, kE);

  const RangeStacks five = StacksOfRanges(p, s, 5);
  EXPECT_EQ(KeyOf(five, via_layer),
            (std::vector<std::string>{kAttention, kForward, kMain, kModule}));
  EXPECT_EQ(KeyOf(five, in_hook), std::vector<std::string>{kModule});
  EXPECT_EQ(KeyOf(five, only_torch), std::vector<std::string>{kTorchCall});  // nothing else

  const RangeStacks two = StacksOfRanges(p, s, 2);
  EXPECT_EQ(KeyOf(two, via_layer), (std::vector<std::string>{kAttention, kForward}));
  EXPECT_EQ(KeyOf(two, direct), (std::vector<std::string>{kAttention, kMain}));

  // With N = 1 both mm calls have the key {attention}: one row of two calls; with N = 2, two.
  KeyAveragesOptions o;
  const RangeStacks one = StacksOfRanges(p, s, 1);
  o.stacks = &one;
  std::vector<EventStats> rows = KeyAverages(p, o);
  const EventStats* mm = Row(rows, "aten::mm", kAttention);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->count, 2u);
  EXPECT_EQ(mm->stack, std::vector<std::string>{kAttention});
  o.stacks = &two;
  rows = KeyAverages(p, o);
  size_t mm_rows = 0;
  for (const EventStats& e : rows) mm_rows += e.name == "aten::mm" ? 1 : 0;
  EXPECT_EQ(mm_rows, 2u);

  EXPECT_TRUE(IsProgramFrame("/w/torch_utils.py"));
  EXPECT_TRUE(IsProgramFrame("/home/u/torch/model.py"));  // a folder named torch of the user's
  EXPECT_FALSE(IsProgramFrame("/usr/lib/python3/dist-packages/torch/functional.py"));
  EXPECT_FALSE(IsProgramFrame("/venv/lib/python3.11/site-packages/torch/_tensor.py"));
  EXPECT_FALSE(IsProgramFrame("/x/python/gprof_run_hook/sitecustomize.py"));
}

// Not grouped: steps, ranges on a thread with no samples, and ranges of a thread the sampler
// could not name (tid 0 samples match nothing).
TEST(OpStacks, StepsAndRangesOfUnsampledThreadsHaveNoKey) {
  Profile p;
  const uint32_t step = Range(&p, "ProfilerStep#3", 0, 100 * kMs, kTid, kRangeStep);
  const uint32_t other = Range(&p, "aten::mm", 10 * kMs, 11 * kMs, /*tid=*/200);
  const uint32_t op = Range(&p, "aten::mm", 10 * kMs, 11 * kMs);
  PythonSamples s = Samples();
  Sample(&s, 10500 * kUs, kA);
  Sample(&s, 10500 * kUs, kB, /*thread=*/1);  // tid 0
  const RangeStacks r = StacksOfRanges(p, s, 5);
  EXPECT_EQ(r.of_range[step], kNoStackKey);
  EXPECT_EQ(r.of_range[other], kNoStackKey);
  EXPECT_EQ(KeyOf(r, op)[0], kAttention);
  EXPECT_EQ(r.grouped, 1u);
  KeyAveragesOptions o;
  o.stacks = &r;
  const std::vector<EventStats> rows = KeyAverages(p, o);
  const EventStats* unsampled = Row(rows, "aten::mm", "");
  ASSERT_NE(unsampled, nullptr);
  EXPECT_EQ(unsampled->count, 1u);
  EXPECT_TRUE(Row(rows, "ProfilerStep*", "") != nullptr);
}

// torch's layout (autograd/profiler_util.py _build_table): a "Source Location" column, left
// aligned, as wide as the longest entry + 4 (at most 75); the row shows the innermost entry, one
// line per further entry follows with the other cells empty, then an empty line. A longer entry
// keeps its last 75 characters, the first three replaced by "...". The note above the table
// says that it is sampled.
TEST(OpStacks, TheTableHasTorchsSourceLocationColumnAndSaysItIsSampled) {
  Profile p;
  Range(&p, "aten::mm", 10 * kMs, 11 * kMs);
  Range(&p, "aten::mm", 20 * kMs, 22 * kMs);
  PythonSamples s = Samples();
  const std::string long_file = "/w/" + std::string(80, 'd') + "/deep.py";
  s.frames.push_back({long_file, "leaf", 1, 2});
  s.stacks.push_back({0, 7});  // <module> -> leaf in the long path
  Sample(&s, 10500 * kUs, kA);
  Sample(&s, 21 * kMs, static_cast<Stack>(5));
  const RangeStacks r = StacksOfRanges(p, s, 5);
  TableOptions options;
  options.group_by_stack = 5;
  const TableRows rows = SortedTableRows(p, options, &r);
  EXPECT_TRUE(rows.by_stack);
  const std::string table = RenderTable(p, options, rows);

  std::vector<std::string> lines;
  for (size_t at = 0; at < table.size();) {
    const size_t end = table.find('\n', at);
    lines.push_back(table.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_GE(lines.size(), 12u) << table;
  EXPECT_NE(lines[0].find("SAMPLED at 1000 Hz, not exact"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("0 of 2 ranges were not sampled"), std::string::npos) << lines[0];
  // Columns: name (12 = "aten::mm" + 4), six of 12, Source Location 75 (capped); each + 2.
  const size_t source_at = 12 + 2 + 6 * (12 + 2);
  EXPECT_EQ(lines[2].substr(source_at), "Source Location" + std::string(75 - 15 + 2, ' '));
  // Sorted by self CPU: the 2 ms call (the long path) first.
  const std::string trimmed = "..." + ("/w/" + std::string(80, 'd') + "/deep.py(2): leaf")
                                          .substr(3 + 80 + 17 - 75 + 3);
  ASSERT_EQ(trimmed.size(), 75u);
  EXPECT_EQ(lines[4].substr(0, 12), "    aten::mm");
  EXPECT_EQ(lines[4].substr(source_at), trimmed + "  ");
  EXPECT_EQ(lines[5],
            std::string(source_at, ' ') + kModule + std::string(75 - kModule.size() + 2, ' '));
  EXPECT_EQ(lines[6], std::string(source_at + 75 + 2, ' '));  // the empty line after the row
  EXPECT_EQ(lines[7].substr(0, 12), "    aten::mm");
  EXPECT_EQ(lines[7].substr(source_at, kAttention.size()), kAttention);
  EXPECT_EQ(lines[8].substr(source_at, kMain.size()), kMain);
  EXPECT_EQ(lines[9].substr(source_at, kModule.size()), kModule);
  EXPECT_EQ(lines[10], std::string(source_at + 75 + 2, ' '));
  EXPECT_EQ(lines[11].substr(0, 3), "---");

  // Without stacks the same options make the plain table: no note, no column.
  const std::string plain = RenderTable(p, options);
  EXPECT_EQ(plain.find("Source Location"), std::string::npos);
  EXPECT_EQ(plain.rfind("---", 0), 0u);
}


// A run read segment by segment (segment_rows.h, GroupByStack) groups its rows as the whole
// profile does. 4 segments of 10 ms on thread kTid: in segment s (times from s * 10 ms),
// "attention" [1, 3] ms with a kA sample at 2 ms and "mlp" [5, 7] ms with a kB sample at 6 ms;
// "outer" [0, 39] ms, stored in the last segment, spans all four (a long range): its middle,
// 19.5 ms, is nearest the kA sample at 22 ms. With depth 2: attention x 4 and outer under
// (attention, main), mlp x 4 under (mlp, main); 9 ranges grouped, all with a sample inside.
TEST(OpStacks, ARunReadInSegmentsIsGroupedAsTheWholeProfile) {
  PythonSamples s = Samples();
  Profile whole, tables;
  std::vector<Profile> segments(4);
  const auto add = [&](uint32_t segment, const char* name, uint64_t start, uint64_t end) {
    Range(&whole, name, start, end);
    Range(&segments[segment], name, start, end);
  };
  for (uint32_t k = 0; k < 4; ++k) {
    const uint64_t b = k * 10 * kMs;
    add(k, "attention", b + 1 * kMs, b + 3 * kMs);
    add(k, "mlp", b + 5 * kMs, b + 7 * kMs);
    Sample(&s, b + 2 * kMs, kA);
    Sample(&s, b + 6 * kMs, kB);
  }
  add(3, "outer", 0, 39 * kMs);
  // The segments' names are ids into the run's tables: the same order of interning.
  for (const char* name : {"attention", "mlp", "outer"}) tables.strings.Intern(name);
  for (Profile& seg : segments) {
    for (HostRange& r : seg.ranges) r.name = tables.strings.Intern(seg.strings.Get(r.name));
  }
  SortRangesAndMarks(&whole);

  LongRangeFinder finder;
  for (const Profile& seg : segments) finder.Add(seg);
  SegmentedKeyAverages segmented(KeyAveragesOptions{}, finder.Take());
  segmented.GroupByStack(&s, 2);
  for (const Profile& seg : segments) segmented.Add(seg, &tables);
  const std::vector<EventStats> rows = segmented.Rows();

  const RangeStacks stacks = StacksOfRanges(whole, s, 2);
  KeyAveragesOptions options;
  options.stacks = &stacks;
  const std::vector<EventStats> expected = KeyAverages(whole, options);
  ASSERT_EQ(rows.size(), expected.size());
  for (const EventStats& e : expected) {
    const EventStats* r = Row(rows, e.name, e.stack.empty() ? "" : e.stack[0]);
    ASSERT_NE(r, nullptr) << e.name;
    EXPECT_EQ(r->stack, e.stack) << e.name;
    EXPECT_EQ(r->count, e.count) << e.name;
    EXPECT_EQ(r->cpu_total_ns, e.cpu_total_ns) << e.name;
    EXPECT_EQ(r->self_cpu_ns, e.self_cpu_ns) << e.name;
  }
  const std::vector<std::string> attention = {kAttention, kMain}, mlp = {kMlp, kMain};
  ASSERT_NE(Row(rows, "attention", kAttention), nullptr);
  EXPECT_EQ(Row(rows, "attention", kAttention)->count, 4u);
  EXPECT_EQ(Row(rows, "attention", kAttention)->stack, attention);
  ASSERT_NE(Row(rows, "mlp", kMlp), nullptr);
  EXPECT_EQ(Row(rows, "mlp", kMlp)->count, 4u);
  EXPECT_EQ(Row(rows, "mlp", kMlp)->stack, mlp);
  ASSERT_NE(Row(rows, "outer", kAttention), nullptr);
  EXPECT_EQ(Row(rows, "outer", kAttention)->count, 1u);
  EXPECT_EQ(Row(rows, "outer", kAttention)->self_cpu_ns, 39 * kMs - 8 * 2 * kMs);
  const RangeStacks counts = segmented.StackCounts();
  EXPECT_EQ(counts.grouped, 9u);
  EXPECT_EQ(counts.inside, 9u);
  EXPECT_EQ(counts.not_sampled, 0u);
  EXPECT_EQ(counts.hz, 1000u);
}


// The by-name rows of a grouped table (report.html's op table in a segmented render) are its
// rows merged over their stacks: aten::mm under two stacks (2 calls, 10 us self; 1 call, 5 us)
// is one row of 3 calls and 15 us; aten::add, never grouped, stays as it is; ordered by name.
TEST(OpStacks, RowsWithoutStacksMergeEachNamesStacks) {
  EventStats mm_a, mm_b, add;
  mm_a.name = mm_b.name = "aten::mm", add.name = "aten::add";
  mm_a.kind = mm_b.kind = add.kind = RowKind::kRange;
  mm_a.stack = {kAttention, kMain}, mm_b.stack = {kMlp, kMain};
  mm_a.count = 2, mm_a.self_cpu_ns = mm_a.cpu_total_ns = 10 * kUs;
  mm_b.count = 1, mm_b.self_cpu_ns = mm_b.cpu_total_ns = 5 * kUs;
  add.count = 4, add.self_cpu_ns = add.cpu_total_ns = 8 * kUs;
  const std::vector<EventStats> merged = RowsWithoutStacks({mm_a, add, mm_b});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].name, "aten::add");
  EXPECT_EQ(merged[0].count, 4u);
  EXPECT_EQ(merged[1].name, "aten::mm");
  EXPECT_TRUE(merged[1].stack.empty());
  EXPECT_EQ(merged[1].count, 3u);
  EXPECT_EQ(merged[1].self_cpu_ns, 15 * kUs);
  EXPECT_EQ(merged[1].cpu_total_ns, 15 * kUs);
}

}  // namespace
}  // namespace gprof
