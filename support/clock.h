// Host timestamps on CUPTI's clock: CLOCK_REALTIME in nanoseconds (REFERENCE.md §1), so host and
// GPU events share one timeline. Safe on any thread; no allocation.
#pragma once

#include <time.h>

#include <cstdint>

namespace gprof {

inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// CLOCK_REALTIME and CLOCK_MONOTONIC read back to back (model/profile.h ClockPair): the realtime
// reads bracket the monotonic one.
struct ClockPairReading {
  uint64_t realtime_ns, monotonic_ns, read_ns;
};
inline ClockPairReading ReadClockPairNow() {
  const uint64_t before = NowNs();
  const uint64_t mono = MonotonicNs();
  const uint64_t after = NowNs();
  const uint64_t gap = after >= before ? after - before : 0;
  return {before + gap / 2, mono, gap};
}

}  // namespace gprof
