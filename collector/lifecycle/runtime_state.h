// The injection library's process-wide state, internal to collector/lifecycle/: the one Runtime
// (config, process identity, GPU start result, the dump writers' mutex) and the atomics that
// init (init.cpp), the flushes (flush.cpp) and the signal handler (signals.cpp) share.
// Constant-initialized globals only: no constructor runs when the library is loaded (it may be
// preloaded), and nothing is freed at exit (atexit handlers of other libraries may still record).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <mutex>

#include "collector/cupti/gpu_collector.h"
#include "config/config.h"
#include "model/profile.h"

namespace gprof::collector::lifecycle {

enum InitState : int { kFresh = 0, kRunning = 1, kDone = 2, kFailed = 3 };
enum GpuState : int { kGpuNone = 0, kGpuStarting = 1, kGpuStarted = 2 };

// The signals that flush the profile before the program dies of them.
inline constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
// How long a signal waits for the flush; then it kills the program without a dump.
inline constexpr int kSignalFlushTimeoutMs = 20000;

struct Runtime {
  Config config;
  ProfileInfo info;
  GpuStartResult gpu;  // written before g_gpu_state becomes kGpuStarted
  // Serializes dump writers (exit flush, window writes). Held while draining CUPTI: safe because
  // no hook or CUPTI callback ever takes it. Lock order: flush_mutex -> NvtxRegistry mutex.
  std::mutex flush_mutex;
};

extern std::atomic<int> g_init_state;
extern std::atomic<int> g_gpu_state;
extern Runtime* g_rt;          // published by the release store of kDone
extern pid_t g_pid;            // the pid that ran init
extern bool g_windows_active;  // schedule windows / capture ranges (set once at init)

// True in the process that ran init, once init is done, unless it went inert.
bool IsInitProcess();

// Runs the one init exactly once per process (init.cpp); concurrent callers wait for it. True
// when the runtime is usable in this process.
bool EnsureInit();

}  // namespace gprof::collector::lifecycle
