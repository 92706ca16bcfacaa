// The Python sampler's side of the lifecycle (runtime.h OnPythonAttach): the one init, run from
// the Python hook at interpreter start-up when GPROF_PYTHON_SAMPLING is on, so that a Python
// program that never calls CUDA or NVTX still gets a dump (its time range bounds the samples) and
// the sampler learns the name the dump will have.
//
// Rules: cold, runs once per process on the interpreter's main thread with the GIL held (through
// ctypes). noexcept; failure is "not attached" and the sampler then stops quietly.
#include <cstring>
#include <string>

#include "collector/lifecycle/runtime.h"
#include "collector/lifecycle/runtime_state.h"

namespace gprof::collector {

int OnPythonAttach(char* program, size_t size) noexcept {
  try {
    if (program == nullptr || size == 0 || !lifecycle::EnsureInit()) return 0;
    const std::string& name = lifecycle::g_rt->info.program;
    if (name.size() + 1 > size) return 0;
    std::memcpy(program, name.c_str(), name.size() + 1);
    return 1;
  } catch (...) {
    return 0;
  }
}

}  // namespace gprof::collector
