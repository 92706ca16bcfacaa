// Per-thread host event buffers (the contract and the design are in thread_buffer.h).
//
// Rules (in-process code): AppendHostRecord* runs on any application thread and on CUPTI callback
// threads: no allocation, no locks, no logging, no exceptions, no syscalls there except the
// one-time gettid of a new thread. Visit/Reset run on one cold thread, never concurrently with
// each other; InitThreadBuffers runs once at init (tests may call it again once every thread that
// appended has exited).
//
// Memory: two MAP_NORESERVE mappings made at init and never freed: the thread-state slots and the
// record arena. Untouched pages cost nothing, so the cap only bounds what a run can use.
// Ownership: a thread's `current` chunk and write position belong to that thread alone; the
// visitor only follows the published chain (`head`, then each chunk's `next`) and each chunk's
// `used` (release/acquire pairs). Reset returns finished chunks (those with a successor) to a
// lock-free free list (index + ABA tag in one 64-bit word); the owner never touches a chunk again
// after linking its successor, so a finished chunk can be reused safely.
#include "collector/thread_buffer.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace gprof::collector {
namespace {

constexpr uint32_t kChunkSize = 64 * 1024;
constexpr uint32_t kChunkHeaderSize = 64;
constexpr uint32_t kRecordHeaderSize = 8;
constexpr uint32_t kMaxThreads = 8192;  // slots are never reused: threads beyond this drop

struct Chunk {
  std::atomic<uint32_t> used;       // published end of the last whole record (bytes from chunk start)
  std::atomic<uint32_t> free_next;  // free-list link: index + 1 of the next free chunk (0 = none)
  std::atomic<Chunk*> next;         // successor in the owning thread's chain (set once)
};
static_assert(sizeof(Chunk) <= kChunkHeaderSize);

struct alignas(64) ThreadState {
  // Written by the owner before `ready` is released; read-only afterwards.
  uint32_t tid;
  // Owner-only.
  Chunk* current;
  uint32_t write_pos;
  // Published by the owner: the first chunk of its chain (set once).
  std::atomic<Chunk*> head;
  std::atomic<bool> ready;
  // Visitor-only: where the unvisited/unreset records start.
  Chunk* first;
  uint32_t first_pos;
};

struct RecordHeader {
  uint16_t size;
  uint8_t type;
  uint8_t flags;
  uint32_t reserved;
};
static_assert(sizeof(RecordHeader) == kRecordHeaderSize);

// All constant-initialized: no global constructor (the library may be preloaded).
std::atomic<char*> g_arena{nullptr};
uint32_t g_chunk_count = 0;                 // written at init only
std::atomic<uint32_t> g_chunk_cursor{0};    // next never-used chunk
std::atomic<uint64_t> g_free_head{0};       // (tag << 32) | (index + 1); 0 = empty
ThreadState* g_slots = nullptr;             // written at init only
std::atomic<uint32_t> g_slot_cursor{0};
std::atomic<uint64_t> g_dropped{0};

thread_local ThreadState* tls_thread = nullptr;
thread_local uint32_t tls_tid = 0;

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

// First record from a new thread: claim a slot (one fetch_add) and a chunk.
ThreadState* RegisterThread() {
  if (g_slots == nullptr) return nullptr;
  if (g_slot_cursor.load(std::memory_order_relaxed) >= kMaxThreads) return nullptr;
  const uint32_t index = g_slot_cursor.fetch_add(1, std::memory_order_relaxed);
  if (index >= kMaxThreads) return nullptr;
  ThreadState* t = &g_slots[index];
  t->tid = CurrentTid();
  t->current = AllocChunk();  // may be null: Append retries on the next record
  t->write_pos = kChunkHeaderSize;
  t->head.store(t->current, std::memory_order_relaxed);
  t->first = nullptr;
  t->first_pos = kChunkHeaderSize;
  t->ready.store(true, std::memory_order_release);
  tls_thread = t;
  return t;
}

inline bool Drop() {
  g_dropped.fetch_add(1, std::memory_order_relaxed);
  return false;
}

inline uint32_t Padded(uint32_t size) { return (size + 7u) & ~7u; }

}  // namespace

bool InitThreadBuffers(uint64_t arena_bytes) {
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
  // A re-init (tests only) deliberately leaks the previous mappings: nothing refers to them.
  g_slots = static_cast<ThreadState*>(slots);
  g_slot_cursor.store(0, std::memory_order_relaxed);
  g_chunk_count = static_cast<uint32_t>(chunks > UINT32_MAX - 1 ? UINT32_MAX - 1 : chunks);
  g_chunk_cursor.store(0, std::memory_order_relaxed);
  g_free_head.store(0, std::memory_order_relaxed);
  g_dropped.store(0, std::memory_order_relaxed);
  g_arena.store(static_cast<char*>(arena), std::memory_order_release);
  return arena != nullptr;
}

uint32_t CurrentTid() {
  if (tls_tid == 0) tls_tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return tls_tid;
}

bool AppendHostRecord(HostRecordType type, const void* payload, uint32_t size) {
  return AppendHostRecord2(type, payload, size, nullptr, 0);
}

bool AppendHostRecord2(HostRecordType type, const void* a, uint32_t a_size, const void* b,
                       uint32_t b_size) {
  const uint32_t size = a_size + b_size;
  if (size > kMaxHostPayload || size < a_size) return Drop();
  ThreadState* t = tls_thread;
  if (t == nullptr) {
    t = RegisterThread();
    if (t == nullptr) return Drop();
  }
  const uint32_t need = kRecordHeaderSize + Padded(size);
  Chunk* c = t->current;
  uint32_t pos = t->write_pos;
  if (c == nullptr || pos + need > kChunkSize) {
    Chunk* fresh = AllocChunk();
    if (fresh == nullptr) return Drop();
    if (c != nullptr) {
      c->next.store(fresh, std::memory_order_release);  // c is finished: never touched again
    } else {
      t->head.store(fresh, std::memory_order_release);
    }
    t->current = c = fresh;
    pos = kChunkHeaderSize;
  }
  char* at = reinterpret_cast<char*>(c) + pos;
  const RecordHeader header{static_cast<uint16_t>(size), static_cast<uint8_t>(type), 0, 0};
  std::memcpy(at, &header, sizeof header);
  if (a_size != 0) std::memcpy(at + kRecordHeaderSize, a, a_size);
  if (b_size != 0) std::memcpy(at + kRecordHeaderSize + a_size, b, b_size);
  t->write_pos = pos + need;
  c->used.store(pos + need, std::memory_order_release);
  return true;
}

void VisitHostRecords(HostRecordVisitor visitor, void* ctx) {
  if (g_slots == nullptr) return;
  const uint32_t threads = std::min(g_slot_cursor.load(std::memory_order_acquire), kMaxThreads);
  for (uint32_t i = 0; i < threads; ++i) {
    ThreadState* t = &g_slots[i];
    if (!t->ready.load(std::memory_order_acquire)) continue;
    if (t->first == nullptr) {
      t->first = t->head.load(std::memory_order_acquire);
      t->first_pos = kChunkHeaderSize;
    }
    Chunk* c = t->first;
    uint32_t pos = t->first_pos;
    while (c != nullptr) {
      // Read `next` before `used`: if a successor exists, `used` is final.
      Chunk* next = c->next.load(std::memory_order_acquire);
      const uint32_t used = c->used.load(std::memory_order_acquire);
      const char* base = reinterpret_cast<const char*>(c);
      while (pos + kRecordHeaderSize <= used) {
        RecordHeader header;
        std::memcpy(&header, base + pos, sizeof header);
        visitor(ctx, t->tid, static_cast<HostRecordType>(header.type),
                base + pos + kRecordHeaderSize, header.size);
        pos += kRecordHeaderSize + Padded(header.size);
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
    if (t->first == nullptr) {
      t->first = t->head.load(std::memory_order_acquire);
      t->first_pos = kChunkHeaderSize;
    }
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
    if (t->first == nullptr) {
      t->first = t->head.load(std::memory_order_acquire);
      t->first_pos = kChunkHeaderSize;
    }
    bool stop = false;
    while (t->first != nullptr && !stop) {
      Chunk* c = t->first;
      Chunk* next = c->next.load(std::memory_order_acquire);
      const uint32_t used = c->used.load(std::memory_order_acquire);
      const char* base = reinterpret_cast<const char*>(c);
      uint32_t pos = t->first_pos;
      while (pos + kRecordHeaderSize <= used) {
        RecordHeader header;
        std::memcpy(&header, base + pos, sizeof header);
        if (static_cast<HostRecordType>(header.type) != HostRecordType::kThreadName &&
            header.size >= sizeof(uint64_t)) {
          uint64_t ts;
          std::memcpy(&ts, base + pos + kRecordHeaderSize, sizeof ts);
          if (ts >= ts_ns) {
            stop = true;
            break;
          }
        }
        pos += kRecordHeaderSize + Padded(header.size);
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
