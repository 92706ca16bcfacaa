// Per-thread host event buffers: the only thing the program's threads write to.
//
// Threads: Append* runs on any application thread (NVTX hooks) and on the thread of a CUPTI API
// callback. Visit/Reset run on one cold thread (exit, window end) and never concurrently with
// each other.
// Rules on the Append path: no allocation (except the one-time registration of a new thread, which
// takes a chunk from a preallocated arena), no locks, no logging, no exceptions, no syscalls.
//
// Design: one arena (mmap'd once at Init, MAP_NORESERVE, capped by GPROF_HOST_BUFFER_MIB) cut into
// fixed-size chunks. A thread owns a chain of chunks; it takes a new chunk with one atomic
// fetch_add on the arena cursor. Each record is [u16 size][u8 type][u8 flags][u32 reserved]
// followed by its payload, padded to 8 bytes. A thread publishes its write position with a
// release store, so a visitor sees only whole records. When the arena is exhausted the record
// is dropped and counted (Counters::host_events_dropped).
#pragma once

#include <cstdint>

namespace gprof::collector {

enum class HostRecordType : uint8_t {
  kNvtxPush = 1,    // payload: NvtxBeginPayload + inline UTF-8 name
  kNvtxPop = 2,     // payload: NvtxEndPayload
  kNvtxStart = 3,   // payload: NvtxBeginPayload + inline name (id = range id)
  kNvtxEnd = 4,     // payload: NvtxEndPayload (id = range id)
  kNvtxMark = 5,    // payload: NvtxBeginPayload + inline name
  kThreadName = 6,  // payload: u32 tid + inline name
  kApiCall = 7,     // payload: gprof::ApiCall (model/records.h)
  kStep = 8,        // payload: gprof::Step (schedule windows)
};

// Largest payload one record may carry; longer NVTX names are truncated to fit.
inline constexpr uint32_t kMaxHostPayload = 1024;

// Creates the arena. Cold; call once before any Append. Returns false if mmap failed (then every
// Append drops and counts).
bool InitThreadBuffers(uint64_t arena_bytes);

// Appends one record to the calling thread's buffer. Returns false (and counts a drop) when the
// arena is full or `size` > kMaxHostPayload.
bool AppendHostRecord(HostRecordType type, const void* payload, uint32_t size);
// Same, with a second payload part appended right after the first (e.g. a header + a name).
bool AppendHostRecord2(HostRecordType type, const void* a, uint32_t a_size, const void* b,
                       uint32_t b_size);

// The calling thread's OS tid, cached in thread-local storage (one syscall per thread).
uint32_t CurrentTid();

// Visits every published record, thread by thread, each thread's records in append order.
using HostRecordVisitor = void (*)(void* ctx, uint32_t tid, HostRecordType type,
                                   const void* payload, uint32_t size);
void VisitHostRecords(HostRecordVisitor visitor, void* ctx);

// Forgets every record published so far (window boundaries) and returns their chunks to the
// arena where possible. Threads keep appending safely while this runs.
void ResetHostRecords();

// Window boundaries cut at a timestamp: forgets, thread by thread, the published records that come
// before that thread's first record whose timestamp (the payload's leading u64: every record type
// except kThreadName starts with one) is >= `ts_ns`. Same threading rules as ResetHostRecords.
void ResetHostRecordsBefore(uint64_t ts_ns);

// Records dropped because the arena was full (monotonic).
uint64_t HostRecordsDropped();

}  // namespace gprof::collector
