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

}  // namespace gprof
