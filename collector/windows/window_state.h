// State shared by the step detectors (step_detectors.cpp, on program threads) and the window
// thread (window_thread.cpp), internal to collector/windows/: the lock-free event queue between
// them, the kernel-name match cache, and the one Windows object built at init and never freed.
#pragma once

#include <atomic>
#include <cstdint>
#include <regex>
#include <thread>

#include "collector/cupti/gpu_collector.h"
#include "collector/windows/kernel_match_cache.h"
#include "collector/windows/tracker.h"
#include "collector/windows/window_thread.h"
#include "config/config.h"
#include "model/profile.h"

namespace gprof::collector::windows {

enum class EventKind : uint8_t {
  kStep = 1,
  kCaptureStart = 2,
  kCaptureStop = 3,
  kControlCapture = 4,  // collector/control/: duration_ns, steps
  kControlPause = 5,
  kProgramProfiler = 6,  // the program's own torch.profiler started (the Python hook's mark)
};

struct Event {
  uint64_t ts_ns;
  uint32_t tid;
  EventKind kind;
  uint32_t steps = 0;         // kControlCapture
  uint64_t duration_ns = 0;   // kControlCapture
  int64_t number = -1;        // kStep: the program's own step number (ProfilerStep#N), or -1
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
  std::atomic<bool> exited{false};  // the window thread has seen `stop` and returns
  std::atomic<uint64_t> lost{0};
  // Step boundaries posted so far (program threads; after a numbered boundary, its number + 1),
  // and the last step through which the window thread has switched GPU collection on (-1: none). A boundary that begins a collecting step
  // waits, bounded, until the window thread has caught up (see Post).
  std::atomic<uint64_t> step_posts{0};
  std::atomic<int64_t> ready_through{-1};
  std::atomic<uint64_t> late_starts{0};  // waits that hit the bound
  uint64_t lost_reported = 0;            // window thread only: already in a saved window
  uint64_t late_reported = 0;
  std::thread thread;
  Profile gpu_pending;  // GPU records drained but not yet assigned to a window (window thread)
  WindowWriter write_window = nullptr;  // saves one completed window (the runtime's writer)
  // Control captures: published by the window thread after each decision (ControlStatus), and
  // told about each saved window (SetWindowSavedObserver).
  std::atomic<uint8_t> control_state{0};
  std::atomic<uint32_t> windows_saved{0};
  std::atomic<WindowSavedObserver> saved_observer{nullptr};
  Windows(const Config& c, uint64_t start_ns, WindowWriter writer)
      : config(c), tracker(c, start_ns), write_window(writer) {}
};

// Release-published once by StartWindows (window_thread.cpp); never freed.
extern std::atomic<Windows*> g_windows;

// The step detectors installed by StartWindows (step_detectors.cpp): the NVTX observer and the
// CUPTI API hook. Program threads; hot-path rules.
void OnNvtx(NvtxEventKind kind, uint16_t domain, const char* name, uint32_t len, uint64_t ts,
            uint64_t id) noexcept;
void OnApi(const ApiHookEvent& e) noexcept;

// A boundary that begins a collecting step waits at most this long for the window thread to have
// switched GPU collection on (step_detectors.cpp; the window thread warns about waits that hit it).
inline constexpr uint64_t kCatchUpWaitNs = 20'000'000;

}  // namespace gprof::collector::windows
