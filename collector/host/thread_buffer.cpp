// Per-thread host event buffers (the contract and the design are in thread_buffer.h).
//
// Rules (in-process code): ReserveSlow/AppendHostRecord run on any application thread and on
// CUPTI callback threads: no allocation, no locks, no logging, no exceptions, no syscalls there
// except the one-time gettid of a new thread (its registration: a pop from the free-slot stack or
// one fetch_add, and a pthread_setspecific of a key below 32, which glibc keeps inside the thread
// descriptor: no allocation). OnThreadExit runs on an ending thread (a pthread key destructor):
// the same rules. Visit/Reset run on one cold thread, never concurrently with each other;
// InitThreadBuffers runs once per process (later calls change nothing).
//
// Memory: two MAP_NORESERVE mappings made at init and never freed: the thread-state slots and the
// record arena. Untouched pages cost nothing, so the cap only bounds what a run can use.
// Ownership: a slot, its last chunk (`tail`, = tls_chunk) and that chunk's `used` are written by
// the slot's owning thread alone; ownership passes from an ended thread to the next through the
// free-slot stack (release push, acquire pop), so there is one writer at a time. The visitor only
// follows the published chain (`head`, then each chunk's `next`) and each chunk's `used`
// (release/acquire pairs). Reset returns finished chunks (those with a successor) to a lock-free
// free list (index + ABA tag in one 64-bit word); no owner touches a chunk again after linking its
// successor, so a finished chunk can be reused safely. A slot's last chunk is never freed: it
// passes to the slot's next owner, who fills it.
// Order: a slot's records are in append order across its owners (the next owner starts after the
// previous one ended), so ResetHostRecordsBefore's cut, which stops at a slot's first record at or
// after the cut, stays a cut in time.
#include "collector/host/thread_buffer.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "collector/host/host_clock.h"
#include "collector/host/thread_buffer_slots.h"
#include "support/log.h"

namespace gprof::collector {

namespace thread_buffer_internal {
__thread Chunk* tls_chunk __attribute__((tls_model("initial-exec"))) = nullptr;
// Published last by InitThreadBuffers (release): who loads it non-null (acquire) also sees the
// rest of init. The program's first records may come through a client's own publication of our
// hooks (NVTX's init state, plain loads and fences), which orders nothing of ours.
std::atomic<ThreadState*> g_slots{nullptr};
uint32_t g_max_threads = 0;                 // written at init only, before g_slots
std::atomic<uint32_t> g_slot_cursor{0};     // next never-used slot
}  // namespace thread_buffer_internal

namespace {

using thread_buffer_internal::Chunk;
using thread_buffer_internal::kChunkHeaderSize;
using thread_buffer_internal::kChunkSize;
using thread_buffer_internal::tls_chunk;
using thread_buffer_internal::ThreadState;
using thread_buffer_internal::g_slots;
using thread_buffer_internal::g_max_threads;
using thread_buffer_internal::g_slot_cursor;
using thread_buffer_internal::kHeaderSize;
constexpr uint32_t kHandoverBytes = HostRecordBytes(sizeof(uint32_t));
// glibc keeps the values of keys below PTHREAD_KEY_2NDLEVEL_SIZE (32, nptl/descr.h) in the thread
// descriptor; pthread_setspecific on a later key callocs a block in each thread that uses it.
constexpr pthread_key_t kKeysWithoutAllocation = 32;


// All constant-initialized: no global constructor (the library may be preloaded).
std::atomic<char*> g_arena{nullptr};
uint32_t g_chunk_count = 0;                 // written at init only
std::atomic<uint32_t> g_chunk_cursor{0};    // next never-used chunk
std::atomic<uint64_t> g_free_head{0};       // free chunks: (tag << 32) | (index + 1); 0 = empty
std::atomic<uint64_t> g_free_slots{0};      // slots of ended threads: (tag << 32) | (index + 1)
pthread_key_t g_exit_key;                   // written at init only, before g_slots
bool g_exit_key_ok = false;                 // written at init only, before g_slots
std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_dropped_no_slot{0};
std::atomic<uint32_t> g_chunks_in_use{0};  // taken by threads, not yet freed by a reset

// initial-exec: plain %fs loads, no __tls_get_addr (which may allocate) in the dlopen'ed library.
__thread ThreadState* tls_thread __attribute__((tls_model("initial-exec"))) = nullptr;
__thread uint32_t tls_tid __attribute__((tls_model("initial-exec"))) = 0;
__thread uint8_t tls_exit_rounds __attribute__((tls_model("initial-exec"))) = 0;

inline Chunk* ChunkAt(char* arena, uint32_t index) {
  return reinterpret_cast<Chunk*>(arena + static_cast<uint64_t>(index) * kChunkSize);
}
inline uint32_t ChunkIndex(char* arena, Chunk* c) {
  return static_cast<uint32_t>((reinterpret_cast<char*>(c) - arena) / kChunkSize);
}

// A lock-free stack of array elements (chunks, slots) linked through their `free_next`: the top
// word is (tag << 32) | (index + 1), 0 = empty. The tag changes on every push and pop, so a pop
// that read a stale link (the element was popped and pushed again meanwhile) fails its CAS.
// Push releases, pop acquires: what the pusher wrote into the element is visible to the popper.
template <typename At>
auto PopTagged(std::atomic<uint64_t>& top, At at) -> decltype(at(0u)) {
  uint64_t head = top.load(std::memory_order_acquire);
  while ((head & 0xffffffffu) != 0) {
    auto* candidate = at(static_cast<uint32_t>(head & 0xffffffffu) - 1);
    const uint64_t next = candidate->free_next.load(std::memory_order_relaxed);
    const uint64_t replacement = (((head >> 32) + 1) << 32) | next;
    if (top.compare_exchange_weak(head, replacement, std::memory_order_acq_rel,
                                  std::memory_order_acquire)) {
      return candidate;
    }
  }
  return nullptr;
}

template <typename Element>
void PushTagged(std::atomic<uint64_t>& top, Element* e, uint32_t index) {
  uint64_t head = top.load(std::memory_order_relaxed);
  for (;;) {
    e->free_next.store(static_cast<uint32_t>(head & 0xffffffffu), std::memory_order_relaxed);
    const uint64_t replacement = (((head >> 32) + 1) << 32) | (index + 1);
    if (top.compare_exchange_weak(head, replacement, std::memory_order_release,
                                  std::memory_order_relaxed)) {
      return;
    }
  }
}

Chunk* AllocChunk() {
  char* arena = g_arena.load(std::memory_order_acquire);
  if (arena == nullptr) return nullptr;
  Chunk* c = PopTagged(g_free_head, [arena](uint32_t i) { return ChunkAt(arena, i); });
  if (c == nullptr) {
    if (g_chunk_cursor.load(std::memory_order_relaxed) >= g_chunk_count) return nullptr;
    const uint32_t index = g_chunk_cursor.fetch_add(1, std::memory_order_relaxed);
    if (index >= g_chunk_count) return nullptr;
    c = ChunkAt(arena, index);
  }
  c->next.store(nullptr, std::memory_order_relaxed);
  c->free_next.store(0, std::memory_order_relaxed);
  c->used.store(kChunkHeaderSize, std::memory_order_relaxed);
  g_chunks_in_use.fetch_add(1, std::memory_order_relaxed);
  return c;
}

// A pthread key destructor, on an ending thread (see InitThreadBuffers). glibc runs key
// destructors in rounds (at most PTHREAD_DESTRUCTOR_ITERATIONS) while any of them sets a value
// again. The first call re-arms the key once, so records that other keys' destructors append in
// that round (and in the next, before ours) still land in this thread's slot, after its other
// records. The next call gives the slot back, onto the free-slot stack for the next new thread.
// Not later: the sanitizer runtimes tear a thread's state down in the last round, from a key
// created before ours, and instrumented code of ours running after that crashes. A record
// appended after the slot was given back registers the thread again (its records then go on in
// whichever slot it gets), and this destructor runs again in the following round, if any (else
// that slot stays claimed, as every slot was before slots were reused).
// The library is never unloaded (inject/ links with -z nodelete), so this function outlives
// every thread that holds the key.
constexpr uint8_t kExitRoundsKept = 1;

void OnThreadExit(void* slot) {
  if (tls_exit_rounds++ < kExitRoundsKept && pthread_setspecific(g_exit_key, slot) == 0) return;
  auto* t = static_cast<ThreadState*>(slot);
  if (tls_thread != t) return;  // not ours to give back (cannot happen: the key holds tls_thread)
  tls_thread = nullptr;
  tls_chunk = nullptr;
  PushTagged(g_free_slots, t,
             static_cast<uint32_t>(t - g_slots.load(std::memory_order_relaxed)));
}

// First record from a new thread: take an ended thread's slot, or claim a fresh one (one
// fetch_add). Its first chunk comes with the first record (ReserveSlow), unless it continues the
// last chunk of the slot's previous owner.
ThreadState* RegisterThread() {
  ThreadState* const slots = g_slots.load(std::memory_order_acquire);
  if (slots == nullptr) return nullptr;
  const uint32_t tid = CurrentTid();
  ThreadState* t = PopTagged(g_free_slots, [slots](uint32_t i) { return &slots[i]; });
  if (t != nullptr) {
    // The previous owner's records stay; ours follow a handover record naming us. When its last
    // chunk has no room for one, our first record opens a chunk of ours, whose `tid` names us.
    Chunk* c = t->tail;
    if (c != nullptr) {
      // The previous owner's last store, ordered before the pop by its push.
      const uint32_t pos = c->used.load(std::memory_order_relaxed);
      if (pos + kHandoverBytes <= kChunkSize) {
        char* at = reinterpret_cast<char*>(c) + pos;
        const HostRecordHeader h{sizeof tid, HostRecordType::kThreadHandover, 0};
        std::memcpy(at, &h, sizeof h);
        std::memcpy(at + kHeaderSize, &tid, sizeof tid);
        c->used.store(pos + kHandoverBytes, std::memory_order_release);
      }
    }
  } else {
    if (g_slot_cursor.load(std::memory_order_relaxed) >= g_max_threads) {
      g_dropped_no_slot.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    const uint32_t index = g_slot_cursor.fetch_add(1, std::memory_order_relaxed);
    if (index >= g_max_threads) {
      g_dropped_no_slot.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    t = &slots[index];
    t->tail = nullptr;
    t->head.store(nullptr, std::memory_order_relaxed);
    t->first = nullptr;
    t->first_pos = kChunkHeaderSize;
    t->first_tid = 0;
    t->ready.store(true, std::memory_order_release);
  }
  if (g_exit_key_ok) (void)pthread_setspecific(g_exit_key, t);
  tls_thread = t;
  tls_chunk = t->tail;
  return t;
}

inline char* Drop() {
  g_dropped.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace

namespace thread_buffer_internal {

void FreeChunk(Chunk* c) {
  char* arena = g_arena.load(std::memory_order_acquire);
  g_chunks_in_use.fetch_sub(1, std::memory_order_relaxed);
  PushTagged(g_free_head, c, ChunkIndex(arena, c));
}

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
  fresh->tid = CurrentTid();  // published with the link below
  if (c != nullptr) {
    c->next.store(fresh, std::memory_order_release);  // c is finished: never touched again
  } else {
    t->head.store(fresh, std::memory_order_release);
  }
  t->tail = fresh;
  tls_chunk = fresh;
  return reinterpret_cast<char*>(fresh) + kChunkHeaderSize;
}

}  // namespace thread_buffer_internal

bool InitThreadBuffers(uint64_t arena_bytes, uint32_t max_threads) {
  // Once per process: threads keep pointers into the arena (their TLS chunk), so it is never
  // replaced. Tests that need a fresh one run in a fresh process (tests/support/fresh_process.h).
  if (g_slots.load(std::memory_order_acquire) != nullptr) {
    return g_arena.load(std::memory_order_acquire) != nullptr;
  }
  // Records are stamped with the host clock: decide its mode before the first record exists.
  InitHostClock();
  max_threads = std::max<uint32_t>(max_threads, 1);
  const uint64_t chunks = arena_bytes / kChunkSize;
  void* slots = ::mmap(nullptr, sizeof(ThreadState) * max_threads, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (slots == MAP_FAILED) return false;
  void* arena = nullptr;
  if (chunks > 0) {
    arena = ::mmap(nullptr, chunks * kChunkSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (arena == MAP_FAILED) {
      ::munmap(slots, sizeof(ThreadState) * max_threads);
      return false;
    }
    // Fewer page faults on the append path (a fault per 4 KiB costs more than the records in it).
    // Advisory: ignored where transparent huge pages are off.
    (void)::madvise(arena, chunks * kChunkSize, MADV_HUGEPAGE);
  }
  // Thread ends give their slots back through this key's destructor. Never deleted: threads
  // hold it until they end. Without it (or past glibc's preallocated keys, where setting it would
  // allocate on the registration path) slots are not reused.
  pthread_key_t key;
  if (pthread_key_create(&key, &OnThreadExit) == 0) {
    if (key < kKeysWithoutAllocation) {
      g_exit_key = key;
      g_exit_key_ok = true;
    } else {
      (void)pthread_key_delete(key);
    }
  }
  if (!g_exit_key_ok) {
    log::Info("no pthread key below 32 was free, so ended threads' host buffer slots are not "
              "reused: threads past the first " + std::to_string(max_threads) +
              " that record lose their NVTX/API events (counted as dropped)");
  }
  g_max_threads = max_threads;
  g_slot_cursor.store(0, std::memory_order_relaxed);
  g_free_slots.store(0, std::memory_order_relaxed);
  g_chunk_count = static_cast<uint32_t>(chunks > UINT32_MAX - 1 ? UINT32_MAX - 1 : chunks);
  g_chunk_cursor.store(0, std::memory_order_relaxed);
  g_free_head.store(0, std::memory_order_relaxed);
  g_dropped.store(0, std::memory_order_relaxed);
  g_dropped_no_slot.store(0, std::memory_order_relaxed);
  g_arena.store(static_cast<char*>(arena), std::memory_order_release);
  g_slots.store(static_cast<ThreadState*>(slots), std::memory_order_release);
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

uint64_t HostRecordsDropped() { return g_dropped.load(std::memory_order_relaxed); }

uint64_t HostRecordsDroppedNoSlot() { return g_dropped_no_slot.load(std::memory_order_relaxed); }

double HostBufferFill() {
  if (g_chunk_count == 0) return 0;
  return static_cast<double>(g_chunks_in_use.load(std::memory_order_relaxed)) / g_chunk_count;
}

uint64_t HostArenaBytesTouched() {
  const uint64_t chunks = std::min<uint64_t>(g_chunk_cursor.load(std::memory_order_relaxed), g_chunk_count);
  return chunks * thread_buffer_internal::kChunkSize;
}

uint32_t HostThreadSlotsClaimed() {
  return std::min(g_slot_cursor.load(std::memory_order_relaxed), g_max_threads);
}

}  // namespace gprof::collector
