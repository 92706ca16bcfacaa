// Window thread and step detectors (see window_thread.h).
//
// Rules: the functions in the "program threads" section run inside NVTX hooks and CUPTI
// callbacks: no allocation, locks, logging, exceptions or I/O there, except (1) the first launch
// of each distinct kernel name when a kernel-regex step source is configured (std::regex runs
// once and the result is cached by name pointer) and (2) the futex wake syscall. Everything else
// runs on the window thread or at init/exit.
#include "collector/window_thread.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <regex>
#include <string>
#include <thread>

#include "collector/cupti_api_filter.h"
#include "collector/cupti_hooks.h"
#include "collector/gpu_collector.h"
#include "collector/host_collection.h"
#include "collector/nvtx_hooks.h"
#include "collector/nvtx_registry.h"
#include "collector/step_glob.h"
#include "collector/runtime.h"
#include "collector/thread_buffer.h"
#include "collector/window_schedule.h"
#include "collector/window_profile.h"
#include "collector/window_tracker.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector {
namespace {

enum class EventKind : uint8_t { kStep = 1, kCaptureStart = 2, kCaptureStop = 3 };

struct Event {
  uint64_t ts_ns;
  uint32_t tid;
  EventKind kind;
};

// Bounded multi-producer single-consumer queue (Vyukov's cell-sequence design): producers claim a
// slot with one CAS and publish it with a release store; no locks, no allocation.
class EventQueue {
 public:
  static constexpr uint32_t kSize = 4096;  // power of two; steps are rare, this is plenty
  bool Push(const Event& e) {
    uint64_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c = cells_[pos & (kSize - 1)];
      const uint64_t seq = c.seq.load(std::memory_order_acquire);
      if (seq == pos) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.event = e;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (seq < pos) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }
  bool Pop(Event* e) {
    Cell& c = cells_[head_ & (kSize - 1)];
    if (c.seq.load(std::memory_order_acquire) != head_ + 1) return false;
    *e = c.event;
    c.seq.store(head_ + kSize, std::memory_order_release);
    ++head_;
    return true;
  }
  void Init() {
    for (uint32_t i = 0; i < kSize; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

 private:
  struct Cell {
    std::atomic<uint64_t> seq;
    Event event;
  };
  Cell cells_[kSize];
  std::atomic<uint64_t> tail_{0};
  uint64_t head_ = 0;  // consumer only
};

// Kernel-name regex results cached by the name pointer CUPTI hands us (stable per kernel).
class KernelMatchCache {
 public:
  static constexpr uint32_t kSlots = 4096;
  // 1 = matches, 0 = does not, -1 = not known yet (run the regex, then Store).
  int Lookup(const char* name) const {
    const uint32_t h = Hash(name);
    for (uint32_t i = 0; i < 8; ++i) {
      const Slot& s = slots_[(h + i) & (kSlots - 1)];
      const char* key = s.key.load(std::memory_order_acquire);
      if (key == name) {
        const int state = s.state.load(std::memory_order_acquire);
        return state == kPending ? -1 : state == kMatch ? 1 : 0;
      }
      if (key == nullptr) return -1;
    }
    return -1;
  }
  // Claims a free slot for `name` (or finds its own) and publishes the result there. A slot
  // whose key is another kernel's is never written.
  void Store(const char* name, bool match) {
    const uint32_t h = Hash(name);
    for (uint32_t i = 0; i < 8; ++i) {
      Slot& s = slots_[(h + i) & (kSlots - 1)];
      const char* expected = nullptr;
      if (s.key.compare_exchange_strong(expected, name, std::memory_order_acq_rel) ||
          expected == name) {
        s.state.store(match ? kMatch : kNoMatch, std::memory_order_release);
        return;
      }
    }
    // Probe window full: the regex simply runs again next time.
  }

 private:
  static uint32_t Hash(const char* p) {
    const auto v = reinterpret_cast<uintptr_t>(p);
    return static_cast<uint32_t>((v >> 4) * 2654435761u);
  }
  enum : int { kPending = 0, kNoMatch = 1, kMatch = 2 };
  struct Slot {
    std::atomic<const char*> key{nullptr};
    std::atomic<int> state{kPending};  // written after the key is claimed
  };
  Slot slots_[kSlots];
};

struct Windows {
  Config config;
  WindowTracker tracker;
  EventQueue queue;
  KernelMatchCache kernel_cache;
  std::regex kernel_regex;
  uint16_t capture_domain = 0;  // registry index of GPROF_NVTX_CAPTURE's DOMAIN (0 = default)
  // API-name matches cached per (domain, cbid): 0 unknown, 1 step, 2 profiler start, 3 profiler
  // stop, 4 nothing.
  std::atomic<uint8_t> api_class[2][1024];
  std::atomic<uint32_t> wake_seq{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> lost{0};
  // Step boundaries posted so far (program threads), and the last step through which the window
  // thread has switched GPU collection on (-1: none). A boundary that begins a collecting step
  // waits, bounded, until the window thread has caught up (see Post).
  std::atomic<uint64_t> step_posts{0};
  std::atomic<int64_t> ready_through{-1};
  std::atomic<uint64_t> late_starts{0};  // waits that hit the bound
  uint64_t lost_reported = 0;            // window thread only: already in a saved window
  uint64_t late_reported = 0;
  std::thread thread;
  Profile gpu_pending;  // GPU records drained but not yet assigned to a window (window thread)
  Windows(const Config& c, uint64_t start_ns) : config(c), tracker(c, start_ns) {}
};

// Built at init and deliberately never freed.
std::atomic<Windows*> g_windows{nullptr};  // release-published once by StartWindows
std::atomic<bool> g_finished{false};

// ---- Program threads ------------------------------------------------------------------------

// The window thread switches GPU collection on one step ahead of a collecting step. A program
// whose steps are shorter than the window thread's wake-up (tens of microseconds) would outrun
// that, so a boundary that begins a collecting step the window thread has not yet prepared waits
// for it, at most kCatchUpWaitNs. Steps are counted here exactly as WindowTracker counts them; in
// a real training loop the thread is long ready and this is one atomic load per step.
constexpr uint64_t kCatchUpWaitNs = 20'000'000;

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

void Post(EventKind kind, uint64_t ts) {
  Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr || HostInert()) return;
  if (!w->queue.Push({ts, CurrentTid(), kind})) {
    w->lost.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  w->wake_seq.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, &w->wake_seq, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  if (kind == EventKind::kStep && w->config.schedule.enabled()) {
    // NVTX sources: the i-th boundary begins step i; end-of-step sources: step i+1.
    const uint64_t first = w->config.step.kind == StepSource::Kind::kNvtx ? 0 : 1;
    WaitForWindowThread(w, w->step_posts.fetch_add(1, std::memory_order_relaxed) + first);
  }
}

bool NameEquals(const std::string& want, const char* name, uint32_t len) {
  return name != nullptr && want.size() == len && std::memcmp(want.data(), name, len) == 0;
}

// Per-thread depth of the open NVTX capture range (push/pop) and its start/end id.
thread_local int t_push_depth __attribute__((tls_model("initial-exec"))) = 0;
thread_local int t_capture_depth __attribute__((tls_model("initial-exec"))) = -1;
std::atomic<uint64_t> g_capture_range_id{0};

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
  if (c.schedule.enabled() && c.step.kind == StepSource::Kind::kNvtx && begins &&
      NameMatchesGlob(c.step.pattern, name, len)) {
    Post(EventKind::kStep, ts);
  }
}

// Once per (domain, cbid). CUPTI's functionName may or may not carry a version suffix
// (cudaLaunchKernel_v7000): both sides are compared by BaseApiName.
uint8_t ClassifyApi(const Config& c, const char* function_name) {
  if (function_name == nullptr) return 4;
  const std::string_view name = BaseApiName(function_name);
  if (c.schedule.enabled() && c.step.kind == StepSource::Kind::kApi &&
      BaseApiName(c.step.pattern) == name) {
    return 1;
  }
  if (c.capture.kind == CaptureRange::Kind::kCudaProfilerApi) {
    if (name == "cudaProfilerStart" || name == "cuProfilerStart") return 2;
    if (name == "cudaProfilerStop" || name == "cuProfilerStop") return 3;
  }
  return 4;
}

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
    if (cls == 1) Post(EventKind::kStep, e.ts_ns);
    if (cls == 2) Post(EventKind::kCaptureStart, e.ts_ns);
    if (cls == 3) Post(EventKind::kCaptureStop, e.ts_ns);
  }
  if (c.schedule.enabled() && c.step.kind == StepSource::Kind::kKernel && e.is_launch &&
      e.symbol_name != nullptr) {
    int match = w->kernel_cache.Lookup(e.symbol_name);
    if (match < 0) {
      // Once per distinct kernel: std::regex may allocate; the result is cached.
      try {
        match = std::regex_search(e.symbol_name, w->kernel_regex) ? 1 : 0;
      } catch (...) {
        match = 0;
      }
      w->kernel_cache.Store(e.symbol_name, match == 1);
    }
    if (match == 1) Post(EventKind::kStep, e.ts_ns);
  }
}

// ---- Window thread --------------------------------------------------------------------------

// GPU activity (CUPTI activity kinds) and API-call recording run while a schedule window
// collects, and from one step before it, so the first calls and kernels of a window are never
// missed while CUPTI turns activity on. Capture ranges and time windows cannot be foreseen: there
// both stay on for the whole run and the window cut keeps only what belongs to each window.
void UpdateGpuActivity(Windows* w) {
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
  for (WindowSpan& span : out.save) {
    // Losses since the previous saved window go into this one's counters.
    const uint64_t lost = w->lost.load(std::memory_order_relaxed);
    const uint64_t late = w->late_starts.load(std::memory_order_relaxed);
    span.events_lost = lost - w->lost_reported;
    span.starts_late = late - w->late_reported;
    w->lost_reported = lost;
    w->late_reported = late;
    WriteWindow(span, &w->gpu_pending);
    ResetHostRecordsBefore(span.end_ns);
  }
  if (out.discard) {
    ResetHostRecordsBefore(out.discard_before_ns);
    DrainGpu(&w->gpu_pending, /*forced=*/false);
    Profile none;
    CutWindow(&w->gpu_pending, out.discard_before_ns, UINT64_MAX, &none);
  }
  if (!w->tracker.InWindow() && !out.discard) {
    ResetHostRecordsBefore(ts);
  }
  UpdateGpuActivity(w);
}

void Apply(Windows* w, const Event& e) {
  switch (e.kind) {
    case EventKind::kStep: Act(w, w->tracker.OnStepBoundary(e.ts_ns, e.tid), e.ts_ns); break;
    case EventKind::kCaptureStart: Act(w, w->tracker.OnCaptureStart(e.ts_ns), e.ts_ns); break;
    case EventKind::kCaptureStop: Act(w, w->tracker.OnCaptureStop(e.ts_ns), e.ts_ns); break;
  }
}

void ThreadMain(Windows* w) {
  for (;;) {
    const uint32_t seen = w->wake_seq.load(std::memory_order_acquire);
    Event e;
    while (w->queue.Pop(&e)) Apply(w, e);
    const uint64_t now = NowNs();
    if (now >= w->tracker.NextDeadline()) Act(w, w->tracker.OnTime(now), now);
    UpdateGpuActivity(w);  // GPU collection may have started since the last decision
    if (w->stop.load(std::memory_order_acquire)) return;
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

bool StartWindows(const Config& config, uint64_t start_ns) noexcept {
  try {
    if (g_windows.load(std::memory_order_acquire) != nullptr) return true;
    auto* w = new Windows(config, start_ns);
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

void FinishWindows(uint64_t exit_ns) noexcept {
  Windows* w = g_windows.load(std::memory_order_acquire);
  if (w == nullptr || g_finished.exchange(true)) return;
  try {
    w->stop.store(true, std::memory_order_release);
    w->wake_seq.fetch_add(1, std::memory_order_release);
    syscall(SYS_futex, &w->wake_seq, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    if (w->thread.joinable()) w->thread.join();
    // The window thread is gone: the tracker is ours now. Apply what is still queued.
    Event e;
    while (w->queue.Pop(&e)) Apply(w, e);
    Act(w, w->tracker.OnTime(exit_ns), exit_ns);
    Act(w, w->tracker.OnExit(exit_ns), exit_ns);
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
}

uint64_t WindowEventsLost() noexcept {
  const Windows* w = g_windows.load(std::memory_order_acquire);
  return w == nullptr ? 0 : w->lost.load(std::memory_order_relaxed);
}

}  // namespace gprof::collector
