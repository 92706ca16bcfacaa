// The lifecycle's side of the hand-over to the program's own CUPTI profiler (runtime.h
// OnCuptiHandOver; collector/cupti/handover.cpp does the CUPTI part): the entry points the Python
// hook (around torch.profiler) and the --preload interposition (inject/cupti_interpose.cpp) call,
// serialized with every drain by flush_mutex.
//
// Rules: cold, on the program's thread that starts or stops its profiler; noexcept, never throws
// into the program; a failure is logged and leaves CUPTI as the program set it. No CUPTI callback
// runs these (the interposed calls are the program's own), so taking flush_mutex cannot nest.
#include <string>

#include "collector/cupti/gpu_collector.h"
#include "collector/lifecycle/runtime.h"
#include "collector/lifecycle/runtime_state.h"
#include "support/log.h"

namespace gprof::collector {

using namespace lifecycle;  // NOLINT: this folder's own namespace

namespace {

bool GpuStarted() { return g_gpu_state.load(std::memory_order_acquire) == kGpuStarted; }

}  // namespace

int OnCuptiHandOver() noexcept {
  try {
    if (!IsInitProcess()) return 0;
    log::Debug("CUPTI hand-over requested: the program's own profiler is about to start");
    if (!GpuStarted()) return 0;
    std::lock_guard<std::mutex> lock(g_rt->flush_mutex);
    return HandGpuCollectionOver(g_rt->gpu) ? 1 : 0;
  } catch (...) {
    log::Error("handing CUPTI over to the program's profiler failed");
    return 0;
  }
}

int OnCuptiTakeBack() noexcept {
  try {
    if (!IsInitProcess()) return 0;
    log::Debug("CUPTI take-back requested: the program's own profiler stopped");
    if (!GpuStarted()) return 0;
    std::lock_guard<std::mutex> lock(g_rt->flush_mutex);
    return TakeGpuCollectionBack(&g_rt->gpu) ? 1 : 0;
  } catch (...) {
    log::Error("taking CUPTI back from the program's profiler failed");
    return 0;
  }
}

int OnForeignRegisterCallbacks(void* requested, void* completed) noexcept {
  try {
    if (!IsOwnBufferCallback(requested)) OnCuptiHandOver();
    return ForwardCuptiRegisterCallbacks(requested, completed);
  } catch (...) {
    return ForwardCuptiRegisterCallbacks(requested, completed);
  }
}

int OnForeignActivityEnable(int kind) noexcept {
  try {
    NoteClientActivityKind(kind, /*enabled=*/true);
  } catch (...) {
  }
  return ForwardCuptiActivityEnable(kind);
}

int OnForeignActivityDisable(int kind) noexcept {
  bool last = false;
  try {
    if (KeepOwnActivityKind(kind)) return 0;  // CUPTI_SUCCESS: the records stay ours
    last = NoteClientActivityKind(kind, /*enabled=*/false);
  } catch (...) {
  }
  const int rc = ForwardCuptiActivityDisable(kind);
  if (last) OnCuptiTakeBack();  // the client's last kind is off: its profiler stopped
  return rc;
}

}  // namespace gprof::collector
