// Payloads of the NVTX host records (thread_buffer.h HostRecordType kNvtx*, kThreadName): what the
// NVTX hooks write on the program's threads and what profile_builder reads back at window end/exit.
//
// Threads: written by any application thread (NVTX hooks), read by the one cold builder thread.
// Plain POD structs, copied byte-for-byte into the thread buffers; names follow inline.
#pragma once

#include <cstdint>

namespace gprof::collector {

// How the inline name bytes after a payload are encoded.
enum class NvtxNameEncoding : uint8_t {
  kUtf8 = 0,        // ASCII / UTF-8 bytes (no terminator)
  kWide = 1,        // raw wchar_t units (UTF-32 on Linux); converted to UTF-8 by the builder
  kRegistered = 2,  // no inline bytes: `registered` is an id from NvtxRegistry
  kNone = 3,        // no message in the event attributes
};

// Push, range start and mark. Followed by the name bytes (see `encoding`).
struct NvtxBeginPayload {
  uint64_t ts_ns;
  uint64_t id;          // range id for kNvtxStart (nvtxRangeId_t); 0 otherwise
  uint32_t category;    // NVTX category (0 = none)
  uint32_t registered;  // registered string id when encoding == kRegistered
  uint16_t domain;      // NvtxRegistry domain index (0 = default domain)
  NvtxNameEncoding encoding;
  uint8_t pad0[5];
};
static_assert(sizeof(NvtxBeginPayload) == 32);

// Pop and range end.
struct NvtxEndPayload {
  uint64_t ts_ns;
  uint64_t id;      // range id for kNvtxEnd; 0 for a pop
  uint16_t domain;  // domain whose stack is popped (pop only)
  uint8_t pad0[6];
};
static_assert(sizeof(NvtxEndPayload) == 24);

// nvtxNameOsThread. Followed by the name bytes.
struct NvtxThreadNamePayload {
  uint32_t tid;  // the thread being named (not necessarily the caller)
  NvtxNameEncoding encoding;
  uint8_t pad0[3];
};
static_assert(sizeof(NvtxThreadNamePayload) == 8);

}  // namespace gprof::collector
