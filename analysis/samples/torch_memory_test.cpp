// Unit tests: the Python hook's .torchmem file (torch_memory.h) — the reader's checks, and the
// table's memory columns from PyTorch's caching allocator events on a hand-built profile whose
// every number is worked out in the comments (sizes rounded to 512 B, frees sized by their
// block, untagged events given a thread by time, "[memory]" outside every op, the allocator's
// own segments left out of CUPTI's bytes).
#include "analysis/samples/torch_memory.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analysis/tables/key_averages.h"
#include "analysis/tables/stats_memory.h"

namespace gprof {
namespace {

std::string File(const std::string& entries, int count) {
  return "gprof-torchmem\t1\npid\t42\nmax_entries\t1000\nstarted_ns\t5\n" + entries + "end\t" +
         std::to_string(count) + "\n";
}

TEST(TorchMemoryFile, ReadsEveryFieldOfEachEntry) {
  TorchMemoryFile f;
  std::string error;
  ASSERT_TRUE(ParseTorchMemory(File("e\t1\talloc\t4096\t100\t7\t1115\t77\n"
                                    "e\t0\toom\t0\t1048576\t0\t1200\t0\n",
                                    2),
                               &f, &error))
      << error;
  EXPECT_EQ(f.pid, 42u);
  EXPECT_EQ(f.max_entries, 1000u);
  EXPECT_EQ(f.started_ns, 5u);
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_EQ(f.entries[0].device, 1u);
  EXPECT_EQ(f.entries[0].kind, TorchMemEntryKind::kAlloc);
  EXPECT_EQ(f.entries[0].addr, 4096u);
  EXPECT_EQ(f.entries[0].size, 100u);
  EXPECT_EQ(f.entries[0].stream, 7u);
  EXPECT_EQ(f.entries[0].time_us, 1115u);
  EXPECT_EQ(f.entries[0].tid, 77u);
  EXPECT_EQ(f.entries[1].kind, TorchMemEntryKind::kOom);
}

TEST(TorchMemoryFile, RefusesWhatIsNotACompleteVersion1FileNamingTheLine) {
  const std::string ok = "e\t0\talloc\t1\t2\t3\t4\t5\n";
  const std::map<std::string, std::string> bad = {
      {"", "line 0: empty file"},
      {"gprof-pysamples\t1\n", "line 1: not a gprof-torchmem file"},
      {"gprof-torchmem\t2\n", "line 1: version 2, this gprof-run reads version 1"},
      {"gprof-torchmem\t1\npid\t0\n", "line 2: bad pid line"},
      {File(ok, 2), "line 6: the end line counts 2 entries, the file has 1"},
      {File(ok, 1) + "e\n", "line 7: text after the end line"},
      {File("e\t0\tsnapshot\t1\t2\t3\t4\t5\n", 1), "line 5: unknown action snapshot"},
      {File("e\t0\talloc\t1\t-2\t3\t4\t5\n", 1), "line 5: bad number"},
      {File("e\t256\talloc\t1\t2\t3\t4\t5\n", 1), "line 5: bad device 256"},
      {File("e\t0\talloc\t1\t2\t3\t4\n", 1), "line 5: expected an entry (e + 7 fields) or end"},
      {File("e\t0\talloc\t1\t281474976710656\t3\t4\t5\n", 1),
       "line 5: size 281474976710656 is not a real allocation's"},
      {"gprof-torchmem\t1\npid\t42\nmax_entries\t1000\nstarted_ns\t5\n" + ok,
       "line 5: no end line: the file is cut short"},
      {"gprof-torchmem\t1\npid\t42\nmax_entries\t1000\nstarted_ns\t5\n" + ok + "end\t1",
       "line 6: expected an entry (e + 7 fields) or end"},
  };
  for (const auto& [text, message] : bad) {
    TorchMemoryFile f;
    std::string error;
    EXPECT_FALSE(ParseTorchMemory(text, &f, &error)) << text;
    EXPECT_EQ(error, message) << text;
  }
}

TEST(TorchMemoryFile, BlocksRoundUpTo512BytesAsTheAllocatorDoes) {
  EXPECT_EQ(TorchBlockBytes(1), 512u);
  EXPECT_EQ(TorchBlockBytes(100), 512u);
  EXPECT_EQ(TorchBlockBytes(512), 512u);
  EXPECT_EQ(TorchBlockBytes(513), 1024u);
  EXPECT_EQ(TorchBlockBytes(4096ull * 4096 * 4), 4096ull * 4096 * 4);
}

constexpr uint64_t kUs = 1000;
constexpr int64_t kMm = 4096ll * 4096 * 4;  // a 4096 x 4096 float result: 64 MiB
constexpr int64_t kSegment = 20 << 20;
constexpr int64_t kMb = 1 << 20;

// Window [1000 us, 2000 us]. Thread 7: my_region [1050, 1500) us around aten::mm [1100, 1300)
// around aten::empty_strided [1110, 1120). Thread 9: autograd::engine [1550, 1700).
// Torch's entries (event time = time_us x 1000 + 500 ns):
//   500 us  alloc B (2048 B, tid 7): before the window, not counted; its size sizes B's free
//   1115    alloc A (100 B -> 512, tid 7): in aten::empty_strided
//   1190    segment_alloc S (20 MiB): the allocator's own cudaMalloc, also in CUPTI's records
//   1200    alloc M (64 MiB, tid 7): aten::mm's own
//   1400    free_requested A (tid 7): -512 in my_region
//   1401    free_completed A: not counted
//   1450    free_requested B (recorded size 7, tid 7): -2048 (its block's) in my_region
//   1600    alloc U (1000 B -> 1024, untagged): thread 9's autograd::engine, the only open range
//   1800    alloc V (1500 B -> 1536, untagged): no range open anywhere -> "[memory]"
//   1900    oom; 2100 alloc W: after the window, not counted
// CUPTI: cudaMalloc of S (20 MiB at S's address, in aten::mm: left out, a segment) and a
// cudaMalloc of 1 MiB at another address in my_region (the program's own: counted).
struct Built {
  Profile p;
  TorchMemoryAttached attached;
};

Built Build() {
  Built b;
  Profile& p = b.p;
  p.info.pid = 42;
  p.info.start_ns = 1000 * kUs;
  p.info.end_ns = 2000 * kUs;
  const auto range = [&](uint64_t from_us, uint64_t to_us, const char* name, uint32_t tid) {
    p.ranges.push_back({from_us * kUs, to_us * kUs, p.strings.Intern(name), tid, 0, 0, 0});
  };
  range(1050, 1500, "my_region", 7);
  range(1100, 1300, "aten::mm", 7);
  range(1110, 1120, "aten::empty_strided", 7);
  range(1550, 1700, "autograd::engine", 9);
  p.api_names.push_back({20, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMalloc")});
  const auto malloc_call = [&](uint64_t at_us, uint32_t corr, uint64_t addr, uint64_t bytes) {
    p.api_calls.push_back({at_us * kUs, at_us * kUs + 5 * kUs, corr, 7, 20, ApiDomain::kRuntime,
                           0, 0});
    p.memory_ops.push_back({at_us * kUs + kUs, addr, bytes, corr, 0xffffffffu,
                            MemoryOpKind::kAlloc, MemKind::kDevice, 0, 0, 0});
  };
  malloc_call(1190, 1, 0x70000000, kSegment);
  malloc_call(1060, 2, 0x90000000, kMb);

  const std::string entries =
      "e\t0\talloc\t45056\t2048\t0\t500\t7\n"
      "e\t0\talloc\t4096\t100\t0\t1115\t7\n"
      "e\t0\tsegment_alloc\t1879048192\t20971520\t0\t1190\t7\n"
      "e\t0\talloc\t8192\t67108864\t0\t1200\t7\n"
      "e\t0\tfree_requested\t4096\t100\t0\t1400\t7\n"
      "e\t0\tfree_completed\t4096\t100\t0\t1401\t0\n"
      "e\t0\tfree_requested\t45056\t7\t0\t1450\t7\n"
      "e\t0\talloc\t12288\t1000\t0\t1600\t0\n"
      "e\t0\talloc\t16384\t1500\t0\t1800\t0\n"
      "e\t0\toom\t0\t1048576\t0\t1900\t7\n"
      "e\t0\talloc\t20480\t64\t0\t2100\t7\n";
  TorchMemoryFile f;
  std::string error;
  EXPECT_TRUE(ParseTorchMemory(File(entries, 11), &f, &error)) << error;
  b.attached = AttachTorchMemory(f, &p);
  return b;
}

TEST(TorchMemoryColumns, AttachKeepsTheWindowsEventsAndCountsUntaggedOnes) {
  const Built b = Build();
  // In the window: A, S, M, free A, free B, U, V (free_completed and oom are not events).
  EXPECT_EQ(b.attached.events, 7u);
  EXPECT_EQ(b.attached.by_time, 2u);
  EXPECT_EQ(b.attached.outside_ops, 1u);
  EXPECT_EQ(b.attached.oom, 1u);
  EXPECT_FALSE(b.attached.history_full);  // 11 entries of 1000
  ASSERT_EQ(b.p.torch_memory.size(), 7u);
  EXPECT_EQ(b.p.torch_memory[0].ts_ns, 1115 * kUs + 500);
  EXPECT_EQ(b.p.torch_memory[5].tid, 9u);  // U, by time
  EXPECT_EQ(b.p.torch_memory[6].tid, 0u);  // V, outside every op
}

TEST(TorchMemoryColumns, SelfAndTotalBytesOfEachOpAsTorchCountsThem) {
  const Built b = Build();
  std::map<std::string, EventStats> rows;
  for (EventStats& e : KeyAverages(b.p)) rows[e.name] = e;
  EXPECT_EQ(rows.at("aten::empty_strided").cuda_mem, 512);
  EXPECT_EQ(rows.at("aten::empty_strided").self_cuda_mem, 512);
  // aten::mm: its 64 MiB plus empty_strided's 512 B; the 20 MiB segment is in neither.
  EXPECT_EQ(rows.at("aten::mm").cuda_mem, kMm + 512);
  EXPECT_EQ(rows.at("aten::mm").self_cuda_mem, kMm);
  // my_region: aten::mm's, minus A's 512 and B's 2048 freed in it, plus the program's 1 MiB.
  EXPECT_EQ(rows.at("my_region").cuda_mem, kMm + 512 - 512 - 2048 + kMb);
  EXPECT_EQ(rows.at("my_region").self_cuda_mem, -512 - 2048 + kMb);
  EXPECT_EQ(rows.at("autograd::engine").self_cuda_mem, 1024);
  EXPECT_EQ(rows.at("[memory]").count, 1u);
  EXPECT_EQ(rows.at("[memory]").cuda_mem, 1536);
  EXPECT_EQ(rows.at("[memory]").self_cuda_mem, 1536);
  EXPECT_EQ(rows.at("[memory]").cpu_total_ns, 0u);
  // CUPTI's cudaMalloc row: only the program's own 1 MiB.
  EXPECT_EQ(rows.at("cudaMalloc").cuda_mem, kMb);
  // Self sums to the net bytes: 512 + 64 MiB - 512 - 2048 + 1024 + 1536 + 1 MiB.
  int64_t self = 0;
  for (const auto& [name, e] : rows) self += e.self_cuda_mem;
  EXPECT_EQ(self, kMm - 2048 + 1024 + 1536 + kMb);
  EXPECT_TRUE(HasMemoryRecords(b.p));
}

// stats' memory_sum of the same profile: torch's blocks by owner, CUPTI's records less the
// allocator's segment (the 20 MiB cudaMalloc in aten::mm is in no row).
TEST(TorchMemoryColumns, MemorySumOwnsBlocksAsTheTableDoes) {
  const Built b = Build();
  std::map<std::string, MemoryOwnerRow> rows;
  AddMemoryOwners(b.p, &rows);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows.at("aten::empty_strided").allocated_bytes, 512u);
  EXPECT_EQ(rows.at("aten::mm").allocations, 1u);
  EXPECT_EQ(rows.at("aten::mm").allocated_bytes, static_cast<uint64_t>(kMm));
  // Peak in use right after aten::mm's block: A's 512 B + 64 MiB (B was allocated before the
  // window, so the window's count starts without it).
  EXPECT_EQ(rows.at("aten::mm").peak_in_use_bytes, static_cast<uint64_t>(kMm) + 512);
  // my_region: the program's 1 MiB cudaMalloc, and the frees of A (512) and B (2048).
  EXPECT_EQ(rows.at("my_region").allocations, 1u);
  EXPECT_EQ(rows.at("my_region").frees, 2u);
  EXPECT_EQ(rows.at("my_region").net_bytes, kMb - 512 - 2048);
  EXPECT_EQ(rows.at("autograd::engine").allocated_bytes, 1024u);
  EXPECT_EQ(rows.at("[memory]").allocated_bytes, 1536u);
}

TEST(TorchMemoryColumns, AFullHistoryIsSaid) {
  TorchMemoryFile f;
  std::string error;
  ASSERT_TRUE(ParseTorchMemory(
      "gprof-torchmem\t1\npid\t42\nmax_entries\t2\nstarted_ns\t5\n"
      "e\t0\talloc\t1\t2\t0\t1500\t7\ne\t0\tfree_requested\t1\t2\t0\t1501\t7\nend\t2\n",
      &f, &error))
      << error;
  Profile p;
  p.info.start_ns = 1000 * kUs;
  p.info.end_ns = 2000 * kUs;
  const TorchMemoryAttached a = AttachTorchMemory(f, &p);
  EXPECT_TRUE(a.history_full);
  EXPECT_EQ(TorchMemoryNote(a, "x.torchmem"),
            "gprof-run: 2 torch CUDA allocator events from x.torchmem; the allocator's history "
            "filled up, so its oldest events were lost and the memory columns miss them\n");
}

}  // namespace
}  // namespace gprof
