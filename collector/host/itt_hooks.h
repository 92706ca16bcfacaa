// ITT (Intel's Instrumentation and Tracing Technology API) as a second way in for PyTorch's op
// ranges, cheaper than NVTX: torch's ITT observer (ProfilerState.ITT) pushes each op's bare name
// (torch/csrc/profiler/stubs/itt.cpp: __itt_string_handle_create(name) then __itt_task_begin),
// where its NVTX observer first formats "name, seq = N, op_id = M" into a new string per op.
//
// How the library gets them: ITT's static part, linked into libtorch (ittnotify_static.c), loads
// the shared library named by INTEL_LIBITTNOTIFY64 (the launcher points it at libgprof_inject.so)
// at the first ITT call, and, because ours exports __itt_api_init ("version 2" collector), calls
// it with its __itt_global; we point the global's API table at our functions (the rest at the
// static part's own null implementations, as ittapi's reference collector does). inject/ exports
// the functions; this file holds what they do.
//
// Threads: FillIttApi runs once, on whichever thread made the first ITT call (possibly inside
// libtorch's static initializers). IttStringHandle and the pushes/pops (nvtx_hooks.h
// PushTorchOp/PopTorchOp) run on every thread that runs torch ops, per op: a per-thread cache
// keyed by the name pointer (checked with a string compare, since torch may reuse the storage of
// a user scope's name for another one); a miss registers the string (the registry's lock).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/host/nvtx_registry.h"

namespace gprof::collector {

// The parts of ittnotify_config.h's __itt_global and __itt_api_info we touch (x86-64/aarch64
// Linux, #pragma pack(8)): the table is a NULL-name-terminated array of
// {name, func_ptr, init_func, null_func, group}.
struct IttApiInfo {
  const char* name;
  void** func_ptr;
  void* init_func;
  void* null_func;
  int group;
};

// __itt_api_init: points the global's table entries named names[i] (the names ITT's static part
// looks up, "__itt_task_begin") at functions[i], and every other entry at its null
// implementation. False (nothing changed) when `itt_global` does not carry ITT's magic.
bool FillIttApi(void* itt_global, const char* const* names, void* const* functions,
                size_t count) noexcept;

// __itt_string_handle_create: our handle for `name` (the same handle for the same text), or
// nullptr. Torch passes it back to __itt_task_begin.
const void* IttStringHandle(const char* name) noexcept;

// True when an ITT task's `domain` (ittnotify.h's __itt_domain: {int flags; const char* nameA;
// ...}) is PyTorch's ("PyTorch", torch/csrc/profiler/stubs/itt.cpp). Other libraries with ITT's
// static part (an OpenMP or TBB runtime) may load this collector too; their tasks are not torch
// ops and are not recorded. The domain's address is cached after the first match.
bool IttIsTorchDomain(const void* domain) noexcept;

// __itt_task_begin's name: the registered entry behind `handle`. A handle may also be one the
// static part made itself (a call that raced ITT's own initialization gets the static
// implementation of __itt_string_handle_create, whose __itt_string_handle starts with the
// name's `const char* strA`): those are recognized by the missing magic and looked up by name.
// nullptr for nullptr.
const NvtxStringEntry* IttEntryOf(const void* handle) noexcept;

}  // namespace gprof::collector
