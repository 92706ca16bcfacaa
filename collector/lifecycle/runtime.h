// The injection library's lifecycle, as inject/ sees it: one init shared by the CUDA and NVTX
// entry points, and the exit flush that writes the dump. inject/ is a thin C ABI over these.
//
// collector/lifecycle/ holds what runs once per process or at its edges: init (init.cpp), the
// dump writers for exit and windows (flush.*), signals (signals.*), fork and the Python exit hook
// (init.cpp), and who the process is (process_identity.*). It may include every other collector
// folder; nothing else in the collector includes it (windows get the window writer passed in).
//
// Threads: the On* entry points run on whichever application thread first calls CUDA or NVTX
// (possibly several at once: init is guarded by one atomic state and runs exactly once). The exit
// flush runs in the atexit handler or on the flush thread started at init (woken by a signal
// handler). All of these are cold; nothing here runs on the hot path. Every function is
// noexcept: failures are logged once and make the library inert; the program keeps running.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gprof::collector {

// InitializeInjection (CUDA driver, at cuInit): init, then start GPU collection once. Returns 1.
int OnCudaInjection() noexcept;
// InitializeInjectionNvtx2 (each NVTX client instance): init, then hook that instance's tables.
// Returns 1 (also when NVTX collection is off: the client then turns every call into a no-op).
int OnNvtxInjection(const void* (*get_export_table)(uint32_t)) noexcept;
// Loading the library (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH or LD_PRELOAD) runs no code
// of ours: the one init runs at the first of the two entry points above (or at OnPythonAttach).

// gprof_run_attach (`gprof-run attach`: the launcher's ptrace injector dlopens the library into a
// running process and calls this on the thread it borrowed): `settings` is "KEY=VALUE" lines of
// GPROF_* settings the launcher validated. Runs the one init with them (start paused), starts
// GPU collection late (CUDA ran before us) and the control server, so the launcher can capture
// as from a --start-paused program; later NVTX clients find the library through
// NVTX_INJECTION64_PATH. A second attach finds the session running and returns kAttachOk.
enum AttachResult : int {
  kAttachOk = 0,
  kAttachAlreadyProfiled = 2,  // gprof-run started this program without --start-paused
  kAttachInitFailed = 3,       // the init failed (the library is inert; the program's stderr)
  kAttachNoSession = 4,        // the control server did not start (the program's stderr says why)
};
int OnAttach(const char* settings) noexcept;

// ITT (INTEL_LIBITTNOTIFY64, PyTorch's ITT op ranges; collector/host/itt_hooks.h):
// __itt_api_init points ITT's table at `ours` (no init: it may run inside libtorch's static
// initializers). __itt_string_handle_create runs the one init at its first call (the program's
// first op), then returns the cached handle for `name`. Begin/end are the per-op hot path.
struct IttFunction {
  const char* name;  // as ITT's static part looks it up: "__itt_task_begin"
  void* function;
};
void OnIttApiInit(void* itt_global, const IttFunction* ours, size_t count) noexcept;
const void* OnIttStringHandle(const char* name) noexcept;
void OnIttTaskBegin(const void* domain, const void* handle) noexcept;
void OnIttTaskEnd(const void* domain) noexcept;

// gprof_run_python_attach (the Python hook's sampler, docs/PYTHON_SAMPLING.md): runs the one
// init and copies the program name of this process's dump names (`<program>.<pid>.gpdump`) into
// `program` (NUL-terminated). 1 when attached, 0 when the library is inert or `size` too small.
int OnPythonAttach(char* program, size_t size) noexcept;

// The program's own CUPTI profiler (collector/cupti/handover.cpp). gprof_run_cupti_hand_over /
// gprof_run_cupti_take_back: the Python hook calls them through ctypes before torch.profiler
// prepares or starts a profile with CUDA activity and after it stops (docs/PYTORCH.md). 1 when
// CUPTI changed hands now, 0 otherwise (not collecting, already done). The --preload interposition
// (inject/cupti_interpose.cpp) of cuptiActivityRegisterCallbacks hands over before forwarding a
// registration that is not ours; of cuptiActivityEnable/Disable, takes back once the client has
// disabled every kind it enabled since. Each returns the forwarded CUptiResult.
int OnCuptiHandOver() noexcept;
int OnCuptiTakeBack() noexcept;
int OnForeignRegisterCallbacks(void* requested, void* completed) noexcept;
int OnForeignActivityEnable(int kind) noexcept;
int OnForeignActivityDisable(int kind) noexcept;

// The exit flush: writes the whole-run dump once (later calls return at once, or wait for a flush
// in progress on another thread). Called by the atexit handler and the signal flush thread.
void FlushAtExit() noexcept;

}  // namespace gprof::collector
