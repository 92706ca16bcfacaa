// The window thread (see window_thread.h): applies the step events that the step detectors
// (step_detectors.cpp) post, runs WindowTracker's decisions, switches GPU collection, and saves
// each completed window through the writer the runtime passed in.
//
// Rules: everything here runs on the window thread or at init/exit (cold: allocation, logging and
// CUPTI calls are fine). The detectors' hot-path rules are in step_detectors.cpp.
#include "collector/windows/window_thread.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "collector/cupti/gpu_collector.h"
#include "collector/host/host_collection.h"
#include "collector/host/nvtx_hooks.h"
#include "collector/host/nvtx_registry.h"
#include "collector/host/profile_builder.h"
#include "collector/host/thread_buffer.h"
#include "collector/windows/schedule.h"
#include "collector/windows/window_cut.h"
#include "collector/windows/window_state.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector::windows {

std::atomic<Windows*> g_windows{nullptr};

namespace {

std::atomic<bool> g_finished{false};
std::atomic<HeldWindowsHook> g_held_hook{nullptr};

void TickHeldWindows(Windows* w, bool exiting) {
  if (HeldWindowsHook hook = g_held_hook.load(std::memory_order_acquire)) {
    hook(&w->gpu_pending, exiting);
  }
}

// ---- Window thread --------------------------------------------------------------------------

// GPU activity (CUPTI activity kinds) and API-call recording run while a schedule window
// collects, and from one step before it, so the first calls and kernels of a window are never
// missed while CUPTI turns activity on. Capture ranges and time windows cannot be foreseen: there
// both stay on for the whole run and the window cut keeps only what belongs to each window.
void UpdateGpuActivity(Windows* w) {
  if (w->config.capture.kind == CaptureRange::Kind::kControl) {
    // Control captures: everything off while paused (CUPTI stays subscribed with no activity
    // kind on; NVTX hooks return after one load), on from the request to the save.
    const bool want = w->tracker.CollectingNowOrNext();
    SetGpuActivityEnabled(want);
    SetGpuCollectionEnabled(want);
    SetHostCollectionEnabled(want && w->config.nvtx);
    return;
  }
  if (!w->config.schedule.enabled()) return;
  // Idempotent in the session; repeated so that a session started after this decision (cuInit
  // after the first NVTX call) gets it too.
  const bool want = w->tracker.CollectingNowOrNext();
  SetGpuActivityEnabled(want);
  // API-call records too: the CUPTI hook still sees every call (step detection), but nothing is
  // stored during wait steps. NVTX keeps recording: its hooks also detect the steps, and a
  // push/pop costs tens of nanoseconds.
  SetGpuCollectionEnabled(want);
  const int64_t step = w->tracker.CurrentStep();
  const bool next = ScheduleAction(w->config.schedule, static_cast<uint64_t>(step + 1)) !=
                    StepAction::kNone;
  w->ready_through.store(!want ? -1 : next ? step + 1 : step, std::memory_order_release);
}

// Acts on the tracker's decisions for an event at `ts`. Outside windows, everything before the
// event is dropped right away, so wait steps hold no memory.
void Act(Windows* w, TrackerOutput out, uint64_t ts) {
  // Saves first: a window that ends where the next one begins needs its records before the
  // discard below drops everything older than the new window.
  struct Saved {
    uint32_t cycle;
    std::string path;
    bool partial;
  };
  std::vector<Saved> saved;
  for (WindowSpan& span : out.save) {
    // Losses since the previous saved window go into this one's counters.
    const uint64_t lost = w->lost.load(std::memory_order_relaxed);
    const uint64_t late = w->late_starts.load(std::memory_order_relaxed);
    span.events_lost = lost - w->lost_reported;
    span.starts_late = late - w->late_reported;
    w->lost_reported = lost;
    w->late_reported = late;
    bool held = false;
    const std::string path = w->write_window(span, &w->gpu_pending, &held);
    ResetHostRecordsBefore(span.end_ns, &OpenAtWindowStart::Visit, &WindowStartCarry());
    if (!held) saved.push_back({span.cycle, path, span.partial});  // else told when written
  }
  if (out.discard) {
    ResetHostRecordsBefore(out.discard_before_ns, &OpenAtWindowStart::Visit,
                           &WindowStartCarry());
    // At exit the held windows' last drain is the runtime's (bounded after a signal): none here.
    if (!g_finished.load(std::memory_order_acquire)) DrainGpu(&w->gpu_pending, /*forced=*/false);
    TickHeldWindows(w, /*exiting=*/false);  // late records of held windows first
    Profile none;
    CutWindow(&w->gpu_pending, out.discard_before_ns, UINT64_MAX, &none);
  }
  if (!w->tracker.InWindow() && !out.discard) {
    ResetHostRecordsBefore(ts, &OpenAtWindowStart::Visit, &WindowStartCarry());
  }
  UpdateGpuActivity(w);
  const ControlState state = w->tracker.InWindow()        ? ControlState::kCapturing
                             : w->tracker.ControlArmed() ? ControlState::kWaitingForStep
                                                         : ControlState::kPaused;
  w->control_state.store(static_cast<uint8_t>(state), std::memory_order_release);
  w->windows_saved.store(w->tracker.WindowsSaved(), std::memory_order_release);
  // Told last: a client that hears of a save and asks again at once (the control server's
  // `resume` after a capture) must find the state and the count that include it. Told first,
  // the server numbered the next capture with the old count and its pause waited forever.
  if (WindowSavedObserver o = w->saved_observer.load(std::memory_order_acquire)) {
    for (const Saved& v : saved) o(v.cycle, v.path, v.partial);
  }
}

// A control capture starts when the window thread applies it: collection goes on first, then
// the window opens at the time read after that, so no launch inside the window can miss its GPU
// record while CUPTI turns activity on. A pause closes at the time it is applied.
void ApplyControl(Windows* w, const Event& e) {
  if (e.kind == EventKind::kControlPause) {
    const uint64_t now = NowNs();
    Act(w, w->tracker.OnControlPause(now), now);
    return;
  }
  if (w->tracker.InWindow() || w->tracker.ControlArmed()) return;  // one capture at a time
  SetGpuActivityEnabled(true);
  SetGpuCollectionEnabled(true);
  SetHostCollectionEnabled(w->config.nvtx);
  const uint64_t now = NowNs();
  Act(w, w->tracker.OnControlCapture(now, e.duration_ns, e.steps), now);
}

void Apply(Windows* w, const Event& e) {
  switch (e.kind) {
    case EventKind::kStep:
      Act(w, w->tracker.OnStepBoundary(e.ts_ns, e.tid, e.number), e.ts_ns);
      break;
    case EventKind::kProgramProfiler:
      Act(w, w->tracker.OnProgramProfiler(e.ts_ns, e.tid), e.ts_ns);
      break;
    case EventKind::kCaptureStart: Act(w, w->tracker.OnCaptureStart(e.ts_ns), e.ts_ns); break;
    case EventKind::kCaptureStop: Act(w, w->tracker.OnCaptureStop(e.ts_ns), e.ts_ns); break;
    case EventKind::kControlCapture:
    case EventKind::kControlPause: ApplyControl(w, e); break;
  }
}

bool PostControl(const Event& e) {
  Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr || w->config.capture.kind != CaptureRange::Kind::kControl ||
      g_finished.load(std::memory_order_acquire) || !w->queue.Push(e)) {
    return false;
  }
  w->wake_seq.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, &w->wake_seq, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  return true;
}

void ThreadMain(Windows* w) {
  for (;;) {
    const uint32_t seen = w->wake_seq.load(std::memory_order_acquire);
    Event e;
    while (w->queue.Pop(&e)) Apply(w, e);
    const uint64_t now = NowNs();
    if (now >= w->tracker.NextDeadline()) Act(w, w->tracker.OnTime(now), now);
    UpdateGpuActivity(w);  // GPU collection may have started since the last decision
    TickHeldWindows(w, /*exiting=*/false);
    if (w->stop.load(std::memory_order_acquire)) {
      w->exited.store(true, std::memory_order_release);
      return;
    }
    // Sleep until woken, or until the next deadline (at most 100 ms, to notice `stop`).
    const uint64_t deadline = w->tracker.NextDeadline();
    uint64_t wait_ns = 100'000'000;
    if (deadline > now && deadline - now < wait_ns) wait_ns = deadline - now;
    timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000),
                static_cast<long>(wait_ns % 1'000'000'000)};
    syscall(SYS_futex, &w->wake_seq, FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
  }
}

}  // namespace
}  // namespace gprof::collector::windows

namespace gprof::collector {

using namespace windows;  // NOLINT: this folder's own namespace

bool StartWindows(const Config& config, uint64_t start_ns, WindowWriter writer) noexcept {
  try {
    if (g_windows.load(std::memory_order_acquire) != nullptr) return true;
    auto* w = new Windows(config, start_ns, writer);
    if (!w->tracker.windowed()) {
      delete w;
      return false;
    }
    w->queue.Init();
    for (auto& domain : w->api_class) {
      for (auto& slot : domain) slot.store(0, std::memory_order_relaxed);
    }
    if (config.step.kind == StepSource::Kind::kKernel) w->kernel_regex = std::regex(config.step.pattern);
    if (!config.capture.nvtx_domain.empty()) {
      // Interning by name: the program's nvtxDomainCreate of the same name gets this index.
      const NvtxDomainEntry* d = RegisterNvtxDomain(config.capture.nvtx_domain);
      w->capture_domain = d != nullptr ? d->index : UINT16_MAX;
    }
    g_windows.store(w, std::memory_order_release);
    SetNvtxObserver(&OnNvtx);
    SetApiHook(&OnApi);
    Act(w, w->tracker.Begin(), start_ns);
    w->thread = std::thread(ThreadMain, w);
    return true;
  } catch (const std::exception& e) {
    log::Warn(std::string("schedule windows could not start (") + e.what() +
              "); profiling the whole run instead");
    g_windows.store(nullptr, std::memory_order_release);
    return false;
  }
}

bool FinishWindows(uint64_t exit_ns, int wait_ms) noexcept {
  Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr || g_finished.exchange(true)) return true;
  try {
    w->stop.store(true, std::memory_order_release);
    w->wake_seq.fetch_add(1, std::memory_order_release);
    syscall(SYS_futex, &w->wake_seq, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    for (int i = 0; wait_ms >= 0 && !w->exited.load(std::memory_order_acquire); ++i) {
      if (i >= wait_ms) {
        w->thread.detach();  // inside CUPTI (or our flush mutex): it owns the windows now
        log::Warn("the window thread did not stop within " + std::to_string(wait_ms) +
                  " ms of the signal (waiting inside CUPTI?): the current window is not saved");
        return false;
      }
      ::usleep(1000);
    }
    if (w->thread.joinable()) w->thread.join();
    // The window thread is gone: the tracker is ours now. Apply what is still queued.
    Event e;
    while (w->queue.Pop(&e)) Apply(w, e);
    Act(w, w->tracker.OnTime(exit_ns), exit_ns);
    Act(w, w->tracker.OnExit(exit_ns), exit_ns);
    TickHeldWindows(w, /*exiting=*/true);  // windows still waiting for GPU records
    if (const uint64_t late = w->late_starts.load(std::memory_order_relaxed)) {
      log::Warn(std::to_string(late) + " window starts found the window thread more than " +
                std::to_string(kCatchUpWaitNs / 1'000'000) +
                " ms behind: the first GPU records of those windows may be missing");
    }
    if (const uint64_t lost = w->lost.load(std::memory_order_relaxed)) {
      log::Warn(std::to_string(lost) +
                " step boundaries were lost (event queue full): window step numbers may be off");
    }
  } catch (const std::exception& e) {
    log::Error(std::string("saving the last window failed: ") + e.what());
  }
  return true;
}

bool PostControlCapture(uint64_t duration_ns, uint32_t steps) noexcept {
  return PostControl({NowNs(), 0, EventKind::kControlCapture, steps, duration_ns});
}

bool PostControlPause() noexcept { return PostControl({NowNs(), 0, EventKind::kControlPause}); }

ControlStatus GetControlStatus() noexcept {
  ControlStatus out;
  const Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr || w->config.capture.kind != CaptureRange::Kind::kControl) return out;
  out.running = !g_finished.load(std::memory_order_acquire);
  out.state = static_cast<ControlState>(w->control_state.load(std::memory_order_acquire));
  out.windows_saved = w->windows_saved.load(std::memory_order_acquire);
  return out;
}

void SetWindowSavedObserver(WindowSavedObserver observer) noexcept {
  if (Windows* w = g_windows.load(std::memory_order_acquire)) {
    w->saved_observer.store(observer, std::memory_order_release);
  }
}

void NotifyWindowSaved(uint32_t cycle, const std::string& path, bool partial) noexcept {
  const Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr) return;
  if (WindowSavedObserver o = w->saved_observer.load(std::memory_order_acquire)) {
    o(cycle, path, partial);
  }
}

void SetHeldWindowsHook(HeldWindowsHook hook) noexcept {
  g_held_hook.store(hook, std::memory_order_release);
}

uint64_t WindowEventsLost() noexcept {
  const Windows* w = g_windows.load(std::memory_order_acquire);
  return w == nullptr ? 0 : w->lost.load(std::memory_order_relaxed);
}

}  // namespace gprof::collector

