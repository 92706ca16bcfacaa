// See host_cost.h. Cold.
#include "collector/host/host_cost.h"

namespace gprof::collector {
namespace {

// Ticks of a span ending now, in ns at the clock map's current rate (realtime mode: identity).
uint64_t SpanNs(uint64_t ticks) noexcept {
  if (ticks == 0) return 0;
  const uint64_t now = HostTicks();
  if (ticks > now) return ticks;
  const uint64_t end = HostTicksToNs(now), begin = HostTicksToNs(now - ticks);
  return end > begin ? end - begin : 0;
}

// What was reported so far; builds are serialized (runtime's flush_mutex).
uint64_t g_reported_samples[2] = {};
uint64_t g_reported_ticks[2] = {};

}  // namespace

void TakeHostCost(CollectorCost* cost) noexcept {
  using namespace host_cost_internal;
  uint64_t samples[2], ns[2];
  for (int k = 0; k < 2; ++k) {
    const uint64_t s = g_totals[k].samples.load(std::memory_order_relaxed);
    const uint64_t t = g_totals[k].ticks.load(std::memory_order_relaxed);
    samples[k] = s - g_reported_samples[k];
    ns[k] = SpanNs(t - g_reported_ticks[k]);
    g_reported_samples[k] = s;
    g_reported_ticks[k] = t;
  }
  cost->api_samples += samples[0];
  cost->api_sample_ns += ns[0];
  cost->range_samples += samples[1];
  cost->range_sample_ns += ns[1];
}

}  // namespace gprof::collector
