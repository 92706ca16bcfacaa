// Per-thread host event buffers: the only thing the program's threads write to.
//
// Threads: Reserve/Publish and Append* run on any application thread (NVTX hooks) and on the
// thread of a CUPTI API callback. Visit/Reset run on one cold thread (exit, window end) and never
// concurrently with each other.
// Rules on the append path: no allocation (except the one-time registration of a new thread, which
// takes a chunk from a preallocated arena), no locks, no logging, no exceptions, no syscalls.
//
// Design: one arena (mmap'd once at Init, MAP_NORESERVE, capped by GPROF_HOST_BUFFER_MIB) cut into
// fixed-size chunks. A thread owns a chain of chunks; it takes a new chunk with one atomic
// fetch_add on the arena cursor. Each record is a 4-byte HostRecordHeader followed by its payload,
// the whole record padded to 8 bytes (records start 8-byte aligned). A thread publishes its write
// position with a release store of its chunk's `used`, so a visitor sees only whole records. When
// the arena is exhausted the record is dropped and counted (Counters::host_events_dropped).
//
// Record layouts are in nvtx_records.h and api_records.h. Every record's payload starts with 4
// type-specific bytes followed by the u64 host timestamp (host_clock.h ticks), so the timestamp
// sits 8-byte aligned at record offset 8; ResetHostRecordsBefore relies on that.
//
// The fast path (ReserveHostRecord/PublishHostRecord) is inline: one initial-exec TLS load (no
// __tls_get_addr in the dlopen'ed library), one relaxed load, one bounds check, one release store.
#pragma once

#include <atomic>
#include <cstdint>

namespace gprof::collector {

enum class HostRecordType : uint8_t {
  kNvtxPush = 1,   // NvtxBeginRecord + extras + inline name (nvtx_records.h)
  kNvtxPop = 2,    // NvtxEndRecord
  kNvtxStart = 3,  // NvtxBeginRecord + range id + extras + inline name
  kNvtxEnd = 4,    // NvtxEndRecord + range id
  kNvtxMark = 5,   // NvtxBeginRecord + extras + inline name
  kApiCall = 7,    // ApiHostRecord (api_records.h)
};

struct HostRecordHeader {
  uint16_t size;  // payload bytes after this header (padding excluded)
  HostRecordType type;
  uint8_t flags;  // type-specific (e.g. which optional NVTX fields follow)
};
static_assert(sizeof(HostRecordHeader) == 4);

// Largest payload one record may carry; longer NVTX names are truncated to fit.
inline constexpr uint32_t kMaxHostPayload = 1024;
// Bytes a record with `payload` bytes occupies in a buffer.
constexpr uint32_t HostRecordBytes(uint32_t payload) {
  return (static_cast<uint32_t>(sizeof(HostRecordHeader)) + payload + 7u) & ~7u;
}
inline constexpr uint32_t kMaxHostRecordBytes = HostRecordBytes(kMaxHostPayload);

// Creates the arena and initializes the host clock (host_clock.h InitHostClock). Cold; once per
// process (later calls change nothing), before any Append. Returns false if mmap failed (then
// every Append drops and counts).
bool InitThreadBuffers(uint64_t arena_bytes);

namespace thread_buffer_internal {

inline constexpr uint32_t kChunkSize = 64 * 1024;
inline constexpr uint32_t kChunkHeaderSize = 64;

struct Chunk {
  std::atomic<uint32_t> used;       // published end of the last whole record (bytes from chunk
                                    // start); written only by the owning thread
  std::atomic<uint32_t> free_next;  // free-list link: index + 1 of the next free chunk (0 = none)
  std::atomic<Chunk*> next;         // successor in the owning thread's chain (set once)
};
static_assert(sizeof(Chunk) <= kChunkHeaderSize);

// The calling thread's current chunk (nullptr before its first record). `__thread` (no C++
// dynamic-init wrapper) and initial-exec: a plain %fs-relative load, no __tls_get_addr.
extern __thread Chunk* tls_chunk __attribute__((tls_model("initial-exec")));

// Registers the thread and/or moves it to a fresh chunk. Returns nullptr (and counts a drop) when
// the arena is full or `bytes` > kMaxHostRecordBytes.
char* ReserveSlow(uint32_t bytes) noexcept;

}  // namespace thread_buffer_internal

// Returns where the calling thread may write a record of `bytes` (HostRecordBytes(...): header
// included, a multiple of 8, <= kMaxHostRecordBytes), or nullptr when it is dropped (counted).
// Nothing is visible until PublishHostRecord(at, bytes). Not reentrant on one thread.
inline char* ReserveHostRecord(uint32_t bytes) noexcept {
  using namespace thread_buffer_internal;
  Chunk* c = tls_chunk;
  if (c != nullptr) [[likely]] {
    const uint32_t pos = c->used.load(std::memory_order_relaxed);  // owner-only writer
    if (pos + bytes <= kChunkSize) [[likely]] return reinterpret_cast<char*>(c) + pos;
  }
  return ReserveSlow(bytes);
}

// Makes the record written at `at` (from ReserveHostRecord on this thread) visible to visitors.
inline void PublishHostRecord(char* at, uint32_t bytes) noexcept {
  using namespace thread_buffer_internal;
  Chunk* c = tls_chunk;
  c->used.store(static_cast<uint32_t>(at - reinterpret_cast<char*>(c)) + bytes,
                std::memory_order_release);
}

// Generic (variable-size, two-part) append: header + `a` + `b`. Returns false (and counts a drop)
// when the arena is full or the payload exceeds kMaxHostPayload.
bool AppendHostRecord(HostRecordType type, uint8_t flags, const void* a, uint32_t a_size,
                      const void* b = nullptr, uint32_t b_size = 0) noexcept;

// The calling thread's OS tid, cached in thread-local storage (one syscall per thread).
uint32_t CurrentTid() noexcept;

// Visits every published record, thread by thread, each thread's records in append order.
// `payload` points just after the record's header and holds `size` bytes.
using HostRecordVisitor = void (*)(void* ctx, uint32_t tid, HostRecordType type, uint8_t flags,
                                   const void* payload, uint32_t size);
void VisitHostRecords(HostRecordVisitor visitor, void* ctx);

// Forgets every record published so far (window boundaries) and returns their chunks to the
// arena where possible. Threads keep appending safely while this runs.
void ResetHostRecords();

// Window boundaries cut at a timestamp: forgets, thread by thread, the published records that come
// before that thread's first record whose timestamp (CLOCK_REALTIME ns, compared through
// HostTicksToNs) is >= `ts_ns`. Same threading rules as ResetHostRecords.
void ResetHostRecordsBefore(uint64_t ts_ns);

// Records dropped because the arena was full (monotonic).
uint64_t HostRecordsDropped();

}  // namespace gprof::collector
