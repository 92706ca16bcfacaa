// Figure 9: the merged view at scale. Writes N rank dumps of about M events each (the realistic
// workload of bench/workload.h: 300 kernel names, 50 launch configurations, 4 threads, 8 streams,
// kernels, memcpys, memsets and calls without GPU work, plus NVTX ranges: a step range per 1200
// calls and torch-style op ranges around groups of the main thread's calls), then runs
// `gprof-run merge -q` on them as a child process and reports, from its rusage (wait4): CPU time
// (user + sys; the machine is shared, wall time is printed for the record) per million events
// merged, and its peak RSS (ru_maxrss). The same merge of rank 0's dump alone gives the peak of
// one rank: the merge holds one profile at a time, so N ranks should peak near one rank, not N
// times it.
//   merge_bench DIR [--keep] [RANKSxEVENTS...]     (default 8x1000000 64x150000)
// DIR receives the dumps and the merged outputs; each case removes its files when done, unless
// --keep (DIR/merge-<case>/ then holds the dumps and merged/ for inspection).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_profile.h"
#include "bench/workload.h"
#include "model/dump.h"

using namespace gprof;

namespace {

namespace fs = std::filesystem;

const char* const kOpNames[] = {
    "aten::linear",  "aten::addmm",  "aten::matmul",      "aten::layer_norm", "aten::gelu",
    "aten::softmax", "aten::add_",   "aten::mul",         "aten::copy_",      "aten::to",
    "aten::dropout", "aten::embedding", "aten::_scaled_dot_product_flash_attention",
    "autograd::engine::evaluate_function: AddmmBackward0", "nccl:all_reduce"};
constexpr uint32_t kOpNameCount = sizeof(kOpNames) / sizeof(kOpNames[0]);
constexpr uint32_t kCallsPerOp = 6;  // main-thread calls under one op range

uint64_t Events(const Profile& p) {
  uint64_t n = p.ranges.size() + p.marks.size() + p.api_calls.size() + p.steps.size();
  ForEachGpuKind(p, [&](GpuKind, const auto& records) { n += records.size(); });
  return n;
}

// Rank `rank` of `ranks`: the mixed workload with NVTX ranges on the main thread, its own pid and
// host (8 ranks per host), started `rank` * 137 us after rank 0 (every time shifted).
Profile MakeRank(uint64_t calls, int rank, int ranks) {
  Profile p = bench::MakeMixedProfile(calls);
  const uint32_t main_tid = p.info.pid;  // the main thread's tid is the pid (workload.h)
  std::vector<StringId> ops;
  for (const char* n : kOpNames) ops.push_back(p.strings.Intern(n));
  const StringId step_name = p.strings.Intern("train_step");
  // Op ranges around runs of kCallsPerOp main-thread calls of one step; a step range around the
  // main thread's calls of each step (the op ranges nest inside it).
  uint64_t step_start = 0, step_end = 0, op_start = 0, op_end = 0;
  uint32_t in_op = 0, op = 0;
  uint64_t step = UINT64_MAX;
  const auto close_op = [&] {
    if (in_op > 0) p.ranges.push_back({op_start, op_end, ops[op++ % kOpNameCount], main_tid, 0, 0, 0});
    in_op = 0;
  };
  const auto close_step = [&] {
    if (step != UINT64_MAX) p.ranges.push_back({step_start, step_end, step_name, main_tid, 0, 0, 0});
  };
  for (uint64_t i = 0; i < p.api_calls.size(); ++i) {
    const ApiCall& c = p.api_calls[i];
    if (c.tid != main_tid) continue;
    if (i / bench::kMixedStepCalls != step) {
      close_op();
      close_step();
      step = i / bench::kMixedStepCalls;
      step_start = c.start_ns;
    }
    step_end = c.end_ns;
    if (in_op == 0) op_start = c.start_ns;
    op_end = c.end_ns;
    if (++in_op == kCallsPerOp) close_op();
  }
  close_op();
  close_step();

  const uint64_t shift = static_cast<uint64_t>(rank) * 137'000;
  p.info.start_ns += shift;
  p.info.end_ns += shift;
  for (HostRange& r : p.ranges) r.start_ns += shift, r.end_ns += shift;
  for (ApiCall& c : p.api_calls) c.start_ns += shift, c.end_ns += shift;
  for (Kernel& k : p.kernels) k.start_ns += shift, k.end_ns += shift;
  for (Memcpy& m : p.memcpys) m.start_ns += shift, m.end_ns += shift;
  for (Memset& m : p.memsets) m.start_ns += shift, m.end_ns += shift;
  for (Sync& s : p.syncs) s.start_ns += shift, s.end_ns += shift;
  p.info.pid = 20000 + static_cast<uint32_t>(rank);
  const uint32_t tid_shift = p.info.pid - main_tid;
  for (HostRange& r : p.ranges) r.tid += tid_shift;
  for (ApiCall& c : p.api_calls) c.tid += tid_shift;
  p.info.rank = rank;
  p.info.world_size = ranks;
  p.info.hostname = "node" + std::to_string(rank / 8);
  return p;
}

struct ChildUsage {
  int status = -1;
  double cpu_s = 0, sys_s = 0, wall_s = 0;  // cpu_s: user + sys
  long max_rss_kib = 0;
};

ChildUsage RunMerge(const std::vector<std::string>& argv) {
  ChildUsage u;
  const double t0 = bench::WallSeconds();
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  rusage ru{};
  ::wait4(pid, &u.status, 0, &ru);
  u.wall_s = bench::WallSeconds() - t0;
  u.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  u.sys_s = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6;
  u.max_rss_kib = ru.ru_maxrss;
  return u;
}

std::string Fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

bool RunCase(const std::string& root, int ranks, uint64_t events_per_rank, bool keep) {
  const std::string id = std::to_string(ranks) + "x" + std::to_string(events_per_rank);
  const std::string dir = root + "/merge-" + id, one = dir + "/rank0-only";
  fs::remove_all(dir);
  fs::create_directories(one);
  // About 1.97 events per call (the call, 0.89 GPU records, 0.08 op and step ranges).
  const uint64_t calls = events_per_rank * 100 / 197;
  uint64_t events = 0, dump_bytes = 0, rank_events = 0;
  for (int r = 0; r < ranks; ++r) {
    const Profile p = MakeRank(calls, r, ranks);
    const std::string path = dir + "/train." + std::to_string(p.info.pid) + ".gpdump";
    if (const std::string e = WriteDump(p, path); !e.empty()) {
      std::fprintf(stderr, "merge_bench: %s\n", e.c_str());
      return false;
    }
    if (r == 0) {
      rank_events = Events(p);
      fs::create_hard_link(path, one + "/train." + std::to_string(p.info.pid) + ".gpdump");
    }
    events += Events(p);
    dump_bytes += fs::file_size(path);
  }
  const std::string gprof = GPROF_BENCH_GPROF_RUN;
  const ChildUsage all = RunMerge({gprof, "merge", "-q", dir, "-o", dir + "/merged"});
  const uint64_t trace_bytes = fs::exists(dir + "/merged/trace.json")
                                   ? fs::file_size(dir + "/merged/trace.json") : 0;
  if (!keep) fs::remove_all(dir + "/merged");
  const ChildUsage single = RunMerge({gprof, "merge", "-q", one, "-o", one + "/merged"});
  if (!keep) fs::remove_all(dir);
  if (all.status != 0 || single.status != 0) {
    std::fprintf(stderr, "merge_bench: gprof-run merge exited with status %d / %d\n", all.status,
                 single.status);
    return false;
  }
  const double m_events = static_cast<double>(events) / 1e6;
  const double rss_mib = static_cast<double>(all.max_rss_kib) / 1024.0;
  const double one_mib = static_cast<double>(single.max_rss_kib) / 1024.0;
  std::printf("merge %s: %d ranks, %.2f M events (%.2f M per rank), dumps %.0f MB, merged trace "
              "%.0f MB; CPU %.2f s (sys %.2f s), wall %.2f s; peak RSS %.0f MiB (rank 0 alone: "
              "%.0f MiB, CPU %.2f s, sys %.2f s)\n",
              id.c_str(), ranks, m_events, static_cast<double>(rank_events) / 1e6,
              static_cast<double>(dump_bytes) / 1e6, static_cast<double>(trace_bytes) / 1e6,
              all.cpu_s, all.sys_s, all.wall_s, rss_mib, one_mib, single.cpu_s, single.sys_s);
  bench::PrintFigure("9a-" + id, "gprof-run merge, " + std::to_string(ranks) +
                                     " ranks x " + Fmt("%.2f", static_cast<double>(rank_events) / 1e6) +
                                     " M events: CPU time per million events merged (survey + trace + table; " +
                                     Fmt("sys %.2f s of %.2f s CPU, wall %.1f s)", all.sys_s, all.cpu_s, all.wall_s),
                     Fmt("%.2f s", all.cpu_s / m_events), "-", "INFO");
  bench::PrintFigure("9b-" + id, "peak RSS of that merge (ru_maxrss), and per million events of one rank",
                     Fmt("%.0f MiB (%.0f MiB per M events of a rank)", rss_mib,
                         rss_mib / (static_cast<double>(rank_events) / 1e6)),
                     "-", "INFO");
  const double ratio = rss_mib / one_mib;
  bench::PrintFigure("9c-" + id, "peak RSS of the " + std::to_string(ranks) +
                                     "-rank merge over that of merging rank 0 alone (" +
                                     Fmt("%.0f MiB", one_mib) + "): bounded by one rank, not the sum",
                     Fmt("%.2fx", ratio), "<= 1.5x", ratio <= 1.5 ? "PASS" : "FAIL");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: merge_bench DIR [--keep] [RANKSxEVENTS...]\n");
    return 2;
  }
  std::vector<std::string> cases;
  bool keep = false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--keep") keep = true;
    else cases.emplace_back(argv[i]);
  }
  if (cases.empty()) cases = {"8x1000000", "64x150000"};
  for (const std::string& c : cases) {
    const size_t x = c.find('x');
    if (x == std::string::npos) {
      std::fprintf(stderr, "merge_bench: %s: expected RANKSxEVENTS\n", c.c_str());
      return 2;
    }
    if (!RunCase(argv[1], std::atoi(c.substr(0, x).c_str()),
                 std::strtoull(c.substr(x + 1).c_str(), nullptr, 10), keep)) {
      return 1;
    }
  }
  return 0;
}
