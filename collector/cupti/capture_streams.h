// The streams under stream capture, process-wide, as the API callback sees the calls that begin,
// join and end a capture. Work queued into a capturing stream is captured into a graph and makes
// no GPU record of its own (cudaStreamBeginCapture: "Work queued into the stream will not be
// executed but will instead be captured into a graph"); work queued into any other stream runs,
// whichever thread queues it (a Relaxed-mode capture lets other threads queue into the capturing
// stream, and the capturing thread may queue into other streams meanwhile).
//
// A stream joins a capture when it waits on an event recorded in a capturing stream (CUDA
// Programming Guide, "Cross-stream Dependencies and Events": "the waiting stream ... joins the
// same capture graph"), and leaves it when that capture ends (cudaStreamEndCapture: every joined
// stream must have rejoined the origin stream by then).
//
// Threads: every method runs inside the CUPTI API callback on any application thread (hot path:
// lock-free fixed slots, no allocation). A lookup while another thread begins or ends a capture
// may see either side of it: the program orders those calls against its own launches. At most
// kSlots streams and kSlots events at once (a capture of more streams than that: the extra ones
// are taken as not capturing, so their calls are awaited like any other and a window holding one
// is written late). Constant-initialized: no global constructor in the preloaded library.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gprof::collector {

class CaptureStreams {
 public:
  static constexpr size_t kSlots = 64;

  // Whether any stream is capturing: one relaxed load, the only cost while none is.
  bool AnyOpen() const noexcept { return open_.load(std::memory_order_relaxed) > 0; }

  // A successful cu/cudaStreamBeginCapture* on `stream` (a stream key, call_params.h).
  void Begin(uintptr_t stream) noexcept { Add(streams_, stream, stream, /*count=*/true); }

  // cu/cudaStreamEndCapture on `stream`: it and every stream that joined its capture stop
  // capturing; events recorded into the capture are forgotten.
  void End(uintptr_t stream) noexcept {
    Slot* s = Find(streams_, stream);
    if (s == nullptr) return;
    const uintptr_t capture = s->capture.load(std::memory_order_relaxed);
    for (Slot& t : streams_) {
      if (t.capture.load(std::memory_order_relaxed) == capture && Clear(t)) {
        open_.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    for (Slot& e : events_) {
      if (e.capture.load(std::memory_order_relaxed) == capture) Clear(e);
    }
  }

  // cu/cudaEventRecord*(event, stream): an event recorded into a capturing stream carries that
  // capture to the streams that wait on it; one recorded elsewhere carries none.
  void Record(uintptr_t event, uintptr_t stream) noexcept {
    if (!AnyOpen()) return;  // no capture open: the event table is empty (End cleared it)
    Slot* s = Find(streams_, stream);
    const uintptr_t capture = s != nullptr ? s->capture.load(std::memory_order_relaxed) : 0;
    if (capture != 0) {
      Add(events_, event, capture, /*count=*/false);
    } else if (Slot* e = Find(events_, event)) {
      Clear(*e);
    }
  }

  // cu/cudaStreamWaitEvent(stream, event): `stream` joins the capture the event was recorded in.
  void Wait(uintptr_t stream, uintptr_t event) noexcept {
    if (!AnyOpen()) return;
    Slot* e = Find(events_, event);
    const uintptr_t capture = e != nullptr ? e->capture.load(std::memory_order_relaxed) : 0;
    if (capture != 0 && Find(streams_, stream) == nullptr) {
      Add(streams_, stream, capture, /*count=*/true);
    }
  }

  // Whether work queued into `stream` now is captured.
  bool Captured(uintptr_t stream) const noexcept {
    if (!AnyOpen()) return false;
    for (const Slot& s : streams_) {
      if (s.key.load(std::memory_order_relaxed) == stream) return true;
    }
    return false;
  }

 private:
  struct Slot {
    std::atomic<uintptr_t> key{0};      // stream or event key; 0: free
    std::atomic<uintptr_t> capture{0};  // the origin stream of its capture
  };

  static Slot* Find(Slot (&slots)[kSlots], uintptr_t key) noexcept {
    if (key == 0) return nullptr;
    for (Slot& s : slots) {
      if (s.key.load(std::memory_order_relaxed) == key) return &s;
    }
    return nullptr;
  }

  // Sets `key`'s capture, taking a free slot when `key` has none (counted in open_ when `count`).
  void Add(Slot (&slots)[kSlots], uintptr_t key, uintptr_t capture, bool count) noexcept {
    if (key == 0) return;
    if (Slot* s = Find(slots, key)) {
      s->capture.store(capture, std::memory_order_relaxed);
      return;
    }
    for (Slot& s : slots) {
      uintptr_t expected = 0;
      if (s.key.compare_exchange_strong(expected, key, std::memory_order_relaxed)) {
        s.capture.store(capture, std::memory_order_relaxed);
        if (count) open_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
  }

  // Frees `s`; true when this call freed it.
  static bool Clear(Slot& s) noexcept {
    uintptr_t key = s.key.load(std::memory_order_relaxed);
    if (key == 0) return false;
    s.capture.store(0, std::memory_order_relaxed);
    return s.key.compare_exchange_strong(key, 0, std::memory_order_relaxed);
  }

  Slot streams_[kSlots];
  Slot events_[kSlots];
  std::atomic<int> open_{0};
};

}  // namespace gprof::collector
