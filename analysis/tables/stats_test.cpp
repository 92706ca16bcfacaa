// Unit tests of the nsys-style stats reports: a Profile built by hand, every expected value derived
// by hand in the comments next to it.
#include "analysis/tables/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace gprof {
namespace {

constexpr uint64_t t0 = 1'000'000;

// Timeline (ns after t0):
//   API    cudaLaunchKernel (runtime cbid 211) x3: 100, 200, 600 ns; cudaMemcpy (cbid 31): 100
//   GPU    matmul A [100,200) 100   relu [150,650) 500   HtoD 1e6 B [700,800) 100
//          memset 4 B [950,1050) 100   matmul B [1500,1800) 300   HtoD 3e6 B [1700,2000) 300
//          DtoH 5e5 B [2100,2300) 200
//   NVTX   train PushPop [0,1200); ProfilerStep#2 PushPop [1000,2000); load StartEnd [100,400)
//          and [500,1000); mylib:io PushPop [10,110)
//   steps  Profile::steps: step 1 [0,1000); the ProfilerStep#2 range is step 2
Profile HandProfile() {
  Profile p;
  p.info.pid = 42;
  const uint32_t tid = 42;
  p.domains.push_back(p.strings.Intern("mylib"));  // domain 1
  const StringId launch = p.strings.Intern("cudaLaunchKernel");
  const StringId memcpy_name = p.strings.Intern("cudaMemcpy");
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, launch});
  p.api_names.push_back({31, ApiDomain::kRuntime, 0, memcpy_name});
  p.api_calls.push_back({t0 + 0, t0 + 100, 1, tid, 211, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({t0 + 1000, t0 + 1200, 2, tid, 211, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({t0 + 1300, t0 + 1900, 3, tid, 211, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({t0 + 600, t0 + 700, 4, tid, 31, ApiDomain::kRuntime, 0, 0});

  p.launch_configs.push_back(LaunchConfig{});
  const StringId matmul = p.strings.Intern("_Z6matmulPfS_S_i");
  const StringId relu = p.strings.Intern("relu");
  p.kernels.push_back({t0 + 100, t0 + 200, 1, matmul, 0, 7});
  p.kernels.push_back({t0 + 150, t0 + 650, 1, relu, 0, 8});
  p.kernels.push_back({t0 + 1500, t0 + 1800, 2, matmul, 0, 7});
  auto copy = [&](uint64_t start, uint64_t end, uint64_t bytes, CopyKind kind) {
    Memcpy m{};
    m.start_ns = t0 + start;
    m.end_ns = t0 + end;
    m.bytes = bytes;
    m.kind = kind;
    p.memcpys.push_back(m);
  };
  copy(700, 800, 1'000'000, CopyKind::kHtoD);
  copy(1700, 2000, 3'000'000, CopyKind::kHtoD);
  copy(2100, 2300, 500'000, CopyKind::kDtoH);
  Memset ms{};
  ms.start_ns = t0 + 950;
  ms.end_ns = t0 + 1050;
  ms.bytes = 4;
  p.memsets.push_back(ms);

  p.ranges.push_back({t0 + 0, t0 + 1200, p.strings.Intern("train"), tid, 0, 0, 0});
  p.ranges.push_back({t0 + 1000, t0 + 2000, p.strings.Intern("ProfilerStep#2"), tid, 0, 0, 0});
  const StringId load = p.strings.Intern("load");
  p.ranges.push_back({t0 + 100, t0 + 400, load, tid, 0, kRangeStartEnd, 0});
  p.ranges.push_back({t0 + 500, t0 + 1000, load, tid, 0, kRangeStartEnd, 0});
  p.ranges.push_back({t0 + 10, t0 + 110, p.strings.Intern("io"), tid, 1, 0, 0});
  p.steps.push_back({t0 + 0, t0 + 1000, 1, tid});
  return p;
}

StatsCollector Collect(const Profile& p) {
  StatsCollector c;
  c.Add(p);
  return c;
}

const std::string kMatmul = "matmul(float*, float*, float*, int)";  // demangled _Z6matmulPfS_S_i

TEST(StatsSummary, ThreeSamplesMedianIsTheMiddleAndStdDevIsSample) {
  std::vector<uint64_t> v = {600, 100, 200};
  const SampleSummary s = SummarizeSamples(&v);
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.total, 900u);
  EXPECT_DOUBLE_EQ(s.avg, 300.0);
  EXPECT_DOUBLE_EQ(s.median, 200.0);
  EXPECT_EQ(s.min, 100u);
  EXPECT_EQ(s.max, 600u);
  // sqrt(((100-300)^2 + (200-300)^2 + (600-300)^2) / (3-1)) = sqrt(140000 / 2) = 264.5751...
  EXPECT_NEAR(s.stddev, 264.5751311, 1e-6);
}

TEST(StatsSummary, EvenCountMedianIsTheMeanOfTheTwoMiddleValuesAndOneSampleHasNoStdDev) {
  std::vector<uint64_t> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(SummarizeSamples(&v).median, 2.5);  // (2 + 3) / 2
  std::vector<uint64_t> one = {7};
  const SampleSummary s = SummarizeSamples(&one);
  EXPECT_DOUBLE_EQ(s.median, 7.0);
  EXPECT_DOUBLE_EQ(s.stddev, 0.0);
  std::vector<uint64_t> none;
  EXPECT_EQ(SummarizeSamples(&none).count, 0u);
  // Huge values: the mean of the middle two must not overflow.
  std::vector<uint64_t> big = {UINT64_MAX - 1, UINT64_MAX - 3};
  EXPECT_DOUBLE_EQ(SummarizeSamples(&big).median, static_cast<double>(UINT64_MAX - 2));
}

TEST(StatsReports, CudaApiSum) {
  const std::vector<StatsRow> rows = Collect(HandProfile()).Rows("cuda_api_sum");
  ASSERT_EQ(rows.size(), 2u);
  // cudaLaunchKernel: 100 + 200 + 600 = 900 of 900 + 100 = 1000 -> 90 %.
  EXPECT_EQ(rows[0].name, "cudaLaunchKernel");
  EXPECT_EQ(rows[0].s.count, 3u);
  EXPECT_EQ(rows[0].s.total, 900u);
  EXPECT_DOUBLE_EQ(rows[0].s.avg, 300.0);
  EXPECT_DOUBLE_EQ(rows[0].s.median, 200.0);
  EXPECT_EQ(rows[0].s.min, 100u);
  EXPECT_EQ(rows[0].s.max, 600u);
  EXPECT_NEAR(rows[0].s.stddev, 264.5751311, 1e-6);
  EXPECT_DOUBLE_EQ(rows[0].percent, 90.0);
  EXPECT_EQ(rows[1].name, "cudaMemcpy");
  EXPECT_EQ(rows[1].s.total, 100u);
  EXPECT_DOUBLE_EQ(rows[1].s.stddev, 0.0);  // one call
  EXPECT_DOUBLE_EQ(rows[1].percent, 10.0);
}

TEST(StatsReports, CudaGpuKernSumUsesDemangledNames) {
  const std::vector<StatsRow> rows = Collect(HandProfile()).Rows("cuda_gpu_kern_sum");
  ASSERT_EQ(rows.size(), 2u);
  // relu 500 of 500 + (100 + 300) = 900 -> 55.55...%; matmul 400 -> 44.44...%.
  EXPECT_EQ(rows[0].name, "relu");
  EXPECT_EQ(rows[0].s.total, 500u);
  EXPECT_NEAR(rows[0].percent, 55.5555556, 1e-6);
  EXPECT_EQ(rows[1].name, kMatmul);
  EXPECT_EQ(rows[1].s.count, 2u);
  EXPECT_EQ(rows[1].s.total, 400u);
  EXPECT_DOUBLE_EQ(rows[1].s.avg, 200.0);
  EXPECT_DOUBLE_EQ(rows[1].s.median, 200.0);  // (100 + 300) / 2
  EXPECT_EQ(rows[1].s.min, 100u);
  EXPECT_EQ(rows[1].s.max, 300u);
  EXPECT_NEAR(rows[1].s.stddev, 141.4213562, 1e-6);  // sqrt((100^2 + 100^2) / 1)
  EXPECT_NEAR(rows[1].percent, 44.4444444, 1e-6);
}

TEST(StatsReports, CudaGpuMemTimeSumNamesOperationsLikeNsys) {
  const std::vector<StatsRow> rows = Collect(HandProfile()).Rows("cuda_gpu_mem_time_sum");
  ASSERT_EQ(rows.size(), 3u);
  // HtoD 100 + 300 = 400, DtoH 200, memset 100; of 700.
  EXPECT_EQ(rows[0].name, "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(rows[0].s.total, 400u);
  EXPECT_EQ(rows[0].s.count, 2u);
  EXPECT_NEAR(rows[0].percent, 57.1428571, 1e-6);
  EXPECT_EQ(rows[1].name, "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(rows[1].s.total, 200u);
  EXPECT_NEAR(rows[1].percent, 28.5714286, 1e-6);
  EXPECT_EQ(rows[2].name, "[CUDA memset]");
  EXPECT_EQ(rows[2].s.total, 100u);
  EXPECT_EQ(MemcpyOperationName(CopyKind::kDtoD), "[CUDA memcpy Device-to-Device]");
  EXPECT_EQ(MemcpyOperationName(CopyKind::kPtoP), "[CUDA memcpy Peer-to-Peer]");
  EXPECT_EQ(MemcpyOperationName(CopyKind::kUnknown), "[CUDA memcpy Unknown]");
}

TEST(StatsReports, CudaGpuMemSizeSumInMegabytes) {
  const StatsTable t = Collect(HandProfile()).Table("cuda_gpu_mem_size_sum");
  ASSERT_EQ(t.rows.size(), 3u);
  // HtoD: 1e6 + 3e6 bytes = 4.0 MB, count 2, avg 2.0, med 2.0, min 1.0, max 3.0,
  // stddev sqrt((1e6^2 + 1e6^2) / 1) / 1e6 = 1.41421... MB.
  const auto& h = t.rows[0];
  EXPECT_DOUBLE_EQ(std::get<double>(h[0]), 4.0);
  EXPECT_EQ(std::get<uint64_t>(h[1]), 2u);
  EXPECT_DOUBLE_EQ(std::get<double>(h[2]), 2.0);
  EXPECT_DOUBLE_EQ(std::get<double>(h[3]), 2.0);
  EXPECT_DOUBLE_EQ(std::get<double>(h[4]), 1.0);
  EXPECT_DOUBLE_EQ(std::get<double>(h[5]), 3.0);
  EXPECT_NEAR(std::get<double>(h[6]), 1.4142136, 1e-6);
  EXPECT_EQ(std::get<std::string>(h[7]), "[CUDA memcpy Host-to-Device]");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[1][0]), 0.5);      // DtoH 5e5 bytes
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[2][0]), 0.000004);  // memset 4 bytes
  EXPECT_EQ(std::get<std::string>(t.rows[2][7]), "[CUDA memset]");
}

TEST(StatsReports, NvtxSumHasStyleAndDomainPrefix) {
  const std::vector<StatsRow> rows = Collect(HandProfile()).Rows("nvtx_sum");
  ASSERT_EQ(rows.size(), 4u);
  // train 1200, ProfilerStep#2 1000, load 300 + 500 = 800, mylib:io 100; of 3100.
  EXPECT_EQ(rows[0].name, "train");
  EXPECT_EQ(rows[0].style, "PushPop");
  EXPECT_NEAR(rows[0].percent, 38.7096774, 1e-6);
  EXPECT_EQ(rows[1].name, "ProfilerStep#2");
  EXPECT_EQ(rows[2].name, "load");
  EXPECT_EQ(rows[2].style, "StartEnd");
  EXPECT_EQ(rows[2].s.count, 2u);
  EXPECT_DOUBLE_EQ(rows[2].s.median, 400.0);
  EXPECT_NEAR(rows[2].s.stddev, 141.4213562, 1e-6);
  EXPECT_EQ(rows[3].name, "mylib:io");
  EXPECT_NEAR(rows[3].percent, 3.2258065, 1e-6);
}

// torch's redispatch: aten::div_ [0,100) whose only child is aten::div_ [10,90) is one op, as
// the table and torch.profiler count it; aten::mul [200,300) with two children (aten::mul
// [210,220), aten::add [230,240)) is not folded. So: aten::div_ 1 of 100 ns, aten::mul 2 (100 and
// 10 ns), aten::add 1.
TEST(StatsReports, NvtxSumCountsATorchOpRedispatchingToItselfOnceAsTheTableDoes) {
  Profile p;
  const StringId div = p.strings.Intern("aten::div_");
  const StringId mul = p.strings.Intern("aten::mul");
  p.ranges.push_back({t0 + 0, t0 + 100, div, 1, 0, 0, 0});
  p.ranges.push_back({t0 + 10, t0 + 90, div, 1, 0, 0, 0});
  p.ranges.push_back({t0 + 200, t0 + 300, mul, 1, 0, 0, 0});
  p.ranges.push_back({t0 + 210, t0 + 220, mul, 1, 0, 0, 0});
  p.ranges.push_back({t0 + 230, t0 + 240, p.strings.Intern("aten::add"), 1, 0, 0, 0});
  std::map<std::string, StatsRow> by_name;
  for (const StatsRow& r : Collect(p).Rows("nvtx_sum")) by_name[r.name] = r;
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name["aten::div_"].s.count, 1u);
  EXPECT_EQ(by_name["aten::div_"].s.total, 100u);
  EXPECT_EQ(by_name["aten::mul"].s.count, 2u);
  EXPECT_EQ(by_name["aten::mul"].s.total, 110u);
  EXPECT_EQ(by_name["aten::add"].s.count, 1u);
}

TEST(StatsReports, StepsFromProfileStepsAndProfilerStepRanges) {
  const std::vector<StepRow> steps = Collect(HandProfile()).Steps();
  ASSERT_EQ(steps.size(), 2u);
  // Step 1 [0,1000): matmul A [100,200) U relu [150,650) = 550, HtoD [700,800) = 100, memset
  // clipped [950,1000) = 50 -> 700 ns busy = 70 %; kernels started: matmul A, relu.
  EXPECT_EQ(steps[0].number, 1u);
  EXPECT_EQ(steps[0].pid, 42u);
  EXPECT_EQ(steps[0].wall_ns, 1000u);
  EXPECT_EQ(steps[0].gpu_busy_ns, 700u);
  EXPECT_DOUBLE_EQ(steps[0].gpu_busy_percent, 70.0);
  EXPECT_EQ(steps[0].kernels, 2u);
  // Step 2 [1000,2000): memset [1000,1050) = 50, matmul B [1500,1800) U HtoD [1700,2000) = 500
  // -> 550 ns = 55 %; kernels: matmul B.
  EXPECT_EQ(steps[1].number, 2u);
  EXPECT_EQ(steps[1].wall_ns, 1000u);
  EXPECT_EQ(steps[1].gpu_busy_ns, 550u);
  EXPECT_DOUBLE_EQ(steps[1].gpu_busy_percent, 55.0);
  EXPECT_EQ(steps[1].kernels, 1u);
}

TEST(StatsReports, AStepRangeWithTheNumberOfAProfileStepIsNotCountedTwice) {
  Profile p = HandProfile();
  // ProfilerStep#1 duplicates Profile::steps' step 1; ProfilerStep#x has no number.
  p.ranges.push_back({t0 + 0, t0 + 900, p.strings.Intern("ProfilerStep#1"), 42, 0, 0, 0});
  p.ranges.push_back({t0 + 0, t0 + 900, p.strings.Intern("ProfilerStep#x"), 42, 0, 0, 0});
  const std::vector<StepRow> steps = Collect(p).Steps();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].wall_ns, 1000u);  // Profile::steps' span, not the range's 900
  EXPECT_EQ(steps[1].number, 2u);
}

TEST(StatsReports, ProfilesArePooled) {
  StatsCollector c;
  c.Add(HandProfile());
  c.Add(HandProfile());
  const std::vector<StatsRow> rows = c.Rows("cuda_api_sum");
  // {100,100,200,200,600,600}: total 1800, med (200+200)/2 = 200, mean 300,
  // stddev sqrt((2*200^2 + 2*100^2 + 2*300^2) / 5) = sqrt(56000) = 236.6431...
  EXPECT_EQ(rows[0].s.count, 6u);
  EXPECT_EQ(rows[0].s.total, 1800u);
  EXPECT_DOUBLE_EQ(rows[0].s.median, 200.0);
  EXPECT_NEAR(rows[0].s.stddev, 236.6431913, 1e-6);
  EXPECT_DOUBLE_EQ(rows[0].percent, 90.0);
  EXPECT_EQ(c.Steps().size(), 4u);
}

TEST(StatsReports, UnknownReportThrows) {
  EXPECT_THROW(Collect(HandProfile()).Rows("cuda_kern_sum"), std::invalid_argument);
  EXPECT_THROW(Collect(HandProfile()).Table("osrt_sum"), std::invalid_argument);
}

TEST(StatsFormat, CsvHeaderAndRowsExact) {
  const StatsCollector c = Collect(HandProfile());
  std::string csv = FormatStatsCsv({c.Table("cuda_api_sum")});
  EXPECT_EQ(csv,
            "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
            "Name\n"
            "90.0,900,3,300.0,200.0,100,600,264.6,cudaLaunchKernel\n"
            "10.0,100,1,100.0,100.0,100,100,0.0,cudaMemcpy\n");
  // A name with commas is quoted.
  csv = FormatStatsCsv({c.Table("cuda_gpu_kern_sum")});
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
            "Name");
  EXPECT_NE(csv.find("44.4,400,2,200.0,200.0,100,300,141.4,\"" + kMatmul + "\"\n"),
            std::string::npos)
      << csv;
  csv = FormatStatsCsv({c.Table("cuda_gpu_mem_time_sum")});
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
            "Operation");
  csv = FormatStatsCsv({c.Table("cuda_gpu_mem_size_sum")});
  EXPECT_EQ(csv,
            "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation\n"
            "4.000000,2,2.000000,2.000000,1.000000,3.000000,1.414214,"
            "[CUDA memcpy Host-to-Device]\n"
            "0.500000,1,0.500000,0.500000,0.500000,0.500000,0.000000,"
            "[CUDA memcpy Device-to-Host]\n"
            "0.000004,1,0.000004,0.000004,0.000004,0.000004,0.000000,[CUDA memset]\n");
  csv = FormatStatsCsv({c.Table("nvtx_sum")});
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
            "Style,Range");
  EXPECT_NE(csv.find("\n25.8,800,2,400.0,400.0,300,500,141.4,StartEnd,load\n"), std::string::npos)
      << csv;
  csv = FormatStatsCsv({c.Table("step_sum")});
  EXPECT_EQ(csv,
            "Step,PID,Wall Time (ns),GPU Busy (ns),GPU Busy (%),Kernels\n"
            "1,42,1000,700,70.0,2\n"
            "2,42,1000,550,55.0,1\n");
  // Several tables: each block starts with its title line.
  csv = FormatStatsCsv({c.Table("cuda_api_sum"), c.Table("nvtx_sum")});
  EXPECT_EQ(csv.rfind(" ** CUDA API Summary (cuda_api_sum):\n\nTime (%),", 0), 0u) << csv;
  EXPECT_NE(csv.find("\n\n ** NVTX Range Summary (nvtx_sum):\n\nTime (%),"), std::string::npos);
}

TEST(StatsFormat, TableLayoutLikeNsys) {
  const StatsCollector c = Collect(HandProfile());
  const std::string text = FormatStatsTables({c.Table("cuda_api_sum")});
  std::istringstream in(text);
  std::string title, blank, header, dashes, row1, row2;
  std::getline(in, title);
  std::getline(in, blank);
  std::getline(in, header);
  std::getline(in, dashes);
  std::getline(in, row1);
  std::getline(in, row2);
  EXPECT_EQ(title, " ** CUDA API Summary (cuda_api_sum):");
  EXPECT_EQ(blank, "");
  EXPECT_EQ(header,
            " Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  "
            "StdDev (ns)  Name");
  EXPECT_EQ(dashes,
            " --------  ---------------  ---------  --------  --------  --------  --------  "
            "-----------  ----------------");
  // Numbers right-aligned under their headers, the name left-aligned.
  EXPECT_EQ(row1,
            "     90.0              900          3     300.0     200.0       100       600  "
            "      264.6  cudaLaunchKernel");
  EXPECT_EQ(row2,
            "     10.0              100          1     100.0     100.0       100       100  "
            "        0.0  cudaMemcpy");
  // An empty report says so.
  StatsCollector empty;
  EXPECT_NE(FormatStatsTables({empty.Table("nvtx_sum")}).find("SKIPPED"), std::string::npos);
}

TEST(StatsFormat, TableGroupsThousands) {
  Profile p;
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel")});
  p.api_calls.push_back({0, 1'234'567, 1, 1, 211, ApiDomain::kRuntime, 0, 0});
  StatsCollector c;
  c.Add(p);
  const std::string text = FormatStatsTables({c.Table("cuda_api_sum")});
  EXPECT_NE(text.find("  1,234,567  "), std::string::npos) << text;      // total, min, max
  EXPECT_NE(text.find("  1,234,567.0  "), std::string::npos) << text;    // avg, med
}

TEST(StatsFormat, JsonParsesWithReportsKeyedByName) {
  const StatsCollector c = Collect(HandProfile());
  std::vector<StatsTable> tables;
  for (std::string_view name : StatsReportNames()) tables.push_back(c.Table(name));
  tables.push_back(c.Table(kStepReportName));
  const nlohmann::json doc = nlohmann::json::parse(FormatStatsJson(tables));
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.size(), 6u);
  const nlohmann::json& api = doc.at("cuda_api_sum");
  ASSERT_EQ(api.size(), 2u);
  EXPECT_EQ(api[0].at("Name"), "cudaLaunchKernel");
  EXPECT_EQ(api[0].at("Num Calls"), 3);
  EXPECT_EQ(api[0].at("Total Time (ns)"), 900);
  EXPECT_DOUBLE_EQ(api[0].at("Med (ns)").get<double>(), 200.0);
  EXPECT_NEAR(api[0].at("StdDev (ns)").get<double>(), 264.5751311, 1e-6);
  EXPECT_DOUBLE_EQ(api[0].at("Time (%)").get<double>(), 90.0);
  EXPECT_EQ(doc.at("cuda_gpu_kern_sum")[1].at("Name"), kMatmul);
  EXPECT_EQ(doc.at("cuda_gpu_mem_time_sum")[2].at("Operation"), "[CUDA memset]");
  EXPECT_DOUBLE_EQ(doc.at("cuda_gpu_mem_size_sum")[0].at("Total (MB)").get<double>(), 4.0);
  EXPECT_EQ(doc.at("nvtx_sum")[2].at("Style"), "StartEnd");
  EXPECT_EQ(doc.at("nvtx_sum")[3].at("Range"), "mylib:io");
  EXPECT_EQ(doc.at("step_sum")[0].at("GPU Busy (ns)"), 700);
  EXPECT_EQ(doc.at("step_sum")[1].at("Kernels"), 1);
}

}  // namespace
}  // namespace gprof

namespace gprof {
namespace {

// cuda_api_stack_sum by hand: cudaDeviceSynchronize (cbid 165) x3 and cudaMalloc (cbid 20) x1.
// Modules (files that do not exist, so frames are module+offset): libcudart [0x3000,0x4000),
// app [0x7000,0x8000) at bias 0x7000. Stack 0: cudart, app+0x100, app+0x200; stack 1: cudart,
// app+0x300. Calls 1 (100 ns) and 2 (300 ns) have stack 0, call 3 (1000 ns) stack 1, the malloc
// (50 ns) stack 0, and call 5 (7 ns) none. Rows by total time: (sync, app+0x300) 1000 ns x1,
// (sync, app+0x100) 400 ns x2, (malloc, app+0x100) 50 ns x1; 1450 ns in all.
TEST(StatsApiStackSum, RowsPerApiAndCallerOrderedByTimeWithCounts) {
  Profile p;
  p.api_names.push_back({165, ApiDomain::kRuntime, 0, p.strings.Intern("cudaDeviceSynchronize")});
  p.api_names.push_back({20, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMalloc")});
  p.api_calls.push_back({t0, t0 + 100, 1, 1, 165, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({t0 + 200, t0 + 500, 2, 1, 165, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({t0 + 600, t0 + 1600, 3, 1, 165, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({t0 + 1700, t0 + 1750, 4, 1, 20, ApiDomain::kRuntime, 0, 0});
  p.api_calls.push_back({t0 + 1800, t0 + 1807, 5, 1, 165, ApiDomain::kRuntime, 0, 0});
  p.modules.push_back({p.strings.Intern("/nonexistent/libcudart.so.13"), kNoString, 0x3000,
                       0x3000, 0x4000});
  p.modules.push_back({p.strings.Intern("/nonexistent/app"), kNoString, 0x7000, 0x7000, 0x8000});
  p.stack_pcs = {0x3100, 0x7100, 0x7200, 0x3100, 0x7300};
  p.stacks = {{0, 3}, {3, 2}};
  p.api_stacks = {{1, 0}, {2, 0}, {3, 1}, {4, 0}};
  StatsCollector c;
  c.Add(p);
  const StatsTable t = c.Table(kStackReportName);
  EXPECT_EQ(t.name, "cuda_api_stack_sum");
  ASSERT_EQ(t.rows.size(), 3u);
  auto text = [](const StatsCell& cell) { return std::get<std::string>(cell); };
  auto num = [](const StatsCell& cell) { return std::get<uint64_t>(cell); };
  EXPECT_EQ(text(t.rows[0][4]), "cudaDeviceSynchronize");
  EXPECT_EQ(text(t.rows[0][5]), "app+0x300");
  EXPECT_EQ(num(t.rows[0][1]), 1000u);
  EXPECT_EQ(num(t.rows[0][2]), 1u);
  EXPECT_EQ(text(t.rows[1][5]), "app+0x100");
  EXPECT_EQ(num(t.rows[1][1]), 400u);
  EXPECT_EQ(num(t.rows[1][2]), 2u);
  EXPECT_EQ(text(t.rows[2][4]), "cudaMalloc");
  EXPECT_EQ(num(t.rows[2][1]), 50u);
  EXPECT_NEAR(std::get<double>(t.rows[0][0]), 100.0 * 1000 / 1450, 1e-9);
}

}  // namespace
}  // namespace gprof
