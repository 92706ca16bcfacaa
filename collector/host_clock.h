// Host clock of the hot path: what NVTX hooks and the CUPTI API callback stamp records with
// (HostTicks), and the one conversion every other part uses to get CUPTI's clock, CLOCK_REALTIME
// ns (HostTicksToNs). Ticks are CLOCK_REALTIME ns here.
//
// Threads: HostTicks and HostTicksToNs are safe on any thread (hot path: no allocation, lock,
// syscall beyond the vDSO clock read).
#pragma once

#include <cstdint>

#include "support/clock.h"

namespace gprof::collector {

inline uint64_t HostTicks() noexcept { return NowNs(); }

// Same ticks -> same ns, whenever and on whichever thread it is called.
inline uint64_t HostTicksToNs(uint64_t ticks) noexcept { return ticks; }

}  // namespace gprof::collector
