// The injection library's C ABI: the only exported symbols (see gprof_inject.map).
//   InitializeInjection       called by the CUDA driver at cuInit (CUDA_INJECTION64_PATH)
//   InitializeInjectionNvtx2  called by each NVTX client at its first NVTX call
//                             (NVTX_INJECTION64_PATH)
//   gprof_run_attach          called by `gprof-run attach` in a running process it injected the
//                             library into (launcher/attach/ptrace_inject.h; docs/ATTACH.md)
//   gprof_run_python_attach   called through ctypes by the Python hook's sampler at interpreter
//                             start-up, only with GPROF_PYTHON_SAMPLING on (docs/PYTHON_SAMPLING.md)
//   gprof_run_cupti_*, and the --preload interposition of three CUPTI functions:
//                             cupti_interpose.cpp
// There is no ELF constructor: loading the library, also with LD_PRELOAD, runs none of our code,
// and preloading needs none. The single init runs at the first CUDA or NVTX call either way (the
// driver and NVTX find these entry points through the env variables the launcher sets), so a
// program that never touches CUDA or NVTX is unaffected; with GPROF_PYTHON_SAMPLING on, a Python
// program's sampler runs it at interpreter start-up instead.
//
// Rules: these run on application threads inside the profiled program. Each is noexcept, catches
// everything, and returns success to its caller even when we fail (we then go inert); never
// exit() or abort(). No global objects with constructors or destructors live in this library.
#include <cstddef>
#include <cstdint>

#include "collector/lifecycle/runtime.h"

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection(void) noexcept {
  try {
    return gprof::collector::OnCudaInjection();
  } catch (...) {
    return 1;
  }
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) noexcept {
  try {
    return gprof::collector::OnNvtxInjection(get_export_table);
  } catch (...) {
    return 1;
  }
}

// Returns collector::AttachResult (0: a paused session runs; the launcher then captures).
__attribute__((visibility("default"))) int gprof_run_attach(const char* settings) noexcept {
  try {
    return gprof::collector::OnAttach(settings);
  } catch (...) {
    return gprof::collector::kAttachInitFailed;
  }
}

// Runs the one init and writes the dump's program name into `program` (runtime.h OnPythonAttach).
// Returns 1 when attached, 0 otherwise (the sampler then records nothing).
__attribute__((visibility("default"))) int gprof_run_python_attach(char* program,
                                                                   size_t size) noexcept {
  return gprof::collector::OnPythonAttach(program, size);
}

}  // extern "C"
