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
// forced drain). After a signal, one bounded forced drain (DrainGpuBounded). Returns false when
// GPU collection is abandoned.
bool DrainGpuForExit(Profile* profile);

// After a signal (NoteSignalFlush) the signalled thread may be inside CUPTI holding a CUPTI lock,
// and any CUPTI call of the exit flush could wait on it until the signal's timeout
// (kSignalFlushTimeoutMs) kills the program with no dump. So the host data is built first, and
// every CUPTI call of that flush (the whole run's or last segment's drain, the last window's, the
// held windows') runs on a helper thread and is waited for only until kSignalGpuTryMs after the
// signal, one deadline for them all. When it passes, the dumps are written with their host data
// and GPU collection is abandoned (AbandonGpuCollection: nothing calls CUPTI again; the helper is
// left inside CUPTI). The window thread and the spill thread, which may be inside CUPTI too, are
// waited for until the same deadline (at least 100 ms); one that does not stop holds flush_mutex,
// so the dumps written before it are what is kept.
inline constexpr int kSignalGpuTryMs = 2000;
// DrainGpu (with our kinds first switched off when `stop_activity`), bounded after a signal as
// above; false when GPU collection is (or now becomes) abandoned. Callers hold flush_mutex.
bool DrainGpuBounded(Profile* profile, bool forced, bool stop_activity = false);
bool GpuAbandoned();
// Set by the signal flush thread before it runs the exit flush.
void NoteSignalFlush();
bool InSignalFlush();
// Milliseconds left until the signal's deadline (at least 0); -1 when no signal flush runs.
int SignalWaitLeftMs();

// ProfileInfo's GPU fields from the start result.
void SetGpuInfo(const GpuStartResult& gpu, ProfileInfo* info);

// Logs a dump (or a dump's segment) written to `path`: its size, and the host events it lost
// (warned once per process, then at info level). Caller holds flush_mutex.
void NoteDumpWritten(const Profile& profile, const std::string& path);

// Schedule windows (the WindowWriter passed to StartWindows): builds a profile of the window
// `span` — host records, plus GPU records drained into `gpu_pending` and moved in — cuts it to
// the window (window_cut.h; GPU records of later windows go back into `gpu_pending`), and writes
// it to WindowDumpPath. Returns the path written or "" on failure (logged); `*held` when the
// window waits for its GPU records (window_gpu.h SaveOrHoldWindow): the path it will be written to.
std::string WriteWindow(const WindowSpan& span, Profile* gpu_pending, bool* held) noexcept;

}  // namespace gprof::collector::lifecycle
