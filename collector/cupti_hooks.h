// The one call point from CUPTI's API callback into schedule/step logic (windows, kernel- and
// API-based step detection, cudaProfilerStart/Stop capture). The schedule code installs a hook;
// the callback calls it on API entry for every runtime call and every driver call made directly
// (not from inside a runtime call), whether or not collection is on, before the call runs.
//
// Threads: the hook runs on application threads inside a CUPTI callback: it must follow the hot
// path rules (no allocation, locks, logging, exceptions, I/O). SetApiHook is cold (init).
#pragma once

#include <cstdint>

#include "model/records.h"

namespace gprof::collector {

struct ApiHookEvent {
  uint64_t ts_ns;
  const char* function_name;  // CUPTI's name for the API ("cudaProfilerStart", ...)
  const char* symbol_name;    // launched kernel's name for launch calls, else nullptr
  uint32_t correlation_id;
  uint16_t cbid;
  ApiDomain domain;
  bool is_launch;             // launch-like (REFERENCE.md §1 list, graphs included)
};

using ApiHook = void (*)(const ApiHookEvent& event) noexcept;

// Installs (or, with nullptr, removes) the hook. Only one hook: the schedule owns it.
void SetApiHook(ApiHook hook);

}  // namespace gprof::collector
