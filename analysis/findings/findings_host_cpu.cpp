// The CPU time of the threads that launch GPU work (findings_rules.h: LaunchThreadCpu), from the
// profile's thread CPU samples: what overhead_bound judges the host by when it has them, so that
// host work with no range around it counts, and a thread that sleeps or blocks inside a recorded
// range, or waits in a synchronization, does not. Rule: docs/FINDINGS.md.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "analysis/attribution/thread_cpu.h"
#include "analysis/findings/findings_analysis.h"
#include "analysis/findings/findings_rules.h"

namespace gprof::findings_internal {

void LaunchThreadCpu(Analysis& a, const std::vector<BlockingCall>& blocking, GpuShares* s) {
  const Profile& p = a.p();
  if (p.thread_cpu.empty() || a.window() == 0) return;
  std::set<uint32_t> launchers;
  a.corr().ForEachLaunch([&](uint32_t api, std::span<const GpuRef>) {
    const ApiCall& c = p.api_calls[api];
    if (a.InWindow(c.start_ns)) launchers.insert(c.tid);
  });
  // Waiting for the GPU is not host work, whether the call sleeps or spins (a spinning or
  // yielding wait is runnable): a thread's time inside blocking calls comes off its runnable time.
  std::map<uint32_t, std::vector<Interval>> blocked;
  for (const BlockingCall& b : blocking) {
    if (b.tid && b.host_event >= 0) blocked[*b.tid].emplace_back(b.start, b.end);
  }
  const ThreadCpuIndex index(p);
  for (uint32_t tid : launchers) {
    const std::optional<ThreadCpu> cpu = index.In(tid, a.ws(), a.we());
    if (!cpu) continue;
    ++s->launch_threads;
    const uint64_t runnable = cpu->runnable_ns();
    const uint64_t in_sync = std::min(
        runnable, CoveredIn(MergeIntervals(std::move(blocked[tid])), a.ws(), a.we()));
    // The CPU part of the time in blocking calls, in the proportion of the whole span: the
    // samples do not say when in the span the thread ran and when it waited.
    const uint64_t sync_cpu =
        runnable == 0 ? 0
                      : static_cast<uint64_t>(static_cast<double>(in_sync) * cpu->cpu_ns /
                                              static_cast<double>(runnable));
    const uint64_t busy = cpu->cpu_ns - std::min(cpu->cpu_ns, sync_cpu);
    const uint64_t own = a.window() - std::min(a.window(), cpu->wait_ns);
    if (!s->launch_cpu || Share(busy, own) > Share(s->launch_busy, s->launch_own)) {
      s->launch_cpu = cpu;
      s->launch_tid = tid;
      s->launch_sync = in_sync;
      s->launch_busy = busy;
      s->launch_own = own;
    }
  }
}

}  // namespace gprof::findings_internal
