// Per-thread host event buffers (the contract and the design are in thread_buffer.h).
//
// Rules (in-process code): ReserveSlow/AppendHostRecord run on any application thread and on
// CUPTI callback threads: no allocation, no locks, no logging, no exceptions, no syscalls there
// except the one-time gettid of a new thread. Visit/Reset run on one cold thread, never
// concurrently with each other; InitThreadBuffers runs once per process (later calls change
// nothing).
//
// Memory: two MAP_NORESERVE mappings made at init and never freed: the thread-state slots and the
// record arena. Untouched pages cost nothing, so the cap only bounds what a run can use.
// Ownership: a thread's current chunk (tls_chunk) and its `used` are written by that thread alone;
// the visitor only follows the published chain (`head`, then each chunk's `next`) and each chunk's
// `used` (release/acquire pairs). Reset returns finished chunks (those with a successor) to a
// lock-free free list (index + ABA tag in one 64-bit word); the owner never touches a chunk again
// after linking its successor, so a finished chunk can be reused safely.
#include "collector/host/thread_buffer.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "collector/host/host_clock.h"

namespace gprof::collector {

namespace thread_buffer_internal {
__thread Chunk* tls_chunk __attribute__((tls_model("initial-exec"))) = nullptr;
}  // namespace thread_buffer_internal

namespace {

using thread_buffer_internal::Chunk;
using thread_buffer_internal::kChunkHeaderSize;
using thread_buffer_internal::kChunkSize;
using thread_buffer_internal::tls_chunk;

constexpr uint32_t kHeaderSize = sizeof(HostRecordHeader);
constexpr uint32_t kTimestampOffset = 8;  // record offset of every record's u64 timestamp
constexpr uint32_t kMaxThreads = 8192;    // slots are never reused: threads beyond this drop

struct alignas(64) ThreadState {
  // Written by the owner before `ready` is released; read-only afterwards.
  uint32_t tid;
  // Published by the owner: the first chunk of its chain (set once).
  std::atomic<Chunk*> head;
  std::atomic<bool> ready;
  // Visitor-only: where the unvisited/unreset records start.
  Chunk* first;
  uint32_t first_pos;
};

// All constant-initialized: no global constructor (the library may be preloaded).
std::atomic<char*> g_arena{nullptr};
uint32_t g_chunk_count = 0;                 // written at init only
std::atomic<uint32_t> g_chunk_cursor{0};    // next never-used chunk
std::atomic<uint64_t> g_free_head{0};       // (tag << 32) | (index + 1); 0 = empty
ThreadState* g_slots = nullptr;             // written at init only
std::atomic<uint32_t> g_slot_cursor{0};
std::atomic<uint64_t> g_dropped{0};

// initial-exec: plain %fs loads, no __tls_get_addr (which may allocate) in the dlopen'ed library.
__thread ThreadState* tls_thread __attribute__((tls_model("initial-exec"))) = nullptr;
__thread uint32_t tls_tid __attribute__((tls_model("initial-exec"))) = 0;

inline Chunk* ChunkAt(char* arena, uint32_t index) {
  return reinterpret_cast<Chunk*>(arena + static_cast<uint64_t>(index) * kChunkSize);
}
inline uint32_t ChunkIndex(char* arena, Chunk* c) {
  return static_cast<uint32_t>((reinterpret_cast<char*>(c) - arena) / kChunkSize);
}

Chunk* AllocChunk() {
  char* arena = g_arena.load(std::memory_order_acquire);
  if (arena == nullptr) return nullptr;
  Chunk* c = nullptr;
  uint64_t head = g_free_head.load(std::memory_order_acquire);
  while ((head & 0xffffffffu) != 0) {
    Chunk* candidate = ChunkAt(arena, static_cast<uint32_t>(head & 0xffffffffu) - 1);
    // May read a stale link if another thread popped it meanwhile; the tag makes the CAS fail.
    const uint64_t next = candidate->free_next.load(std::memory_order_relaxed);
    const uint64_t replacement = (((head >> 32) + 1) << 32) | next;
    if (g_free_head.compare_exchange_weak(head, replacement, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
      c = candidate;
      break;
    }
  }
  if (c == nullptr) {
    if (g_chunk_cursor.load(std::memory_order_relaxed) >= g_chunk_count) return nullptr;
    const uint32_t index = g_chunk_cursor.fetch_add(1, std::memory_order_relaxed);
    if (index >= g_chunk_count) return nullptr;
    c = ChunkAt(arena, index);
  }
  c->next.store(nullptr, std::memory_order_relaxed);
  c->free_next.store(0, std::memory_order_relaxed);
  c->used.store(kChunkHeaderSize, std::memory_order_relaxed);
  return c;
}

void FreeChunk(Chunk* c) {
  char* arena = g_arena.load(std::memory_order_acquire);
  const uint32_t index = ChunkIndex(arena, c);
  uint64_t head = g_free_head.load(std::memory_order_relaxed);
  for (;;) {
    c->free_next.store(static_cast<uint32_t>(head & 0xffffffffu), std::memory_order_relaxed);
    const uint64_t replacement = (((head >> 32) + 1) << 32) | (index + 1);
    if (g_free_head.compare_exchange_weak(head, replacement, std::memory_order_release,
                                          std::memory_order_relaxed)) {
      return;
    }
  }
}

// First record from a new thread: claim a slot (one fetch_add). Its first chunk comes with the
// first record (ReserveSlow).
ThreadState* RegisterThread() {
  if (g_slots == nullptr) return nullptr;
  if (g_slot_cursor.load(std::memory_order_relaxed) >= kMaxThreads) return nullptr;
  const uint32_t index = g_slot_cursor.fetch_add(1, std::memory_order_relaxed);
  if (index >= kMaxThreads) return nullptr;
  ThreadState* t = &g_slots[index];
  t->tid = CurrentTid();
  t->head.store(nullptr, std::memory_order_relaxed);
  t->first = nullptr;
  t->first_pos = kChunkHeaderSize;
  t->ready.store(true, std::memory_order_release);
  tls_thread = t;
  tls_chunk = nullptr;
  return t;
}

inline char* Drop() {
  g_dropped.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

inline HostRecordHeader HeaderAt(const char* at) {
  HostRecordHeader h;
  std::memcpy(&h, at, sizeof h);
  return h;
}

// Visitor side: the thread's unvisited records start at (first, first_pos).
inline void StartCursor(ThreadState* t) {
  if (t->first == nullptr) {
    t->first = t->head.load(std::memory_order_acquire);
    t->first_pos = kChunkHeaderSize;
  }
}

}  // namespace

namespace thread_buffer_internal {

char* ReserveSlow(uint32_t bytes) noexcept {
  if (bytes > kMaxHostRecordBytes) return Drop();
  ThreadState* t = tls_thread;
  if (t == nullptr) {
    t = RegisterThread();
    if (t == nullptr) return Drop();
  }
  Chunk* c = tls_chunk;
  if (c != nullptr) {
    const uint32_t pos = c->used.load(std::memory_order_relaxed);
    if (pos + bytes <= kChunkSize) return reinterpret_cast<char*>(c) + pos;
  }
  Chunk* fresh = AllocChunk();
  if (fresh == nullptr) return Drop();
  if (c != nullptr) {
    c->next.store(fresh, std::memory_order_release);  // c is finished: never touched again
  } else {
    t->head.store(fresh, std::memory_order_release);
  }
  tls_chunk = fresh;
  return reinterpret_cast<char*>(fresh) + kChunkHeaderSize;
}

}  // namespace thread_buffer_internal

bool InitThreadBuffers(uint64_t arena_bytes) {
  // Once per process: threads keep pointers into the arena (their TLS chunk), so it is never
  // replaced. Tests that need a fresh one run in a fresh process (tests/support/fresh_process.h).
  if (g_slots != nullptr) return g_arena.load(std::memory_order_acquire) != nullptr;
  // Records are stamped with the host clock: decide its mode before the first record exists.
  InitHostClock();
  const uint64_t chunks = arena_bytes / kChunkSize;
  void* slots = ::mmap(nullptr, sizeof(ThreadState) * kMaxThreads, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (slots == MAP_FAILED) return false;
  void* arena = nullptr;
  if (chunks > 0) {
    arena = ::mmap(nullptr, chunks * kChunkSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (arena == MAP_FAILED) {
      ::munmap(slots, sizeof(ThreadState) * kMaxThreads);
      return false;
    }
    // Fewer page faults on the append path (a fault per 4 KiB costs more than the records in it).
    // Advisory: ignored where transparent huge pages are off.
    (void)::madvise(arena, chunks * kChunkSize, MADV_HUGEPAGE);
  }
  g_slots = static_cast<ThreadState*>(slots);
  g_slot_cursor.store(0, std::memory_order_relaxed);
  g_chunk_count = static_cast<uint32_t>(chunks > UINT32_MAX - 1 ? UINT32_MAX - 1 : chunks);
  g_chunk_cursor.store(0, std::memory_order_relaxed);
  g_free_head.store(0, std::memory_order_relaxed);
  g_dropped.store(0, std::memory_order_relaxed);
  g_arena.store(static_cast<char*>(arena), std::memory_order_release);
  return arena != nullptr;
}

uint32_t CurrentTid() noexcept {
  if (tls_tid == 0) tls_tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return tls_tid;
}

bool AppendHostRecord(HostRecordType type, uint8_t flags, const void* a, uint32_t a_size,
                      const void* b, uint32_t b_size) noexcept {
  const uint32_t size = a_size + b_size;
  if (size > kMaxHostPayload || size < a_size) return Drop();
  const uint32_t bytes = HostRecordBytes(size);
  char* at = ReserveHostRecord(bytes);
  if (at == nullptr) return false;
  const HostRecordHeader header{static_cast<uint16_t>(size), type, flags};
  std::memcpy(at, &header, sizeof header);
  if (a_size != 0) std::memcpy(at + kHeaderSize, a, a_size);
  if (b_size != 0) std::memcpy(at + kHeaderSize + a_size, b, b_size);
  PublishHostRecord(at, bytes);
  return true;
}

void VisitHostRecords(HostRecordVisitor visitor, void* ctx) {
  if (g_slots == nullptr) return;
  const uint32_t threads = std::min(g_slot_cursor.load(std::memory_order_acquire), kMaxThreads);
  for (uint32_t i = 0; i < threads; ++i) {
    ThreadState* t = &g_slots[i];
    if (!t->ready.load(std::memory_order_acquire)) continue;
    StartCursor(t);
    Chunk* c = t->first;
    uint32_t pos = t->first_pos;
    while (c != nullptr) {
      // Read `next` before `used`: if a successor exists, `used` is final.
      Chunk* next = c->next.load(std::memory_order_acquire);
      const uint32_t used = c->used.load(std::memory_order_acquire);
      const char* base = reinterpret_cast<const char*>(c);
      while (pos + kHeaderSize <= used) {
        const HostRecordHeader h = HeaderAt(base + pos);
        visitor(ctx, t->tid, h.type, h.flags, base + pos + kHeaderSize, h.size);
        pos += HostRecordBytes(h.size);
      }
      c = next;
      pos = kChunkHeaderSize;
    }
  }
}

void ResetHostRecords() {
  if (g_slots == nullptr) return;
  const uint32_t threads = std::min(g_slot_cursor.load(std::memory_order_acquire), kMaxThreads);
  for (uint32_t i = 0; i < threads; ++i) {
    ThreadState* t = &g_slots[i];
    if (!t->ready.load(std::memory_order_acquire)) continue;
    StartCursor(t);
    while (t->first != nullptr) {
      Chunk* c = t->first;
      Chunk* next = c->next.load(std::memory_order_acquire);
      if (next == nullptr) {
        t->first_pos = c->used.load(std::memory_order_acquire);
        break;
      }
      t->first = next;
      t->first_pos = kChunkHeaderSize;
      FreeChunk(c);
    }
  }
}

void ResetHostRecordsBefore(uint64_t ts_ns) {
  if (g_slots == nullptr) return;
  const uint32_t threads = std::min(g_slot_cursor.load(std::memory_order_acquire), kMaxThreads);
  for (uint32_t i = 0; i < threads; ++i) {
    ThreadState* t = &g_slots[i];
    if (!t->ready.load(std::memory_order_acquire)) continue;
    StartCursor(t);
    bool stop = false;
    while (t->first != nullptr && !stop) {
      Chunk* c = t->first;
      Chunk* next = c->next.load(std::memory_order_acquire);
      const uint32_t used = c->used.load(std::memory_order_acquire);
      const char* base = reinterpret_cast<const char*>(c);
      uint32_t pos = t->first_pos;
      while (pos + kHeaderSize <= used) {
        const HostRecordHeader h = HeaderAt(base + pos);
        if (h.size >= kTimestampOffset + sizeof(uint64_t) - kHeaderSize) {
          uint64_t ticks;
          std::memcpy(&ticks, base + pos + kTimestampOffset, sizeof ticks);
          if (HostTicksToNs(ticks) >= ts_ns) {
            stop = true;
            break;
          }
        }
        pos += HostRecordBytes(h.size);
      }
      t->first_pos = pos;
      if (stop || next == nullptr) break;
      t->first = next;
      t->first_pos = kChunkHeaderSize;
      FreeChunk(c);
    }
  }
}

uint64_t HostRecordsDropped() { return g_dropped.load(std::memory_order_relaxed); }

}  // namespace gprof::collector
