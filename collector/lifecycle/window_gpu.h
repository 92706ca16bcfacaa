// GPU records at window ends and at exit, on a GPU that may never go idle.
//
// CUPTI's default flush hands back only buffers whose records are all complete, the forced flush
// every buffer, with the records of unfinished work incomplete and never delivered again
// (cupti_activity.h, cuptiActivityFlushAll and CUPTI_ACTIVITY_FLAG_FLUSH_FORCED). With shared
// buffers (PER_THREAD_ACTIVITY_BUFFER 0) on a GPU that never idles, the current buffer always
// holds queued work: a window end that forces a flush loses that work. So mid-run nothing here
// forces a flush. A window whose GPU records have not all arrived after a short wait is held
// (its host side already cut) and its late records are carried into it, by correlation id, as
// later drains bring them; it is written once it has them all, or at exit. Control captures
// (--start-paused, attach) are held the same way, at most kControlHoldMax: their client waits for
// the dump. At exit the default flush is polled for up to kExitGpuWait (as torch.profiler
// synchronizes in __exit__) before one forced flush takes what is left; after a signal, one
// bounded forced drain (flush.h DrainGpuBounded) instead.
//
// Calls awaited: those that put work on the GPU (CallMakesGpuWork: not empty or host-to-host
// copies and memsets, whose parameters the API callback reads), less those that make no record of
// their own: work queued into a stream under capture (CapturedCalls) and graph launches (a graph
// of host or empty nodes has no GPU record; the records a graph does make are still filed by its
// correlation id). A record that does arrive for a call not awaited is filed all the same.
//
// Threads: the window thread, or the exit flush after the window thread was joined; callers
// hold Runtime::flush_mutex (HeldWindowsTick takes it itself).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_set>

#include "model/profile.h"

namespace gprof::collector::lifecycle {

inline constexpr auto kWindowGpuWait = std::chrono::milliseconds(10);  // before holding
inline constexpr auto kExitGpuWait = std::chrono::seconds(1);
inline constexpr size_t kMaxHeldWindows = 16;
// A control capture is written by then at the latest, its missing records counted as launches
// without records: its client (`gprof-run capture`, `pause`, `attach`) waits for it.
inline constexpr auto kControlHoldMax = std::chrono::seconds(10);

// The correlation ids of the calls of `p` starting in [start_ns, end_ns) that await a GPU record
// (see above) and have none in `p` yet.
std::unordered_set<uint32_t> AwaitedGpuCalls(const Profile& p, uint64_t start_ns, uint64_t end_ns);

// Exit (our kinds off): drains CUPTI into `p` with the default flush until every awaited call of
// `p` has a record or kExitGpuWait has passed, then once forced, for whatever is left.
void DrainGpuAtExit(Profile* p);

// Writes a finished window profile (its checks already done) to `path`; false on failure.
using WindowFileWriter = bool (*)(const Profile& profile, const std::string& path);

// A window end: drains into `gpu_pending`, hands held windows their late records, then moves the
// rest into `window` (the window's host profile, not yet cut). The caller then cuts `window`.
void CollectWindowGpu(Profile* window, Profile* gpu_pending);

// Writes the cut `window` now when it has every record it awaits (after at most kWindowGpuWait of
// default flushes), else holds it (a `control` capture at most kControlHoldMax). A held window,
// once written, is announced with NotifyWindowSaved (windows/window_thread.h).
enum class WindowSave { kWritten, kFailed, kHeld };
WindowSave SaveOrHoldWindow(Profile&& window, const std::string& path, bool control,
                            Profile* gpu_pending, WindowFileWriter write);

// Window thread (each wake, rate-limited) and exit (`exiting`: poll, then force, then write every
// held window). Takes flush_mutex. Installed with SetHeldWindowsHook at the first hold.
void HeldWindowsTick(Profile* gpu_pending, bool exiting) noexcept;

}  // namespace gprof::collector::lifecycle
