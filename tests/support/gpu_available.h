// Whether this machine has a usable GPU, for the gpu-labelled tests (they skip without one).
#pragma once

#include <dlfcn.h>

#include <string>

namespace gprof::testing {

// cuInit(0) through a dlopen'ed libcuda.so.1, so this binary needs no driver to start.
inline bool GpuAvailable(std::string* why) {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr) {
    *why = "no libcuda.so.1 (no NVIDIA driver)";
    return false;
  }
  using CuInit = int (*)(unsigned int);
  auto cu_init = reinterpret_cast<CuInit>(dlsym(cuda, "cuInit"));
  if (cu_init == nullptr) {
    *why = "libcuda.so.1 lacks cuInit";
    return false;
  }
  int rc = cu_init(0);
  if (rc != 0) {
    *why = "cuInit failed with CUresult " + std::to_string(rc);
    return false;
  }
  return true;
}

}  // namespace gprof::testing
