// Step detectors: the NVTX observer and the CUPTI API hook that find step boundaries and capture
// starts/stops in the running program and post them to the window thread (window_state.h).
//
// Rules: everything here runs inside NVTX hooks and CUPTI callbacks on program threads: no
// allocation, locks, logging, exceptions or I/O, except (1) the first launch of each distinct
// kernel name when a kernel-regex step source is configured (std::regex runs once and the result
// is cached) and (2) the futex wake syscall.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <regex>
#include <string>
#include <string_view>

#include "collector/cupti/api_filter.h"
#include "collector/host/host_collection.h"
#include "collector/host/nvtx_hooks.h"
#include "collector/host/thread_buffer.h"
#include "collector/windows/schedule.h"
#include "collector/windows/step_glob.h"
#include "collector/windows/window_state.h"

namespace gprof::collector::windows {

namespace {

// The window thread switches GPU collection on one step ahead of a collecting step. A program
// whose steps are shorter than the window thread's wake-up (tens of microseconds) would outrun
// that, so a boundary that begins a collecting step the window thread has not yet prepared waits
// for it, at most kCatchUpWaitNs. Steps are counted here exactly as WindowTracker counts them; in
// a real training loop the thread is long ready and this is one atomic load per step.
void WaitForWindowThread(Windows* w, uint64_t step) {
  if (ScheduleAction(w->config.schedule, step) == StepAction::kNone) return;
  const int64_t want = static_cast<int64_t>(step);
  if (w->ready_through.load(std::memory_order_acquire) >= want) return;
  timespec pause{0, 20'000};
  for (uint64_t waited = 0; waited < kCatchUpWaitNs; waited += 20'000) {
    nanosleep(&pause, nullptr);
    if (w->ready_through.load(std::memory_order_acquire) >= want) return;
  }
  w->late_starts.fetch_add(1, std::memory_order_relaxed);
}

void Post(EventKind kind, uint64_t ts, int64_t number = -1) {
  Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr || HostInert()) return;
  Event e{ts, CurrentTid(), kind};
  e.number = number;
  if (!w->queue.Push(e)) {
    w->lost.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  w->wake_seq.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, &w->wake_seq, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  if (kind == EventKind::kStep && w->config.schedule.enabled()) {
    if (number >= 0) {
      // The program's own number: waited for only when it follows the last one (a number out of
      // sequence starts from nothing, which the window thread could not foresee).
      const uint64_t want = static_cast<uint64_t>(number);
      if (w->step_posts.exchange(want + 1, std::memory_order_relaxed) == want) {
        WaitForWindowThread(w, want);
      }
      return;
    }
    // NVTX sources: the i-th boundary begins step i; end-of-step sources: step i+1.
    const uint64_t first = w->config.step.kind == StepSource::Kind::kNvtx ? 0 : 1;
    WaitForWindowThread(w, w->step_posts.fetch_add(1, std::memory_order_relaxed) + first);
  }
}

bool NameEquals(std::string_view want, const char* name, uint32_t len) {
  return name != nullptr && want.size() == len && std::memcmp(want.data(), name, len) == 0;
}

// The exact text of the Python hook's mark (python/gprof_run_hook/_gprof_run_torch.py,
// MARK_PROFILER_STARTED), made right after torch started the program's own profiler.
constexpr std::string_view kProgramProfilerStarted = "gprof-run: torch.profiler started";

// Per-thread depth of the open NVTX capture range (push/pop) and its start/end id.
thread_local int t_push_depth __attribute__((tls_model("initial-exec"))) = 0;
thread_local int t_capture_depth __attribute__((tls_model("initial-exec"))) = -1;
std::atomic<uint64_t> g_capture_range_id{0};

// Whether step boundaries are wanted now: always for a schedule; for control captures only
// while one is waiting for its first step or running (one relaxed load), so that a paused
// program posts nothing.
bool StepsWanted(const Windows* w) {
  if (w->config.schedule.enabled()) return true;
  return w->config.capture.kind == CaptureRange::Kind::kControl &&
         w->control_state.load(std::memory_order_relaxed) != 0;
}

}  // namespace

void OnNvtx(NvtxEventKind kind, uint16_t domain, const char* name, uint32_t len, uint64_t ts,
            uint64_t id) noexcept {
  Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr) return;
  const Config& c = w->config;
  const bool begins = kind == NvtxEventKind::kPush || kind == NvtxEventKind::kStart ||
                      kind == NvtxEventKind::kMark;
  if (c.capture.kind == CaptureRange::Kind::kNvtx) {
    const bool capture_domain = domain == w->capture_domain;
    if (kind == NvtxEventKind::kPush) {
      if (capture_domain && t_capture_depth < 0 && NameEquals(c.capture.nvtx_name, name, len)) {
        t_capture_depth = t_push_depth;
        Post(EventKind::kCaptureStart, ts);
      }
      ++t_push_depth;
    } else if (kind == NvtxEventKind::kPop) {
      if (t_push_depth > 0) --t_push_depth;
      if (t_capture_depth >= 0 && t_push_depth == t_capture_depth) {
        t_capture_depth = -1;
        Post(EventKind::kCaptureStop, ts);
      }
    } else if (kind == NvtxEventKind::kStart && capture_domain &&
               NameEquals(c.capture.nvtx_name, name, len)) {
      uint64_t expected = 0;
      if (g_capture_range_id.compare_exchange_strong(expected, id)) {
        Post(EventKind::kCaptureStart, ts);
      }
    } else if (kind == NvtxEventKind::kEnd && id != 0) {
      uint64_t expected = id;
      if (g_capture_range_id.compare_exchange_strong(expected, 0)) {
        Post(EventKind::kCaptureStop, ts);
      }
    }
  }
  if (StepsWanted(w) && c.step.kind == StepSource::Kind::kNvtx && begins &&
      StepNameMatches(c.step.pattern, name, len)) {
    Post(EventKind::kStep, ts, ProgramStepNumber(name, len));
  }
  // The Python hook's mark: the program's own torch.profiler has just started on this thread.
  if (kind == NvtxEventKind::kMark && c.schedule.enabled() && domain == 0 &&
      NameEquals(kProgramProfilerStarted, name, len)) {
    Post(EventKind::kProgramProfiler, ts);
  }
}

namespace {

// Once per (domain, cbid). CUPTI's functionName may or may not carry a version suffix
// (cudaLaunchKernel_v7000): both sides are compared by BaseApiName.
uint8_t ClassifyApi(const Config& c, const char* function_name) {
  if (function_name == nullptr) return 4;
  const std::string_view name = BaseApiName(function_name);
  const bool steps = c.schedule.enabled() || c.capture.kind == CaptureRange::Kind::kControl;
  if (steps && c.step.kind == StepSource::Kind::kApi && BaseApiName(c.step.pattern) == name) {
    return 1;
  }
  if (c.capture.kind == CaptureRange::Kind::kCudaProfilerApi) {
    if (name == "cudaProfilerStart" || name == "cuProfilerStart") return 2;
    if (name == "cudaProfilerStop" || name == "cuProfilerStop") return 3;
  }
  return 4;
}

}  // namespace

void OnApi(const ApiHookEvent& e) noexcept {
  Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr) return;
  const Config& c = w->config;
  if (e.cbid < 1024) {
    std::atomic<uint8_t>& slot = w->api_class[e.domain == ApiDomain::kRuntime ? 0 : 1][e.cbid];
    uint8_t cls = slot.load(std::memory_order_relaxed);
    if (cls == 0) {
      cls = ClassifyApi(c, e.function_name);
      slot.store(cls, std::memory_order_relaxed);
    }
    // A call that ends a step belongs to it (torch's prof.step() at the end of an iteration):
    // the boundary is its return. Capture ranges open and close on entry, as before.
    if (cls == 1 && e.exit && StepsWanted(w)) Post(EventKind::kStep, e.ts_ns);
    if (cls == 2 && !e.exit) Post(EventKind::kCaptureStart, e.ts_ns);
    if (cls == 3 && !e.exit) Post(EventKind::kCaptureStop, e.ts_ns);
  }
  // The launch of a matching kernel ends its step: the boundary is the launch call's return, so
  // the launch and its kernel belong to the step they end.
  if (c.step.kind == StepSource::Kind::kKernel && e.exit && e.is_launch &&
      e.symbol_name != nullptr && StepsWanted(w)) {
    const KernelMatchCache::Key key = KernelMatchCache::KeyOf(e.symbol_name);
    int match = w->kernel_cache.Lookup(key);
    if (match < 0) {
      // Once per distinct kernel: std::regex may allocate; the result is cached.
      try {
        match = std::regex_search(e.symbol_name, w->kernel_regex) ? 1 : 0;
      } catch (...) {
        match = 0;
      }
      w->kernel_cache.Store(key, match == 1);
    }
    if (match == 1) Post(EventKind::kStep, e.ts_ns);
  }
}
}  // namespace gprof::collector::windows
