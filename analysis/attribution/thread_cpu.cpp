// See thread_cpu.h.
#include "analysis/attribution/thread_cpu.h"

#include <algorithm>

namespace gprof {

ThreadCpuIndex::ThreadCpuIndex(const Profile& p) {
  for (const ThreadCpuSample& s : p.thread_cpu) {
    by_thread_[s.tid].push_back(s);
    rounds_.push_back(s.ts_ns);
  }
  for (auto& [tid, v] : by_thread_) {
    std::sort(v.begin(), v.end(), [](const ThreadCpuSample& a, const ThreadCpuSample& b) {
      return a.ts_ns < b.ts_ns;
    });
    // The same round twice (a segment's last round is also the next one's first): keep one.
    v.erase(std::unique(v.begin(), v.end(),
                        [](const ThreadCpuSample& a, const ThreadCpuSample& b) {
                          return a.ts_ns == b.ts_ns;
                        }),
            v.end());
  }
  std::sort(rounds_.begin(), rounds_.end());
  rounds_.erase(std::unique(rounds_.begin(), rounds_.end()), rounds_.end());
}

std::optional<ThreadCpu> ThreadCpuIndex::At(const std::vector<ThreadCpuSample>& s,
                                            uint64_t t) const {
  const ThreadCpuSample& first = s.front();
  const ThreadCpuSample& last = s.back();
  if (t < first.ts_ns) {
    // Born after an earlier round: zero at that round, its first sample's counts at the next.
    if (t < rounds_.front() || first.ts_ns == rounds_.front()) return std::nullopt;
    const uint64_t r = *(std::lower_bound(rounds_.begin(), rounds_.end(), first.ts_ns) - 1);
    if (t <= r) return ThreadCpu{};
    const double f = static_cast<double>(t - r) / static_cast<double>(first.ts_ns - r);
    return ThreadCpu{static_cast<uint64_t>(f * first.cpu_ns),
                     static_cast<uint64_t>(f * first.wait_ns)};
  }
  if (t >= last.ts_ns) {
    // Past the last round of all: unknown; past only its own last sample: it had ended.
    if (t > last.ts_ns && t > rounds_.back()) return std::nullopt;
    return ThreadCpu{last.cpu_ns, last.wait_ns};
  }
  auto hi = std::upper_bound(s.begin(), s.end(), t, [](uint64_t x, const ThreadCpuSample& v) {
    return x < v.ts_ns;
  });
  const ThreadCpuSample& b = *hi;
  const ThreadCpuSample& a = *(hi - 1);
  const double f = static_cast<double>(t - a.ts_ns) / static_cast<double>(b.ts_ns - a.ts_ns);
  const auto lerp = [f](uint64_t x, uint64_t y) {
    return y > x ? x + static_cast<uint64_t>(f * static_cast<double>(y - x)) : x;
  };
  return ThreadCpu{lerp(a.cpu_ns, b.cpu_ns), lerp(a.wait_ns, b.wait_ns)};
}

std::optional<ThreadCpu> ThreadCpuIndex::In(uint32_t tid, uint64_t start, uint64_t end) const {
  auto it = by_thread_.find(tid);
  if (it == by_thread_.end() || end < start) return std::nullopt;
  const std::optional<ThreadCpu> a = At(it->second, start);
  const std::optional<ThreadCpu> b = At(it->second, end);
  if (!a || !b) return std::nullopt;
  const auto diff = [](uint64_t x, uint64_t y) { return y > x ? y - x : 0; };
  // The kernel adds to the counters at scheduling events (a run when it ends or at a tick, a
  // wait when the thread gets the CPU), so between two samples they move in steps, and the
  // interpolation can give a span more than it lasted: no thread runs or waits longer than that.
  const uint64_t span = end - start;
  const uint64_t cpu = std::min(diff(a->cpu_ns, b->cpu_ns), span);
  return ThreadCpu{cpu, std::min(diff(a->wait_ns, b->wait_ns), span - cpu)};
}

}  // namespace gprof
