// The collector's own cost on the program's threads, sampled: one hot-path event in
// kHostCostSampleEvery (per thread) reads the clock again when its work is done and adds the time
// since its own timestamp to a process-wide total. Read at each profile build into
// Profile::collector_cost (deltas since the previous build), which the profiler_overhead finding
// turns into "estimated time added per call". Two kinds: CUDA API calls (from the exit callback's
// clock read to the record written: the enter side is one clock read and a store) and NVTX / ITT
// range begins and ends (from the event's clock read to the record written and the step observer
// notified).
//
// Threads: SampleHostCost runs on any thread on the hot path (a TLS increment and a branch; on a
// sampled event one clock read and two relaxed atomic adds). TakeHostCost is cold.
#pragma once

#include <atomic>
#include <cstdint>

#include "collector/host/host_clock.h"
#include "model/profile.h"

namespace gprof::collector {

inline constexpr uint32_t kHostCostSampleEvery = 64;  // a power of two

enum class HostCostKind : uint8_t { kApiCall = 0, kRange = 1 };

namespace host_cost_internal {
struct Totals {
  std::atomic<uint64_t> samples{0};
  std::atomic<uint64_t> ticks{0};
};
inline Totals g_totals[2];
// initial-exec: no __tls_get_addr on the hot path (this library's TLS is static TLS).
inline thread_local uint32_t t_events __attribute__((tls_model("initial-exec"))) = 0;
}  // namespace host_cost_internal

// `since` is the HostTicks() value the event stamped itself with.
inline void SampleHostCost(HostCostKind kind, uint64_t since) noexcept {
  using namespace host_cost_internal;
  if ((++t_events & (kHostCostSampleEvery - 1)) != 0) [[likely]] return;
  const uint64_t now = HostTicks();
  if (now <= since) return;
  Totals& t = g_totals[static_cast<uint8_t>(kind)];
  t.samples.fetch_add(1, std::memory_order_relaxed);
  t.ticks.fetch_add(now - since, std::memory_order_relaxed);
}

// Adds what was sampled since the previous call to `cost` (ticks converted to ns at the clock's
// current rate). Cold; one caller at a time (profile builds hold the flush lock).
void TakeHostCost(CollectorCost* cost) noexcept;

}  // namespace gprof::collector
