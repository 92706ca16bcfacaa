// The dump writers: the exit flush (whole-run dump, or the last partial window) and the window
// writer that schedule windows call at each window end. Both build the profile (host records,
// then the GPU records drained from CUPTI), write it atomically and log the outcome; they are
// serialized by Runtime::flush_mutex. Cold: atexit handler, signal flush thread, window thread.
#pragma once

#include <string>

#include "collector/cupti/gpu_collector.h"
#include "collector/windows/tracker.h"
#include "model/profile.h"

namespace gprof::collector::lifecycle {

// g_flush_state: kFlushNone, kFlushDone, or (> 0) the tid of the thread running the exit flush.
// One atomic, so that the signal handler can tell "running on this very thread" without a race.
inline constexpr int kFlushNone = 0;
inline constexpr int kFlushDone = -1;
int FlushState();

// The calling thread's tid by a raw syscall: async-signal-safe (no TLS, unlike CurrentTid()).
int CallerTid();

// The exit flush's one GPU drain (whole run, or its last segment), flush_mutex held: our kinds off
// first, so that nothing arrives after it (the session's stop then hands back nothing unread),
// then DrainGpuAtExit into `profile` (the default flush polled for up to kExitGpuWait, then one
// forced drain). After a signal (SignalFlush) the signalled thread may hold
// a CUPTI lock, and the drain could wait on it until the signal's timeout kills the program with
// no dump: then it runs on a helper thread for at most kSignalGpuTryMs, and when that runs out
// the dump is written with its host data and GPU collection is abandoned (GpuAbandoned: nothing
// calls CUPTI again). Returns false when abandoned.
inline constexpr int kSignalGpuTryMs = 2000;
bool DrainGpuForExit(Profile* profile);
bool GpuAbandoned();
// Set by the signal flush thread before it runs the exit flush.
void NoteSignalFlush();

// ProfileInfo's GPU fields from the start result.
void SetGpuInfo(const GpuStartResult& gpu, ProfileInfo* info);

// Logs a dump (or a dump's segment) written to `path`: its size, and the host events it lost
// (warned once per process, then at info level). Caller holds flush_mutex.
void NoteDumpWritten(const Profile& profile, const std::string& path);

// Schedule windows (the WindowWriter passed to StartWindows): builds a profile of the window
// `span` — host records, plus GPU records drained into `gpu_pending` and moved in — cuts it to
// the window (window_cut.h; GPU records of later windows go back into `gpu_pending`), and writes
// it to WindowDumpPath. Returns the path written or "" on failure (logged).
std::string WriteWindow(const WindowSpan& span, Profile* gpu_pending) noexcept;

}  // namespace gprof::collector::lifecycle
