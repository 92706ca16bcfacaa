// The hand-over entry points of the C ABI (collector/lifecycle/runtime.h OnCuptiHandOver):
//   gprof_run_cupti_hand_over   the Python hook, through ctypes, before the program's
//   gprof_run_cupti_take_back   torch.profiler takes CUPTI and after it stopped (docs/PYTORCH.md)
//   cuptiActivityRegisterCallbacks, cuptiActivityEnable, cuptiActivityDisable
//                               with --preload (LD_PRELOAD) these interpose libcupti's own for
//                               the program's C/C++ CUPTI clients: a registration of buffer
//                               callbacks that are not ours hands CUPTI over first; the client's
//                               kinds are followed so that CUPTI is taken back once it has
//                               disabled them all. Each forwards to the real definition (the next
//                               one in the search order) and returns its result unchanged.
// Loaded without LD_PRELOAD (CUDA_INJECTION64_PATH) these three are not in the program's search
// scope and only gprof_run_cupti_* can be reached.
//
// Rules: as injection.cpp: noexcept, never throw into the program, return the program's result.
// The CUPTI types stay in collector/: these use the C ABI's equivalents (CUptiResult and
// CUpti_ActivityKind are int-sized enums; the callbacks are plain function pointers).
#include <cstddef>
#include <cstdint>

#include "collector/lifecycle/runtime.h"

extern "C" {

__attribute__((visibility("default"))) int gprof_run_cupti_hand_over(void) noexcept {
  return gprof::collector::OnCuptiHandOver();
}

__attribute__((visibility("default"))) int gprof_run_cupti_take_back(void) noexcept {
  return gprof::collector::OnCuptiTakeBack();
}

using BufferRequestedFn = void (*)(uint8_t**, size_t*, size_t*);
using BufferCompletedFn = void (*)(void*, uint32_t, uint8_t*, size_t, size_t);

__attribute__((visibility("default"))) int cuptiActivityRegisterCallbacks(
    BufferRequestedFn requested, BufferCompletedFn completed) noexcept {
  return gprof::collector::OnForeignRegisterCallbacks(reinterpret_cast<void*>(requested),
                                                      reinterpret_cast<void*>(completed));
}

__attribute__((visibility("default"))) int cuptiActivityEnable(int kind) noexcept {
  return gprof::collector::OnForeignActivityEnable(kind);
}

__attribute__((visibility("default"))) int cuptiActivityDisable(int kind) noexcept {
  return gprof::collector::OnForeignActivityDisable(kind);
}

}  // extern "C"
