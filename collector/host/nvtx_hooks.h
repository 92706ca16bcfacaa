// NVTX injection: fills the NVTX client's CORE and CORE2 callback tables with our hooks. The hooks
// write begin/end records (nvtx_records.h) straight into the calling thread's buffer.
//
// Threads: InstallNvtxHooks runs inside InitializeInjectionNvtx2 (the first NVTX call of each
// NVTX instance in the process; cold). The hooks run on every application thread that calls
// NVTX: no allocation, no locks, no logging, no exceptions there (domain/string/category/thread
// naming hooks are cold and take the registry's lock).
#pragma once

#include <cstdint>

namespace gprof::collector {

// `get_export_table` is NVTX's NvtxGetExportTableFunc_t (kept opaque so this header needs no
// NVTX include). Returns false when the client's tables are unusable (then nothing is hooked).
// Called once per NVTX client instance (each library that compiled the NVTX headers).
bool InstallNvtxHooks(const void* (*get_export_table)(uint32_t));

// Hook point for schedule windows / capture ranges: called on the application thread right after
// a push, start or mark was recorded (and after each pop/end with name == nullptr). Must follow
// the hot-path rules. `name` is UTF-8 or nullptr for wide/unnamed events; not NUL-terminated.
// `range_id` is the nvtxRangeId_t for kStart/kEnd, 0 otherwise. `ts_ns` is CLOCK_REALTIME ns:
// HostTicksToNs (host_clock.h) of the record's timestamp, so a cut at ts_ns keeps that record.
enum class NvtxEventKind : uint8_t { kPush, kPop, kStart, kEnd, kMark };
using NvtxObserver = void (*)(NvtxEventKind kind, uint16_t domain, const char* name,
                              uint32_t name_len, uint64_t ts_ns, uint64_t range_id);
// Cold. nullptr removes the observer.
void SetNvtxObserver(NvtxObserver observer);

struct NvtxStringEntry;
// PyTorch op ranges that arrive through ITT (itt_hooks.h): a push of the registered string
// `name` flagged kNvtxTorchOp on the default domain, and its pop. The same hot-path rules and the
// same observer as nvtxRangePush/Pop, so step globs and capture ranges see torch ops either way.
void PushTorchOp(const NvtxStringEntry* name) noexcept;
void PopTorchOp() noexcept;

}  // namespace gprof::collector
