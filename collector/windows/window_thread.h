// Schedule windows and capture ranges in the running program: step detection on the program's
// threads, decisions and window saving on our own window thread.
//
// How it works. While windows are configured, host events (NVTX, API calls) are always recorded
// — recording costs tens of nanoseconds and the window thread trims old records at every step
// boundary — so a window is cut from exact timestamps and nothing is lost to the latency of a
// decision. Step boundaries and capture starts/stops are detected on the program's threads by
// the NVTX observer and the CUPTI API hook, which only push {kind, ts, tid} into a lock-free
// queue and wake the window thread. The window thread runs WindowTracker (tracker.h),
// turns GPU activity on one step ahead of a collecting step and off after it, discards warmup
// and wait steps, and saves each completed window through the WindowWriter it was given.
//
// Threads: the observer/hook functions run on application threads (hot-path rules: no
// allocation, locks, logging or exceptions; the kernel-name regex runs once per distinct kernel
// and is then cached by name content, kernel_match_cache.h). StartWindows and FinishWindows are
// cold (init, exit).
#pragma once

#include <cstdint>

#include <string>

#include "collector/windows/tracker.h"
#include "config/config.h"
#include "model/profile.h"

namespace gprof::collector {

// Saves one completed window: builds its profile (host records, plus GPU records drained into
// `gpu_pending`, of which those of later windows stay there), writes it and returns the path
// ("" on failure). A window whose GPU records have not all arrived is held instead (`*held`):
// the path is the one it will get, and the writer tells the saved-window observer itself once
// the dump is written (NotifyWindowSaved). The runtime passes its writer in (lifecycle/flush.h's
// WriteWindow): windows/ never includes lifecycle/. Called on the window thread, or at exit by
// FinishWindows.
using WindowWriter = std::string (*)(const WindowSpan& span, Profile* gpu_pending,
                                     bool* held) noexcept;

// At init: when the config asks for windows, installs the step/capture detectors and starts the
// window thread. Returns true when windows are active (the runtime then writes window dumps
// instead of one whole-run dump).
bool StartWindows(const Config& config, uint64_t start_ns, WindowWriter writer) noexcept;

// At exit (before the runtime's own flush): stops the window thread and saves a partly recorded
// window. Idempotent. `wait_ms` >= 0 (after a signal): the window thread is waited for that long
// at most, since it may be inside CUPTI waiting on a lock the signalled thread holds; false when
// it did not stop in time (nothing more is saved then, and the window state is left to it).
bool FinishWindows(uint64_t exit_ns, int wait_ms = -1) noexcept;

// Windows held until their late GPU records arrive (lifecycle/window_gpu.h) are finished by a
// hook the runtime installs at the first hold: the window thread calls it on each wake and
// before it drops old GPU records, and FinishWindows once more at the end with `exiting`. Cold.
using HeldWindowsHook = void (*)(Profile* gpu_pending, bool exiting) noexcept;
void SetHeldWindowsHook(HeldWindowsHook hook) noexcept;

// Step-boundary events that could not be queued (queue full): reported as a warning at exit.
uint64_t WindowEventsLost() noexcept;

// Control captures (--start-paused; collector/control/ calls these from its own thread). Each
// posts a request that the window thread applies in order: a capture of `steps` steps (> 0),
// else of `duration_ns` (0: until a pause); a pause. False when windows do not run with
// CaptureRange::Kind::kControl, or the queue is full. Cold.
bool PostControlCapture(uint64_t duration_ns, uint32_t steps) noexcept;
bool PostControlPause() noexcept;
enum class ControlState : uint8_t { kPaused = 0, kWaitingForStep = 1, kCapturing = 2 };
struct ControlStatus {
  bool running = false;  // windows run with control captures
  ControlState state = ControlState::kPaused;
  uint32_t windows_saved = 0;  // captures saved so far (the next one's number)
};
ControlStatus GetControlStatus() noexcept;
// Called on the window thread (or at exit) after each window is saved, with its number and the
// dump's path ("" when writing failed). Cold; one observer (the control server).
using WindowSavedObserver = void (*)(uint32_t cycle, const std::string& path,
                                     bool partial) noexcept;
void SetWindowSavedObserver(WindowSavedObserver observer) noexcept;
// Tells the observer of a held window's save (the writer, when the window's dump is written; any
// thread holding the runtime's flush mutex). Cold.
void NotifyWindowSaved(uint32_t cycle, const std::string& path, bool partial) noexcept;

}  // namespace gprof::collector
