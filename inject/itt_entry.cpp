// The ITT entry points (INTEL_LIBITTNOTIFY64 names this library; see
// collector/host/itt_hooks.h): ITT's static part, linked into libtorch, finds __itt_api_init and
// calls it with its global; we point the global's table at the three functions below, which are
// all PyTorch's ITT observer calls per op (string_handle_create, task_begin, task_end). The
// signatures are ittnotify.h's (an __itt_id is three 64-bit words, passed by value).
//
// Rules: as injection.cpp: noexcept, never fail the caller.
#include <cstddef>

#include "collector/lifecycle/runtime.h"

extern "C" {

struct GprofIttId {
  unsigned long long d1, d2, d3;
};

__attribute__((visibility("default"))) void* __itt_string_handle_create(const char* name) noexcept {
  return const_cast<void*>(gprof::collector::OnIttStringHandle(name));
}

__attribute__((visibility("default"))) void __itt_task_begin(const void* domain,
                                                             GprofIttId /*taskid*/,
                                                             GprofIttId /*parentid*/,
                                                             void* name) noexcept {
  gprof::collector::OnIttTaskBegin(domain, name);
}

__attribute__((visibility("default"))) void __itt_task_end(const void* domain) noexcept {
  gprof::collector::OnIttTaskEnd(domain);
}

__attribute__((visibility("default"))) void __itt_api_init(void* itt_global,
                                                           int /*init_groups*/) noexcept {
  static const gprof::collector::IttFunction kOurs[] = {
      {"__itt_string_handle_create", reinterpret_cast<void*>(&__itt_string_handle_create)},
      {"__itt_task_begin", reinterpret_cast<void*>(&__itt_task_begin)},
      {"__itt_task_end", reinterpret_cast<void*>(&__itt_task_end)},
  };
  gprof::collector::OnIttApiInit(itt_global, kOurs, sizeof kOurs / sizeof kOurs[0]);
}

}  // extern "C"
