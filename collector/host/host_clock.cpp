// Host clock: TSC detection, calibration knots and the ticks -> CLOCK_REALTIME ns map (the
// contract is in host_clock.h).
//
// Rules (in-process code): CalibrateFromStamp and HostTicksToNs run on application threads inside
// NVTX hooks and CUPTI callbacks: no allocation, no waiting lock (g_writer is a try-lock: a thread
// that finds it taken skips), no syscall (clock_gettime is a vDSO read when the clocksource is
// tsc, the only case where knots are taken). InitHostClock and CalibrateHostClock are cold.
//
// Knots live in one MAP_NORESERVE mapping made at init and never freed; a knot is written once,
// before the release store of g_knot_count that publishes it, and never changed. The map for a
// tick t uses the last knot whose tick is <= t (the first knot for earlier ticks):
//   ns(t) = knot.ns + (t - knot.tick) * knot.ns_per_tick
// A new knot takes effect 100 us after its pair was read (so no tick that someone may already have
// converted changes value), is continuous with the previous segment there, and its slope is the
// measured TSC rate (realtime over TSC since the baseline pair). When the map lags realtime, the
// knot steps forward to it (stamps keep their order). When it runs ahead, a bounded correction
// slews the offset away over the next interval (stepping back could swap two stamps' order) and
// a second knot at the end of that interval returns to the measured rate; only an offset above
// kStepLimitNs (a realtime jump, or a long quiet stretch early in the run) is stepped back.
#include "collector/host/host_clock.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace gprof::collector {
namespace {

struct Knot {
  uint64_t tick;
  uint64_t ns;
  double ns_per_tick;
};

constexpr uint32_t kMaxKnots = 1u << 21;        // at most 10 a second: days of knots
constexpr double kMinIntervalNs = 1e6;          // 1 ms between knots early in the run ...
constexpr double kMaxIntervalNs = 200e6;        // ... growing to 200 ms
constexpr double kMaxSlewRate = 200e-6;         // slewing changes the rate by at most 200 ppm
constexpr double kStepLimitNs = 50e3;           // larger offsets are stepped
constexpr double kKnotLeadNs = 100e3;           // a knot takes effect this long after its pair

// All constant-initialized (no global constructor). Written by the knot writer only, under
// g_writer; read lock-free through g_knot_count (acquire).
Knot* g_knots = nullptr;
std::atomic<uint32_t> g_knot_count{0};
std::atomic<bool> g_writer{false};     // try-lock of the knot writer
std::atomic<int> g_init_state{0};      // 0 not yet, 1 in progress, 2 done
std::atomic<bool> g_live{false};       // some tick was converted on the hot path (set for good)
// Baseline pair for the measured rate (writer only).
uint64_t g_base_tick = 0;
uint64_t g_base_ns = 0;

inline uint64_t RealtimeNs() { return NowNs(); }

bool TscIsInvariant() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &a, &b, &c, &d) == 0) return false;
  return (d & (1u << 8)) != 0;
#else
  return false;
#endif
}

bool ClocksourceIsTsc() {
  const int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                        O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[32] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  return n >= 3 && std::strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

// One (tsc, realtime) pair, the realtime read bracketed by two TSC reads: the pair with the
// tightest bracket of a few tries, its TSC the bracket's midpoint.
void SamplePair(uint64_t* tick, uint64_t* ns) {
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const uint64_t a = host_clock_internal::ReadTsc();
    const uint64_t r = RealtimeNs();
    const uint64_t b = host_clock_internal::ReadTsc();
    if (b >= a && b - a < best_width) {
      best_width = b - a;
      *tick = a + (b - a) / 2;
      *ns = r;
    }
  }
}

inline const Knot& KnotFor(const Knot* knots, uint32_t count, uint64_t tick) {
  // Recent ticks (the hot path's observer, cuts near now) are at the end: look there first.
  if (tick >= knots[count - 1].tick) return knots[count - 1];
  uint32_t lo = 0, hi = count - 1;  // knots[hi].tick > tick
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (knots[mid].tick <= tick) lo = mid; else hi = mid;
  }
  return knots[lo];
}

inline uint64_t Apply(const Knot& k, uint64_t tick) {
  if (tick >= k.tick) {
    return k.ns + static_cast<uint64_t>(static_cast<double>(tick - k.tick) * k.ns_per_tick);
  }
  const uint64_t back = static_cast<uint64_t>(static_cast<double>(k.tick - tick) * k.ns_per_tick);
  return back < k.ns ? k.ns - back : 0;
}

double IntervalNs(uint64_t since_base_ns) {
  return std::clamp(static_cast<double>(since_base_ns) / 4, kMinIntervalNs, kMaxIntervalNs);
}

// Appends a knot from a fresh pair. Caller holds g_writer; TSC mode is on. `forced`: also when
// the calibration is not due yet (profile builds). `stamp`: the tick of the stamp that found the
// calibration due (0 for none); nobody has converted it yet.
void AddKnot(bool forced, uint64_t stamp) {
  using host_clock_internal::g_calibration_due;
  const uint32_t count = g_knot_count.load(std::memory_order_acquire);
  if (count == 0 || count >= kMaxKnots) return;  // full: the last segment extrapolates
  uint64_t tick = 0, ns = 0;
  SamplePair(&tick, &ns);
  const Knot& last = g_knots[count - 1];
  // Another thread added the knot meanwhile.
  if (!forced && tick < g_calibration_due.load(std::memory_order_relaxed)) return;
  if (tick <= last.tick) {  // the last knot still lies ahead
    g_calibration_due.store(last.tick + static_cast<uint64_t>(kMinIntervalNs / last.ns_per_tick),
                            std::memory_order_relaxed);
    return;
  }
  if (tick <= g_base_tick || ns <= g_base_ns) {
    // Realtime went back past the baseline: restart the rate baseline here, keep the map.
    g_base_tick = tick;
    g_base_ns = ns;
    g_calibration_due.store(tick + static_cast<uint64_t>(kMinIntervalNs / last.ns_per_tick),
                            std::memory_order_relaxed);
    return;
  }
  const double measured =
      static_cast<double>(ns - g_base_ns) / static_cast<double>(tick - g_base_tick);
  const double interval_ns = IntervalNs(ns - g_base_ns);
  // Where the knot takes effect. Once ticks are converted live (an NVTX observer or API hook: a
  // window cut converts them again later), kKnotLeadNs after the pair, so that no tick anyone
  // may have converted already changes value. Otherwise at the stamp that found the calibration
  // due (so that stamp, possibly the first after a long quiet stretch, gets the fresh pair), or at
  // the pair.
  uint64_t at = tick;
  if (g_live.load(std::memory_order_relaxed)) {
    at = tick + static_cast<uint64_t>(kKnotLeadNs / last.ns_per_tick);
  } else if (stamp > last.tick && stamp <= tick) {
    at = stamp;
  }
  Knot k;
  k.tick = at;
  const uint64_t mapped = Apply(last, at);
  // Realtime at `at`, from the pair and the measured rate. In integer ns: a double holds
  // CLOCK_REALTIME ns (~2^61) only to 256 ns, too coarse to tell a step forward from a step back
  // (it made "forward" steps go back by up to ~130 ns and swap stamps taken that close).
  const uint64_t real =
      at >= tick ? ns + static_cast<uint64_t>(static_cast<double>(at - tick) * measured)
                 : ns - static_cast<uint64_t>(static_cast<double>(tick - at) * measured);
  // > 0: the map runs ahead
  const double offset = static_cast<double>(static_cast<int64_t>(mapped - real));
  if (std::fabs(measured / last.ns_per_tick - 1) > 1e-3) {
    // Realtime jumped (the measured rate is off by more than any real oscillator): step to it and
    // measure the rate afresh from here.
    k.ns = real;
    k.ns_per_tick = last.ns_per_tick;
    g_base_tick = tick;
    g_base_ns = ns;
  } else if (offset <= 0 || offset > kStepLimitNs) {
    // Step to the measured realtime. Forward (the map lags): no two stamps change order. Back by
    // more than kStepLimitNs: a long quiet stretch early in the run, worth a rare inversion.
    k.ns = real;
    k.ns_per_tick = measured;
  } else {
    // Continuous: slew the offset away over the next interval, at a bounded rate, then go on at
    // the measured rate (a second knot, so that a quiet stretch after this one does not keep
    // correcting an offset that is long gone).
    k.ns = mapped;
    const double slew = std::min(offset / interval_ns, kMaxSlewRate);
    k.ns_per_tick = measured * (1 - slew);
    if (count + 1 < kMaxKnots) {
      const uint64_t end_tick = k.tick + static_cast<uint64_t>(interval_ns / measured);
      g_knots[count] = k;
      g_knots[count + 1] = Knot{end_tick, Apply(k, end_tick), measured};
      g_knot_count.store(count + 2, std::memory_order_release);
      g_calibration_due.store(end_tick, std::memory_order_relaxed);
      return;
    }
  }
  g_knots[count] = k;
  g_knot_count.store(count + 1, std::memory_order_release);
  g_calibration_due.store(k.tick + static_cast<uint64_t>(interval_ns / k.ns_per_tick),
                          std::memory_order_relaxed);
}

bool TryAddKnot(bool forced, uint64_t stamp) {
  if (g_writer.exchange(true, std::memory_order_acquire)) return false;
  AddKnot(forced, stamp);
  g_writer.store(false, std::memory_order_release);
  return true;
}

}  // namespace

namespace host_clock_internal {

void CalibrateFromStamp(uint64_t tsc) noexcept {
  // A thread that finds another one adding a knot skips: that one sets the next due tick.
  (void)TryAddKnot(/*forced=*/false, tsc);
}

}  // namespace host_clock_internal

bool InitHostClock() noexcept {
  int expected = 0;
  if (!g_init_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    // Another thread is deciding (microseconds). Bounded: a child forked mid-init keeps realtime.
    for (int i = 0; i < 100000 && g_init_state.load(std::memory_order_acquire) != 2; ++i) {
      std::this_thread::yield();
    }
    return HostClockUsesTsc();
  }
  bool tsc = TscIsInvariant() && ClocksourceIsTsc();
  if (tsc) {
    void* mem = ::mmap(nullptr, sizeof(Knot) * kMaxKnots, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    tsc = mem != MAP_FAILED;
    if (tsc) g_knots = static_cast<Knot*>(mem);
  }
  if (tsc) {
    // A first rate from two pairs 1 ms apart (good to ~1e-5 even on a busy VM: it spans the quiet
    // stretches before the first stamps); the knots that follow measure it over ever longer
    // baselines. Costs 1 ms once per process.
    uint64_t t0 = 0, n0 = 0, t1 = 0, n1 = 0;
    SamplePair(&t0, &n0);
    do {
      SamplePair(&t1, &n1);
    } while (n1 < n0 + 1'000'000 && n1 >= n0);
    tsc = t1 > t0 && n1 > n0;
    if (tsc) {
      g_base_tick = t0;
      g_base_ns = n0;
      g_knots[0] = Knot{t1, n1, static_cast<double>(n1 - n0) / static_cast<double>(t1 - t0)};
      g_knot_count.store(1, std::memory_order_release);
      host_clock_internal::g_calibration_due.store(
          t1 + static_cast<uint64_t>(kMinIntervalNs / g_knots[0].ns_per_tick),
          std::memory_order_relaxed);
    }
  }
  host_clock_internal::g_use_tsc.store(tsc, std::memory_order_relaxed);
  g_init_state.store(2, std::memory_order_release);
  return tsc;
}

uint64_t HostTicksToNsLive(uint64_t ticks) noexcept {
  if (!g_live.load(std::memory_order_relaxed)) g_live.store(true, std::memory_order_relaxed);
  return HostTicksToNs(ticks);
}

uint64_t HostTicksToNs(uint64_t ticks) noexcept {
  if (!HostClockUsesTsc()) return ticks;
  const uint32_t count = g_knot_count.load(std::memory_order_acquire);
  if (count == 0) return ticks;
  return Apply(KnotFor(g_knots, count, ticks), ticks);
}

void CalibrateHostClock() noexcept {
  if (!HostClockUsesTsc()) return;
  // Cold callers wait a little for a concurrent writer (it finishes in well under a microsecond),
  // but never for good: in a child forked while a parent thread held the try-lock it stays taken.
  for (int i = 0; i < 1000; ++i) {
    if (TryAddKnot(/*forced=*/true, 0)) return;
    std::this_thread::yield();
  }
}

uint32_t HostClockKnots() noexcept { return g_knot_count.load(std::memory_order_relaxed); }

}  // namespace gprof::collector
