// Rank dumps for the merge benchmarks (see rank_dumps.h).
#include "bench/rank_dumps.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "bench/workload.h"
#include "model/dump.h"

namespace gprof::bench {
namespace {

void Shift(Profile* p, int64_t by) {
  p->info.start_ns += by, p->info.end_ns += by;
  for (HostRange& x : p->ranges) x.start_ns += by, x.end_ns += by;
  for (ApiCall& x : p->api_calls) x.start_ns += by, x.end_ns += by;
  for (Kernel& x : p->kernels) x.start_ns += by, x.end_ns += by;
  for (Memcpy& x : p->memcpys) x.start_ns += by, x.end_ns += by;
  for (Memset& x : p->memsets) x.start_ns += by, x.end_ns += by;
  for (Sync& x : p->syncs) x.start_ns += by, x.end_ns += by;
}

void Check(const std::string& error) {
  if (error.empty()) return;
  std::fprintf(stderr, "rank dumps: %s\n", error.c_str());
  std::exit(1);
}

uint64_t StartOf(const HostRange& r) { return r.start_ns; }
uint64_t StartOf(const HostMark& m) { return m.ts_ns; }
uint64_t StartOf(const ApiCall& c) { return c.start_ns; }
uint64_t StartOf(const Step& s) { return s.start_ns; }

// `all`'s records whose start falls in segment i of `n` spans over [t0, t1].
template <typename T, typename Start>
std::vector<T> Slice(const std::vector<T>& all, int i, int n, uint64_t t0, uint64_t t1,
                     Start start) {
  std::vector<T> out;
  const uint64_t span = std::max<uint64_t>(1, t1 - t0);
  for (const T& x : all) {
    const uint64_t at = std::clamp(start(x), t0, t1) - t0;
    const int seg = std::min(n - 1, static_cast<int>(static_cast<double>(at) / span * n));
    if (seg == i) out.push_back(x);
  }
  return out;
}

// Calls f(a's vector, b's vector) for each GPU record kind (the same vector of both profiles).
template <typename F>
void ForBothGpuKinds(Profile* a, Profile* b, F f) {
  ForEachGpuKind(*a, [&](GpuKind kind, auto& x) {
    ForEachGpuKind(*b, [&](GpuKind other, auto& y) {
      if constexpr (std::is_same_v<decltype(&x), decltype(&y)>) {
        if (kind == other) f(x, y);
      }
    });
  });
}

// Writes `p` in `n` segments: its records move out, each segment's slice moves in for its
// Append (the tables stay whole), and they move back at the end.
void WriteSegmented(Profile* p, const std::string& path, int n) {
  uint64_t t0 = p->info.start_ns, t1 = p->info.end_ns;
  for (const ApiCall& c : p->api_calls) t0 = std::min(t0, c.start_ns), t1 = std::max(t1, c.end_ns);
  Profile all;
  all.ranges.swap(p->ranges), all.marks.swap(p->marks), all.api_calls.swap(p->api_calls);
  all.steps.swap(p->steps);
  ForBothGpuKinds(&all, p, [](auto& x, auto& y) { x.swap(y); });
  SegmentedDumpWriter w;
  Check(w.Open(path));
  const auto by_start = [](const auto& x) { return StartOf(x); };
  for (int i = 0; i < n; ++i) {
    p->ranges = Slice(all.ranges, i, n, t0, t1, by_start);
    p->marks = Slice(all.marks, i, n, t0, t1, by_start);
    p->api_calls = Slice(all.api_calls, i, n, t0, t1, by_start);
    p->steps = Slice(all.steps, i, n, t0, t1, by_start);
    ForBothGpuKinds(p, &all, [&](auto& into, const auto& from) {
      into = Slice(from, i, n, t0, t1, [](const auto& x) { return GpuRecordStartNs(x); });
    });
    Check(w.Append(*p, /*last=*/i == n - 1));
  }
  Check(w.Publish());
  p->ranges.swap(all.ranges), p->marks.swap(all.marks), p->api_calls.swap(all.api_calls);
  p->steps.swap(all.steps);
  ForBothGpuKinds(p, &all, [](auto& x, auto& y) { x.swap(y); });
}

}  // namespace

Profile RankBaseProfile(uint64_t events) {
  Profile p = MakeMixedProfile(events * 100 / 197);
  const StringId all_reduce = p.strings.Intern("gloo:all_reduce");
  const uint32_t main_tid = p.info.pid;
  uint64_t seen = 0;
  for (const ApiCall& c : p.api_calls) {
    if (c.tid == main_tid && ++seen % kMixedStepCalls == 0) {
      p.ranges.push_back({c.end_ns, c.end_ns + 50'000, all_reduce, main_tid + 1, 0, 0, 0});
    }
  }
  return p;
}

void WriteRankDump(Profile* base, int r, int ranks, const std::string& path, int segments) {
  const int64_t skew = static_cast<int64_t>(r) * 1'000'000;
  Shift(base, skew);
  base->info.pid = 30000 + static_cast<uint32_t>(r);
  base->info.rank = r;
  base->info.world_size = ranks;
  base->info.hostname = "node" + std::to_string(r / 8);
  if (segments <= 1) {
    Check(WriteDump(*base, path));
  } else {
    WriteSegmented(base, path, segments);
  }
  Shift(base, -skew);
}

}  // namespace gprof::bench
