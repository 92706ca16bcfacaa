// The thread slots behind thread_buffer.h, shared by its writer side (thread_buffer.cpp: init,
// registration, ReserveSlow) and its visitor side (thread_buffer_visit.cpp: visit, consume,
// reset). The rules and the ownership of each field: thread_buffer.cpp. Internal to
// collector/host.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "collector/host/thread_buffer.h"

namespace gprof::collector::thread_buffer_internal {

inline constexpr uint32_t kHeaderSize = sizeof(HostRecordHeader);
inline constexpr uint32_t kTimestampOffset = 8;  // record offset of every record's u64 timestamp

struct alignas(64) ThreadState {
  // Owner only (handed to the next owner with the slot): the chain's last chunk (= tls_chunk).
  Chunk* tail;
  std::atomic<uint32_t> free_next;  // free-slot stack link: index + 1 of the next free slot
  // Published by the owner that takes the slot's first chunk (set once per slot).
  std::atomic<Chunk*> head;
  std::atomic<bool> ready;  // set once, when the slot is first claimed
  // Visitor-only: where the unvisited/unreset records start, and the tid they were written by.
  Chunk* first;
  uint32_t first_pos;
  uint32_t first_tid;
};

// Defined in thread_buffer.cpp (constant-initialized: no global constructor).
extern std::atomic<ThreadState*> g_slots;  // published last by InitThreadBuffers (release)
extern uint32_t g_max_threads;              // written at init only, before g_slots
extern std::atomic<uint32_t> g_slot_cursor; // next never-used slot

// Returns a finished chunk to the free list (thread_buffer.cpp).
void FreeChunk(Chunk* c);

inline HostRecordHeader HeaderAt(const char* at) {
  HostRecordHeader h;
  std::memcpy(&h, at, sizeof h);
  return h;
}

inline uint32_t HandoverTid(const char* record) {
  uint32_t tid;
  std::memcpy(&tid, record + kHeaderSize, sizeof tid);
  return tid;
}

// Visitor side: the slot's unvisited records start at (first, first_pos), written by first_tid.
inline void StartCursor(ThreadState* t) {
  if (t->first == nullptr) {
    t->first = t->head.load(std::memory_order_acquire);
    t->first_pos = kChunkHeaderSize;
    if (t->first != nullptr) t->first_tid = t->first->tid;
  }
}

}  // namespace gprof::collector::thread_buffer_internal
