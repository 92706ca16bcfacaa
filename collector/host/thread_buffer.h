// Per-thread host event buffers: the only thing the program's threads write to.
//
// Threads: Reserve/Publish and Append* run on any application thread (NVTX hooks) and on the
// thread of a CUPTI API callback. Visit/Reset run on one cold thread (exit, window end) and never
// concurrently with each other.
// Rules on the append path: no allocation (except the one-time registration of a new thread, which
// takes a slot and chunks from preallocated arrays), no locks, no logging, no exceptions, no
// syscalls (except the registration's one gettid).
//
// Design: one arena (mmap'd once at Init, MAP_NORESERVE, capped by GPROF_HOST_BUFFER_MIB) cut into
// fixed-size chunks. A thread owns a slot, and the slot a chain of chunks; a new chunk comes from
// a lock-free free list or one atomic fetch_add on the arena cursor. Each record is a 4-byte
// HostRecordHeader followed by its payload, the whole record padded to 8 bytes (records start
// 8-byte aligned). A thread publishes its write position with a release store of its chunk's
// `used`, so a visitor sees only whole records. When the arena is exhausted the record is dropped
// and counted (Counters::host_events_dropped).
//
// Slots are reused: when a thread ends (a pthread key destructor), its slot goes onto a lock-free
// free-slot stack, chain and unread records included; the next new thread takes it over and keeps
// appending at the end of the same chain, after a kThreadHandover record naming its tid. So a slot
// holds the records of several threads one after the other, each reported with its writer's tid,
// nothing waits for a visitor, and an ended thread's half-used chunk is filled by its successor.
// Only threads alive at the same time need slots of their own: past kMaxHostThreads live threads,
// the newcomers' records are dropped and counted (HostRecordsDroppedNoSlot) until one ends.
//
// Record layouts are in nvtx_records.h, api_records.h and native_stack.h. Every record's payload starts with 4
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
  kApiStack = 9,   // ApiStackHeader + PCs (native_stack.h), right after its kApiCall record
  // Internal, never handed to visitors: the slot's chain continues with the records of the thread
  // whose u32 tid is the payload (a new thread took over the slot of one that ended).
  kThreadHandover = 8,
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

// Threads that may record at the same time (slots; an ended thread's slot is reused).
inline constexpr uint32_t kMaxHostThreads = 8192;

// Creates the arena and the thread slots, the thread-exit key, and initializes the host clock
// (host_clock.h InitHostClock). Cold; once per process (later calls change nothing), before any
// Append. Returns false if mmap failed (then every Append drops and counts). `max_threads` is for
// tests (slot exhaustion without thousands of live threads).
bool InitThreadBuffers(uint64_t arena_bytes, uint32_t max_threads = kMaxHostThreads);

namespace thread_buffer_internal {

inline constexpr uint32_t kChunkSize = 64 * 1024;
inline constexpr uint32_t kChunkHeaderSize = 64;

struct Chunk {
  std::atomic<uint32_t> used;       // published end of the last whole record (bytes from chunk
                                    // start); written only by the slot's owning thread
  std::atomic<uint32_t> free_next;  // free-list link: index + 1 of the next free chunk (0 = none)
  std::atomic<Chunk*> next;         // successor in the slot's chain (set once)
  uint32_t tid;                     // writer of the chunk's first record; set before it is linked
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

// Visits every published record, slot by slot, each thread's records in append order with the
// tid of the thread that wrote them (a slot holds its owners' records one after the other).
// `payload` points just after the record's header and holds `size` bytes.
using HostRecordVisitor = void (*)(void* ctx, uint32_t tid, HostRecordType type, uint8_t flags,
                                   const void* payload, uint32_t size);
void VisitHostRecords(HostRecordVisitor visitor, void* ctx);

// Visits, like VisitHostRecords, every record published so far and forgets exactly those (a
// record published meanwhile stays for the next call), returning their chunks to the arena: a
// long run written in segments (collector/lifecycle/spill.h) empties the buffers as it goes.
// Same threading rules as ResetHostRecords. A null `visitor` forgets them unseen.
void ConsumeHostRecords(HostRecordVisitor visitor, void* ctx);

// Forgets every record published so far (window boundaries) and returns their chunks to the
// arena where possible. Threads keep appending safely while this runs.
void ResetHostRecords();

// Window boundaries cut at a timestamp: forgets, slot by slot, the published records that come
// before that slot's first record whose timestamp (CLOCK_REALTIME ns, compared through
// HostTicksToNs) is >= `ts_ns`. Same threading rules as ResetHostRecords. `dropped`, when given,
// sees each forgotten record first, in each slot's order (the window thread keeps what was still
// open across the cut: profile_builder.h's OpenAtWindowStart).
void ResetHostRecordsBefore(uint64_t ts_ns, HostRecordVisitor dropped = nullptr,
                            void* ctx = nullptr);

// Records dropped (monotonic): the arena was full, a payload too large, or no thread slot free.
uint64_t HostRecordsDropped();
// Those of HostRecordsDropped() that found every thread slot taken by a live thread (monotonic).
uint64_t HostRecordsDroppedNoSlot();
// The share of the arena's chunks that hold records not yet consumed or reset (0..1): the spill
// thread writes a segment when it passes one half. Any thread; relaxed.
double HostBufferFill();
// Bytes of the arena ever handed out as chunks (its touched part: freed chunks are reused first).
uint64_t HostArenaBytesTouched();
// Slots ever claimed (at most max_threads): about the most recording threads alive at once (a
// thread starting while another is ending may claim a fresh one). For tests.
uint32_t HostThreadSlotsClaimed();

}  // namespace gprof::collector
