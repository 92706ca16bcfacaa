// Unit tests of the profile diff: small Profiles built by hand, every expected number derived by
// hand in the comment next to it.
#include "analysis/tables/diff.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/tables/key_averages.h"

namespace gprof {
namespace {

constexpr uint64_t t0 = 1'000'000;

// Kernels named `name`, one per duration, laid end to end from `*at` (ns after t0).
void AddKernels(Profile* p, const std::string& name, const std::vector<uint64_t>& durations,
                uint64_t* at) {
  if (p->launch_configs.empty()) p->launch_configs.push_back(LaunchConfig{});
  const StringId id = p->strings.Intern(name);
  for (uint64_t d : durations) {
    p->kernels.push_back({t0 + *at, t0 + *at + d, 0, id, 0, 7});
    *at += d;
  }
}

// A: gemm 100, 100, 200, 300, 300 (5, total 1000, median 200); relu 50, 70 (2, 120, median 60);
//    old_kernel 400 (1).
// B: gemm 50, 50, 100, 100, 200 (5, total 500, median 100); relu 50, 90 (2, 140, median 70);
//    new_kernel 10 x 6 (6, total 60, median 10).
Profile KernelsA() {
  Profile p;
  uint64_t at = 0;
  AddKernels(&p, "gemm", {100, 100, 200, 300, 300}, &at);
  AddKernels(&p, "relu", {50, 70}, &at);
  AddKernels(&p, "old_kernel", {400}, &at);
  return p;
}
Profile KernelsB() {
  Profile p;
  uint64_t at = 0;
  AddKernels(&p, "gemm", {50, 50, 100, 100, 200}, &at);
  AddKernels(&p, "relu", {50, 90}, &at);
  AddKernels(&p, "new_kernel", {10, 10, 10, 10, 10, 10}, &at);
  return p;
}

const DiffRow* Find(const ProfileDiff& d, DiffKind kind, const std::string& name) {
  for (const DiffRow& r : d.rows) {
    if (r.kind == kind && r.name == name) return &r;
  }
  return nullptr;
}

TEST(Diff, CountsTotalsMediansDeltaAndRatioPerKernel) {
  const ProfileDiff d = DiffProfiles(KernelsA(), KernelsB());
  const DiffRow* gemm = Find(d, DiffKind::kKernel, "gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->a.count, 5u);
  EXPECT_EQ(gemm->b.count, 5u);
  EXPECT_EQ(gemm->a.total_ns, 1000u);
  EXPECT_EQ(gemm->b.total_ns, 500u);
  EXPECT_DOUBLE_EQ(gemm->a.median_ns, 200.0);
  EXPECT_DOUBLE_EQ(gemm->b.median_ns, 100.0);
  EXPECT_EQ(gemm->DeltaNs(), -500);  // 500 - 1000
  ASSERT_TRUE(gemm->Ratio().has_value());
  EXPECT_DOUBLE_EQ(*gemm->Ratio(), 0.5);  // 500 / 1000
  EXPECT_FALSE(gemm->noisy);              // 5 instances on both sides
  const DiffRow* relu = Find(d, DiffKind::kKernel, "relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_DOUBLE_EQ(relu->a.median_ns, 60.0);  // even count: (50 + 70) / 2
  EXPECT_DOUBLE_EQ(relu->b.median_ns, 70.0);  // (50 + 90) / 2
  EXPECT_EQ(relu->DeltaNs(), 20);             // 140 - 120
  EXPECT_DOUBLE_EQ(*relu->Ratio(), 140.0 / 120.0);
}

TEST(Diff, RowsAreSortedByAbsoluteChangeOfTotalLargestFirst) {
  const ProfileDiff d = DiffProfiles(KernelsA(), KernelsB());
  // |delta|: gemm 500, old_kernel 400, new_kernel 60, relu 20.
  ASSERT_EQ(d.rows.size(), 4u);
  EXPECT_EQ(d.rows[0].name, "gemm");
  EXPECT_EQ(d.rows[1].name, "old_kernel");
  EXPECT_EQ(d.rows[2].name, "new_kernel");
  EXPECT_EQ(d.rows[3].name, "relu");
}

TEST(Diff, RowsInOneProfileOnlyHaveCountZeroOnTheOtherSideAndNoRatioWhenANeverRan) {
  const ProfileDiff d = DiffProfiles(KernelsA(), KernelsB());
  const DiffRow* old_kernel = Find(d, DiffKind::kKernel, "old_kernel");
  const DiffRow* new_kernel = Find(d, DiffKind::kKernel, "new_kernel");
  ASSERT_NE(old_kernel, nullptr);
  ASSERT_NE(new_kernel, nullptr);
  EXPECT_TRUE(old_kernel->OnlyInA());
  EXPECT_FALSE(old_kernel->OnlyInB());
  EXPECT_EQ(old_kernel->b.count, 0u);
  EXPECT_EQ(old_kernel->DeltaNs(), -400);
  EXPECT_DOUBLE_EQ(*old_kernel->Ratio(), 0.0);  // 0 / 400
  EXPECT_TRUE(new_kernel->OnlyInB());
  EXPECT_EQ(new_kernel->b.total_ns, 60u);
  EXPECT_FALSE(new_kernel->Ratio().has_value());  // 60 / 0
}

TEST(Diff, NoiseFlagOnFewerThanFiveInstancesInAProfileThatHasTheRow) {
  const ProfileDiff d = DiffProfiles(KernelsA(), KernelsB());
  EXPECT_TRUE(Find(d, DiffKind::kKernel, "relu")->noisy);         // 2 and 2
  EXPECT_TRUE(Find(d, DiffKind::kKernel, "old_kernel")->noisy);   // 1 in A, absent from B
  EXPECT_FALSE(Find(d, DiffKind::kKernel, "new_kernel")->noisy);  // 6 in B, absent from A
  EXPECT_FALSE(Find(d, DiffKind::kKernel, "gemm")->noisy);        // 5 and 5
}

// One thread:
//   train           NVTX   [0, 1000)
//   ProfilerStep#1  NVTX   [0, 500)
//   aten::add       op     [0, 100), with aten::add [10, 90) its only child: folded into it
//   aten::mm        op     [200, 400), holding cudaLaunchKernel [250, 260)
//   aten::mm        op     [600, 650)
//   load            StartEnd [700, 900)
Profile HostProfile() {
  Profile p;
  const uint32_t tid = 1;
  const auto range = [&](uint64_t start, uint64_t end, const char* name, uint16_t flags) {
    p.ranges.push_back({t0 + start, t0 + end, p.strings.Intern(name), tid, 0, flags, 0});
  };
  const uint16_t op = kRangeTorch | kRangeCpuOp;
  range(0, 1000, "train", 0);
  range(0, 500, "ProfilerStep#1", 0);
  range(0, 100, "aten::add", op);
  range(10, 90, "aten::add", op);
  range(200, 400, "aten::mm", op);
  range(600, 650, "aten::mm", op);
  range(700, 900, "load", kRangeStartEnd);
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.api_calls.push_back({t0 + 250, t0 + 260, 1, tid, 211, ApiDomain::kRuntime, 0, 0});
  return p;
}

TEST(Diff, HostRowsAreOpsOrRangesNamedAsTheTableAndAFoldedSelfCallCountsOnce) {
  const ProfileDiff d = DiffProfiles(HostProfile(), HostProfile());
  const DiffRow* add = Find(d, DiffKind::kOp, "aten::add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->a.count, 1u);  // the inner aten::add is folded into the outer one
  EXPECT_EQ(add->a.total_ns, 100u);
  const DiffRow* mm = Find(d, DiffKind::kOp, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->a.count, 2u);
  EXPECT_EQ(mm->a.total_ns, 250u);          // 200 + 50
  EXPECT_DOUBLE_EQ(mm->a.median_ns, 125.0);  // (50 + 200) / 2
  EXPECT_EQ(Find(d, DiffKind::kOp, "cudaLaunchKernel")->a.total_ns, 10u);
  EXPECT_EQ(Find(d, DiffKind::kRange, "train")->a.total_ns, 1000u);
  EXPECT_EQ(Find(d, DiffKind::kRange, "ProfilerStep*")->a.total_ns, 500u);
  EXPECT_EQ(Find(d, DiffKind::kRange, "load")->a.total_ns, 200u);
  EXPECT_EQ(d.rows.size(), 6u);
  for (const DiffRow& r : d.rows) {
    EXPECT_EQ(r.DeltaNs(), 0) << r.name;
    EXPECT_DOUBLE_EQ(*r.Ratio(), 1.0) << r.name;
  }
}

TEST(Diff, HostCountsAndTotalsEqualKeyAveragesCountAndCpuTotal) {
  Profile p = HostProfile();
  p.steps.push_back({t0 + 500, t0 + 1000, 2, 1});  // a Profile::steps step joins ProfilerStep*
  const ProfileDiff d = DiffProfiles(p, Profile());
  size_t host_rows = 0;
  for (const EventStats& e : KeyAverages(p)) {
    if (e.device) continue;
    ++host_rows;
    const DiffRow* op = Find(d, DiffKind::kOp, e.name);
    const DiffRow* range = Find(d, DiffKind::kRange, e.name);
    const DiffRow* r = op != nullptr ? op : range;
    ASSERT_NE(r, nullptr) << e.name;
    EXPECT_EQ(r->a.count, e.count) << e.name;
    EXPECT_EQ(r->a.total_ns, e.cpu_total_ns) << e.name;
  }
  EXPECT_EQ(host_rows, d.rows.size());
  EXPECT_EQ(Find(d, DiffKind::kRange, "ProfilerStep*")->a.count, 2u);  // [0,500) and [500,1000)
}

// Totals: wall = union of [start, end) of the profiles; GPU busy = union of the GPU intervals.
TEST(Diff, TotalsAreWallUnionGpuBusyUnionKernelCountAndSelfCpuTotal) {
  Profile a;
  a.info.start_ns = t0;
  a.info.end_ns = t0 + 10'000;
  a.launch_configs.push_back(LaunchConfig{});
  const StringId k = a.strings.Intern("k");
  a.kernels.push_back({t0 + 0, t0 + 100, 0, k, 0, 7});
  a.kernels.push_back({t0 + 50, t0 + 150, 0, k, 0, 8});  // overlaps: [0,150) busy
  Memcpy m{};
  m.start_ns = t0 + 200;
  m.end_ns = t0 + 300;
  a.memcpys.push_back(m);  // +100: busy 250
  a.ranges.push_back({t0 + 0, t0 + 1000, a.strings.Intern("r"), 1, 0, 0, 0});
  a.api_names.push_back({211, ApiDomain::kRuntime, 0, a.strings.Intern("cudaLaunchKernel")});
  a.api_calls.push_back({t0 + 100, t0 + 300, 1, 1, 211, ApiDomain::kRuntime, 0, 0});
  a.api_calls.push_back({t0 + 2000, t0 + 2100, 2, 1, 211, ApiDomain::kRuntime, 0, 0});
  // Self CPU: r 1000 - 200 = 800, the nested call 200, the root call 100 -> 1100.
  DiffInput in_a, in_b;
  in_a.Add(a);
  Profile w1, w2;  // two windows of B: [0, 4000) and [3000, 5000) overlap -> 5000
  w1.info.start_ns = t0;
  w1.info.end_ns = t0 + 4000;
  w2.info.start_ns = t0 + 3000;
  w2.info.end_ns = t0 + 5000;
  in_b.Add(w1);
  in_b.Add(w2);
  const ProfileDiff d = DiffProfiles(in_a, in_b);
  EXPECT_EQ(d.a.profiles, 1);
  EXPECT_EQ(d.a.wall_ns, 10'000u);
  EXPECT_EQ(d.a.gpu_busy_ns, 250u);
  EXPECT_EQ(d.a.kernels, 2u);
  EXPECT_EQ(d.a.self_cpu_ns, 1100u);
  EXPECT_EQ(d.b.profiles, 2);
  EXPECT_EQ(d.b.wall_ns, 5000u);
  EXPECT_EQ(d.b.gpu_busy_ns, 0u);
  EXPECT_TRUE(d.findings_appeared.empty());  // the hook: Findings do not exist yet
}

TEST(Diff, KeepOnlyKindDropsTheOtherKindsRowsAndSections) {
  Profile a = KernelsA();
  Profile host = HostProfile();
  ProfileDiff d = DiffProfiles(a, host);
  KeepOnlyKind(&d, DiffKind::kOp);
  ASSERT_EQ(d.kinds.size(), 1u);
  for (const DiffRow& r : d.rows) EXPECT_EQ(r.kind, DiffKind::kOp) << r.name;
  EXPECT_EQ(d.rows.size(), 3u);  // aten::add, aten::mm, cudaLaunchKernel
  const std::string table = FormatDiffTable(d);
  EXPECT_NE(table.find("Host ops"), std::string::npos);
  EXPECT_EQ(table.find("GPU kernels"), std::string::npos);
}

TEST(Diff, CsvHasOneLinePerRowInTableOrderWithNotes) {
  const ProfileDiff d = DiffProfiles(KernelsA(), KernelsB());
  EXPECT_EQ(FormatDiffCsv(d),
            "kind,name,count_a,count_b,total_a_ns,total_b_ns,delta_ns,ratio,median_a_ns,"
            "median_b_ns,note\n"
            "kernel,gemm,5,5,1000,500,-500,0.500,200.0,100.0,\n"
            "kernel,old_kernel,1,0,400,0,-400,0.000,400.0,0.0,only in A; few\n"
            "kernel,new_kernel,0,6,0,60,60,,0.0,10.0,only in B\n"
            "kernel,relu,2,2,120,140,20,1.167,60.0,70.0,few\n");
}

TEST(Diff, JsonHasTotalsAndRowsWithNullRatioWhenANeverRan) {
  ProfileDiff d = DiffProfiles(KernelsA(), KernelsB());
  d.label_a = "before";
  const nlohmann::json doc = nlohmann::json::parse(FormatDiffJson(d));
  EXPECT_EQ(doc["a"]["label"], "before");
  // Kernels: A 8 (5 + 2 + 1), B 13 (5 + 2 + 6): delta 5.
  EXPECT_EQ(doc["totals"]["kernels"]["a"], 8);
  EXPECT_EQ(doc["totals"]["kernels"]["b"], 13);
  EXPECT_EQ(doc["totals"]["kernels"]["delta"], 5);
  ASSERT_EQ(doc["rows"].size(), 4u);
  EXPECT_EQ(doc["rows"][0]["name"], "gemm");
  EXPECT_EQ(doc["rows"][0]["delta_ns"], -500);
  EXPECT_EQ(doc["rows"][2]["name"], "new_kernel");
  EXPECT_TRUE(doc["rows"][2]["ratio"].is_null());
  EXPECT_EQ(doc["rows"][2]["only_in"], "B");
  EXPECT_TRUE(doc["rows"][0]["only_in"].is_null());
  EXPECT_EQ(doc["rows"][3]["noisy"], true);
}

TEST(Diff, TableShowsSignedDeltasRatiosNotesAndTheNoiseFootnote) {
  const std::string table = FormatDiffTable(DiffProfiles(KernelsA(), KernelsB()));
  EXPECT_NE(table.find("-0.500us  0.50x"), std::string::npos) << table;   // gemm
  EXPECT_NE(table.find("+0.060us      -"), std::string::npos) << table;  // new_kernel
  EXPECT_NE(table.find("only in A; few  old_kernel"), std::string::npos) << table;
  EXPECT_NE(table.find("few: fewer than 5 instances"), std::string::npos) << table;
  EXPECT_NE(table.find("Ranges (NVTX ranges, torch annotations, steps), by change of total\n"
                       "  (none in either profile)"),
            std::string::npos)
      << table;
}

// Findings (findings.h) that one side has and the other has not: B adds three async copies from
// pageable memory (pageable_memcpy's pattern, present from one copy on); A has none.
TEST(Diff, FindingsOnlyInBAppearAndOnlyInADisappear) {
  Profile a = KernelsA();
  Profile b = KernelsA();
  for (uint32_t i = 0; i < 3; ++i) {
    Memcpy m{};
    m.start_ns = b.kernels.front().start_ns + i * 1'000;
    m.end_ns = m.start_ns + 500;
    m.bytes = 4096;
    m.stream_id = 7;
    m.kind = CopyKind::kHtoD;
    m.src_kind = MemKind::kPageable;
    m.dst_kind = MemKind::kDevice;
    m.is_async = 1;
    b.memcpys.push_back(m);
  }
  const ProfileDiff d = DiffProfiles(a, b);
  EXPECT_EQ(d.findings_appeared, std::vector<std::string>{"pageable_memcpy"});
  EXPECT_TRUE(d.findings_disappeared.empty());
  EXPECT_NE(FormatDiffTable(d).find("Findings only in B: pageable_memcpy\n"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(FormatDiffJson(d));
  EXPECT_EQ(j["findings"]["appeared"], nlohmann::json::array({"pageable_memcpy"}));
  const ProfileDiff back = DiffProfiles(b, a);
  EXPECT_EQ(back.findings_disappeared, std::vector<std::string>{"pageable_memcpy"});
}

}  // namespace
}  // namespace gprof
