// Host clock of the hot path: what NVTX hooks and the CUPTI API callback stamp records with
// (HostTicks), and the one conversion every other part uses to get CUPTI's clock, CLOCK_REALTIME
// ns (HostTicksToNs, REFERENCE.md §1).
//
// Two modes, chosen once by InitHostClock:
//  - TSC: ticks are rdtsc values (about 10 ns instead of 23 for clock_gettime on a KVM guest). Only
//    where the CPU says the TSC is invariant (CPUID 0x80000007 EDX bit 8) and the kernel's
//    clocksource is tsc (so the TSC is what CLOCK_REALTIME itself counts, synchronized across
//    CPUs). Ticks become ns through a piecewise-linear map whose knots are (tsc, realtime)
//    calibration pairs: one at init, then one whenever a stamp finds the previous knot older than
//    the calibration interval (1 ms growing to 200 ms), and one per profile build.
//  - Realtime (fallback, and before InitHostClock): ticks are CLOCK_REALTIME ns; the map is the
//    identity.
// The map is deterministic: a tick converts to the same ns whenever and wherever it is converted
// (a new knot only changes the map from its own tick on; once ticks are converted live, knots take
// effect 100 us in the future). It keeps stamps in order: the map steps forward to realtime but
// slews back, except after a realtime jump or a long quiet stretch. So a window cut
// given in ns by the NVTX observer (which converts the record's tick) puts that very record on the
// same side when ResetHostRecordsBefore converts it again. Without live conversions, the stamp
// that finds a calibration due becomes the knot itself, so the first stamp after a quiet stretch
// gets the fresh pair (unless the map runs ahead by less than 50 us: that is slewed).
//
// Threads: HostTicks and HostTicksToNs run on any thread, on the hot path: no allocation, no
// lock (calibration is a try-lock that never waits), no syscall (clock_gettime through the vDSO
// only where the clocksource is tsc). InitHostClock and CalibrateHostClock are cold.
#pragma once

#include <atomic>
#include <cstdint>

#include "support/clock.h"

namespace gprof::collector {

namespace host_clock_internal {
// Constant-initialized: no global constructor. Written once by InitHostClock.
inline std::atomic<bool> g_use_tsc{false};
// TSC mode: ticks at or past this value are due for a calibration knot (relaxed: a stale value
// only delays or repeats a try).
inline std::atomic<uint64_t> g_calibration_due{UINT64_MAX};
void CalibrateFromStamp(uint64_t tsc) noexcept;

inline uint64_t ReadTsc() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return 0;  // never called: InitHostClock keeps realtime mode off x86
#endif
}
}  // namespace host_clock_internal

// Cold, idempotent (the first call decides; later calls return the same answer). Returns true
// when TSC mode is on.
bool InitHostClock() noexcept;

// The hot-path stamp.
inline uint64_t HostTicks() noexcept {
  using namespace host_clock_internal;
  if (g_use_tsc.load(std::memory_order_relaxed)) [[likely]] {
    const uint64_t t = ReadTsc();
    if (t >= g_calibration_due.load(std::memory_order_relaxed)) [[unlikely]] {
      CalibrateFromStamp(t);
    }
    return t;
  }
  return NowNs();
}

// CLOCK_REALTIME ns of a HostTicks value (same ticks -> same ns, whenever it is called).
uint64_t HostTicksToNs(uint64_t ticks) noexcept;
// The same, for hot-path callers that hand the ns on while the record may be converted again
// later (NVTX observer, CUPTI API hook: window cuts). From the first such call on, new knots take
// effect 100 us after their pair, so that no tick converted live changes value later.
uint64_t HostTicksToNsLive(uint64_t ticks) noexcept;

// Cold: adds a calibration knot now (profile builds call it so that long quiet stretches end
// with a fresh pair). No-op in realtime mode.
void CalibrateHostClock() noexcept;

// Number of knots so far and whether TSC mode is on (reports and tests).
uint32_t HostClockKnots() noexcept;
inline bool HostClockUsesTsc() noexcept {
  return host_clock_internal::g_use_tsc.load(std::memory_order_relaxed);
}

}  // namespace gprof::collector
