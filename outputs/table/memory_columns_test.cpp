// Unit tests: torch's memory columns (key_averages.h: totals over the subtree, Self owned by the
// innermost range, API calls transparent) on a hand-built profile whose every number is worked
// out in the comments, and their rendering (_format_memory's units).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/tables/key_averages.h"
#include "analysis/tables/stats.h"
#include "analysis/tables/stats_memory.h"
#include "outputs/table/table.h"
#include "text/format.h"

namespace gprof {
namespace {

constexpr int64_t kMb = 1 << 20;

// Thread 1:
//   range A [0, 100):  cudaMalloc@10 allocates 1 MB (device)
//     range B [20, 60): cudaMalloc@30 allocates 2 MB, cudaFree@40 frees A's 1 MB (size from
//                       its allocation: the free record carries 0 bytes)
//     cudaMallocHost@70 allocates 4 KB pinned
//   cudaMalloc@110, outside every range, allocates 512 B
Profile Allocations() {
  Profile p;
  p.info.pid = 1;
  const StringId a = p.strings.Intern("A"), b = p.strings.Intern("B");
  p.ranges.push_back({0, 100, a, 1, 0, 0, 0});
  p.ranges.push_back({20, 60, b, 1, 0, 0, 0});
  p.api_names.push_back({20, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMalloc")});
  p.api_names.push_back({16, ApiDomain::kRuntime, 0, p.strings.Intern("cudaFree")});
  p.api_names.push_back({21, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMallocHost")});
  const auto call = [&](uint64_t t, uint32_t corr, uint16_t cbid) {
    p.api_calls.push_back({t, t + 5, corr, 1, cbid, ApiDomain::kRuntime, 0, 0});
  };
  const auto op = [&](uint64_t t, uint64_t addr, uint64_t bytes, uint32_t corr, MemoryOpKind k,
                      MemKind kind) {
    p.memory_ops.push_back({t, addr, bytes, corr, 0xffffffffu, k, kind, 0, 0, 0});
  };
  call(10, 1, 20);
  op(12, 0x1000, kMb, 1, MemoryOpKind::kAlloc, MemKind::kDevice);
  call(30, 2, 20);
  op(32, 0x9000, 2 * kMb, 2, MemoryOpKind::kAlloc, MemKind::kDevice);
  call(40, 3, 16);
  op(42, 0x1000, 0, 3, MemoryOpKind::kFree, MemKind::kDevice);
  call(70, 4, 21);
  op(72, 0x5000, 4096, 4, MemoryOpKind::kAlloc, MemKind::kPinned);
  call(110, 5, 20);
  op(112, 0x7000, 512, 5, MemoryOpKind::kAlloc, MemKind::kDevice);
  return p;
}

std::map<std::string, EventStats> ByName(const Profile& p) {
  std::map<std::string, EventStats> out;
  for (EventStats& e : KeyAverages(p)) out[e.name] = e;
  return out;
}

TEST(MemoryColumns, TotalsOverTheSubtreeSelfOwnedByTheInnermostRange) {
  const auto rows = ByName(Allocations());
  // A: 1 MB + (2 MB - 1 MB in B) = 2 MB device, 4 KB pinned; Self = total - B's = 1 MB, 4 KB.
  EXPECT_EQ(rows.at("A").cuda_mem, 2 * kMb);
  EXPECT_EQ(rows.at("A").self_cuda_mem, kMb);
  EXPECT_EQ(rows.at("A").cpu_mem, 4096);
  EXPECT_EQ(rows.at("A").self_cpu_mem, 4096);
  // B: 2 MB - 1 MB, all its own.
  EXPECT_EQ(rows.at("B").cuda_mem, kMb);
  EXPECT_EQ(rows.at("B").self_cuda_mem, kMb);
  // API rows: their own bytes as the total; Self only for the call outside every range.
  EXPECT_EQ(rows.at("cudaMalloc").cuda_mem, 3 * kMb + 512);
  EXPECT_EQ(rows.at("cudaMalloc").self_cuda_mem, 512);
  EXPECT_EQ(rows.at("cudaFree").cuda_mem, -kMb);
  EXPECT_EQ(rows.at("cudaFree").self_cuda_mem, 0);
  EXPECT_EQ(rows.at("cudaMallocHost").cpu_mem, 4096);
  EXPECT_EQ(rows.at("cudaMallocHost").self_cpu_mem, 0);
  // Self sums to the net bytes: 1 + 2 - 1 MB + 512 B device, 4 KB pinned.
  int64_t self_cuda = 0, self_cpu = 0;
  for (const auto& [name, e] : rows) {
    self_cuda += e.self_cuda_mem;
    self_cpu += e.self_cpu_mem;
  }
  EXPECT_EQ(self_cuda, 2 * kMb + 512);
  EXPECT_EQ(self_cpu, 4096);
}

TEST(MemoryColumns, FormattedAsTorchFormatsMemory) {
  EXPECT_EQ(FormatMemory(512), "512 B");
  EXPECT_EQ(FormatMemory(-512), "-512 B");
  EXPECT_EQ(FormatMemory(4096), "4.00 KB");
  EXPECT_EQ(FormatMemory(3 * kMb / 2), "1.50 MB");
  EXPECT_EQ(FormatMemory(-kMb), "-1.00 MB");
  EXPECT_EQ(FormatMemory(int64_t{5} << 30), "5.00 GB");
}

TEST(MemoryColumns, TableShowsThemOnlyWithProfileMemoryAndSortsByThem) {
  const Profile p = Allocations();
  TableOptions plain;
  plain.row_limit = -1;
  EXPECT_EQ(RenderTable(p, plain).find("CUDA Mem"), std::string::npos);
  TableOptions memory = plain;
  memory.profile_memory = true;
  memory.sort_by = "self_cuda_memory_usage";
  const std::string t = RenderTable(p, memory);
  const size_t header = t.find("CPU Mem");
  ASSERT_NE(header, std::string::npos) << t;
  EXPECT_LT(header, t.find("Self CPU Mem"));
  EXPECT_LT(t.find("Self CPU Mem"), t.find(" CUDA Mem"));
  EXPECT_LT(t.find(" CUDA Mem"), t.find("Self CUDA Mem"));
  EXPECT_LT(t.find("Self CUDA Mem"), t.find("# of Calls"));
  // A and B own 1 MB each (tie: name order), then cudaMalloc's 512 B, the rest 0 B.
  // Row order: the first word of each line between the separators.
  std::vector<std::string> order;
  for (size_t at = 0; at < t.size();) {
    const size_t end = t.find('\n', at);
    const std::string line = t.substr(at, end - at);
    at = end + 1;
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '-') continue;
    order.push_back(line.substr(first, line.find(' ', first) - first));
  }
  ASSERT_GE(order.size(), 5u) << t;
  EXPECT_EQ(order[1], "A") << t;  // order[0] is the header's "Name"
  EXPECT_EQ(order[2], "B") << t;
  EXPECT_EQ(order[3], "cudaMalloc") << t;
  EXPECT_NE(t.find("2.00 MB"), std::string::npos);
  EXPECT_NE(t.find("-1.00 MB"), std::string::npos);
}

// memory_sum on the same records: owners A (1 MB device + 4 KB pinned), B (2 MB allocated, A's
// 1 MB freed there), and the cudaMalloc outside every range (512 B).
TEST(MemorySum, OwnersAreTheInnermostRangesElseTheCall) {
  std::map<std::string, MemoryOwnerRow> rows;
  AddMemoryOwners(Allocations(), &rows);
  ASSERT_EQ(rows.size(), 3u);
  const MemoryOwnerRow& a = rows.at("A");
  EXPECT_EQ(a.allocations, 2u);
  EXPECT_EQ(a.frees, 0u);
  EXPECT_EQ(a.allocated_bytes, static_cast<uint64_t>(kMb + 4096));
  EXPECT_EQ(a.net_bytes, kMb + 4096);
  EXPECT_EQ(a.largest_bytes, static_cast<uint64_t>(kMb));
  EXPECT_EQ(a.peak_in_use_bytes, static_cast<uint64_t>(2 * kMb));  // device: 1 + 2 - 1 MB at 72
  const MemoryOwnerRow& b = rows.at("B");
  EXPECT_EQ(b.allocations, 1u);
  EXPECT_EQ(b.frees, 1u);
  EXPECT_EQ(b.net_bytes, kMb);  // 2 MB allocated, 1 MB (A's) freed
  EXPECT_EQ(b.peak_in_use_bytes, static_cast<uint64_t>(3 * kMb));
  const MemoryOwnerRow& call = rows.at("cudaMalloc");
  EXPECT_EQ(call.allocated_bytes, 512u);
  EXPECT_EQ(call.peak_in_use_bytes, static_cast<uint64_t>(2 * kMb + 512));
}

// 40000 allocations of just under 256 TiB (the largest size a dump may hold, kMaxRecordBytes)
// in one range: 40000 * (2^48 - 1) ~ 1.1e19 bytes, past INT64_MAX (9.2e18). A hostile dump can
// hold that; the signed sums (the table's memory columns, memory_sum's net) stop at INT64_MAX
// instead of overflowing, and the unsigned ones (bytes allocated, in use) still hold the exact
// sum, below UINT64_MAX (1.8e19). Found by fuzz/dump_fuzz.
TEST(MemorySum, SumsPastInt64StopAtItsLimit) {
  Profile p;
  const StringId a = p.strings.Intern("A");
  p.ranges.push_back({0, 1'000'000, a, 1, 0, 0, 0});
  p.api_names.push_back({20, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMalloc")});
  constexpr uint64_t kSize = kMaxRecordBytes - 1;
  constexpr uint32_t kCount = 40000;
  for (uint32_t i = 0; i < kCount; ++i) {
    p.api_calls.push_back({10 + 10 * uint64_t{i}, 15 + 10 * uint64_t{i}, i + 1, 1, 20,
                           ApiDomain::kRuntime, 0, 0});
    p.memory_ops.push_back({12 + 10 * uint64_t{i}, 0x1000 + uint64_t{i} * 0x1000, kSize, i + 1,
                            0xffffffffu, MemoryOpKind::kAlloc, MemKind::kDevice, 0, 0, 0});
  }
  std::map<std::string, MemoryOwnerRow> rows;
  AddMemoryOwners(p, &rows);
  const MemoryOwnerRow& row = rows.at("A");
  EXPECT_EQ(row.allocations, kCount);
  EXPECT_EQ(row.allocated_bytes, uint64_t{kCount} * kSize);
  EXPECT_EQ(row.peak_in_use_bytes, uint64_t{kCount} * kSize);
  EXPECT_EQ(row.net_bytes, INT64_MAX);
  const EventStats range = ByName(p).at("A");
  EXPECT_EQ(range.cuda_mem, INT64_MAX);
  EXPECT_EQ(range.self_cuda_mem, INT64_MAX);
}

TEST(MemorySum, TableOrderedByBytesAllocatedInMegabytes) {
  StatsCollector stats;
  stats.Add(Allocations());
  const StatsTable t = stats.Table(kMemoryReportName);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(t.rows[0].back()), "B");  // 2 MB
  EXPECT_EQ(std::get<std::string>(t.rows[1].back()), "A");  // 1 MB + 4 KB
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][0]), 2.0 * kMb / 1e6);
  EXPECT_EQ(std::get<std::string>(t.rows[0][3]), "1.049");  // net 1 MiB = 1.048576 MB
  EXPECT_EQ(t.columns.back().header, "Owner");
}

// Without pinned host memory in any row (a torch program on the CPU: its CPU allocator is not
// tracked) the CPU Mem columns would be zeros beside torch's real numbers: they are left out, and
// one line under the table says why. The device columns stay.
TEST(MemoryColumns, CpuMemColumnsAreLeftOutWithALineWhenNoRowHasHostMemory) {
  Profile p = Allocations();
  for (MemoryOp& m : p.memory_ops) {
    if (m.mem_kind == MemKind::kPinned) m.mem_kind = MemKind::kDevice;
  }
  TableOptions memory;
  memory.row_limit = -1;
  memory.profile_memory = true;
  const std::string t = RenderTable(p, memory);
  EXPECT_EQ(t.find(" CPU Mem"), std::string::npos) << t;  // no header cell (right-aligned)
  EXPECT_EQ(t.find("Self CPU Mem"), std::string::npos) << t;
  EXPECT_NE(t.find("Self CUDA Mem"), std::string::npos) << t;
  EXPECT_NE(t.find("\nCPU Mem columns left out: no row holds pinned host memory, the only host "
                   "memory gprof-run counts (the host allocator, torch's CPU one included, is not "
                   "tracked)\n"),
            std::string::npos)
      << t;
  // With pinned memory (Allocations() as it is) the columns are there and the line is not.
  const std::string with_host = RenderTable(Allocations(), memory);
  EXPECT_NE(with_host.find("Self CPU Mem"), std::string::npos);
  EXPECT_EQ(with_host.find("CPU Mem columns left out"), std::string::npos);
}

}  // namespace
}  // namespace gprof
