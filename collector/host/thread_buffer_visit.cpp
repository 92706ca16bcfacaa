// The visitor side of the host event buffers (thread_buffer.h, thread_buffer_slots.h): visit,
// consume and reset, on one cold thread, never concurrently with each other.
#include <algorithm>
#include <cstring>

#include "collector/host/host_clock.h"
#include "collector/host/thread_buffer.h"
#include "collector/host/thread_buffer_slots.h"

namespace gprof::collector {

using namespace thread_buffer_internal;

void VisitHostRecords(HostRecordVisitor visitor, void* ctx) {
  ThreadState* const slots = g_slots.load(std::memory_order_acquire);
  if (slots == nullptr) return;
  const uint32_t threads = std::min(g_slot_cursor.load(std::memory_order_acquire), g_max_threads);
  for (uint32_t i = 0; i < threads; ++i) {
    ThreadState* t = &slots[i];
    if (!t->ready.load(std::memory_order_acquire)) continue;
    StartCursor(t);
    Chunk* c = t->first;
    uint32_t pos = t->first_pos;
    uint32_t tid = t->first_tid;
    while (c != nullptr) {
      // Read `next` before `used`: if a successor exists, `used` is final.
      Chunk* next = c->next.load(std::memory_order_acquire);
      const uint32_t used = c->used.load(std::memory_order_acquire);
      const char* base = reinterpret_cast<const char*>(c);
      while (pos + kHeaderSize <= used) {
        const HostRecordHeader h = HeaderAt(base + pos);
        if (h.type == HostRecordType::kThreadHandover) {
          tid = HandoverTid(base + pos);
        } else {
          visitor(ctx, tid, h.type, h.flags, base + pos + kHeaderSize, h.size);
        }
        pos += HostRecordBytes(h.size);
      }
      c = next;
      pos = kChunkHeaderSize;
      if (c != nullptr) tid = c->tid;
    }
  }
}

void ConsumeHostRecords(HostRecordVisitor visitor, void* ctx) {
  ThreadState* const slots = g_slots.load(std::memory_order_acquire);
  if (slots == nullptr) return;
  const uint32_t threads = std::min(g_slot_cursor.load(std::memory_order_acquire), g_max_threads);
  for (uint32_t i = 0; i < threads; ++i) {
    ThreadState* t = &slots[i];
    if (!t->ready.load(std::memory_order_acquire)) continue;
    StartCursor(t);
    while (t->first != nullptr) {
      Chunk* c = t->first;
      // Read `next` before `used`: if a successor exists, `used` is final.
      Chunk* next = c->next.load(std::memory_order_acquire);
      const uint32_t used = c->used.load(std::memory_order_acquire);
      const char* base = reinterpret_cast<const char*>(c);
      uint32_t pos = t->first_pos;
      while (pos + kHeaderSize <= used) {
        const HostRecordHeader h = HeaderAt(base + pos);
        if (h.type == HostRecordType::kThreadHandover) {
          t->first_tid = HandoverTid(base + pos);
        } else if (visitor != nullptr) {
          visitor(ctx, t->first_tid, h.type, h.flags, base + pos + kHeaderSize, h.size);
        }
        pos += HostRecordBytes(h.size);
      }
      t->first_pos = pos;
      if (next == nullptr) break;  // the last chunk stays (its owner writes on)
      t->first = next;
      t->first_pos = kChunkHeaderSize;
      t->first_tid = next->tid;
      FreeChunk(c);
    }
  }
}

void ResetHostRecords() { ConsumeHostRecords(nullptr, nullptr); }

void ResetHostRecordsBefore(uint64_t ts_ns, HostRecordVisitor dropped, void* ctx) {
  ThreadState* const slots = g_slots.load(std::memory_order_acquire);
  if (slots == nullptr) return;
  const uint32_t threads = std::min(g_slot_cursor.load(std::memory_order_acquire), g_max_threads);
  for (uint32_t i = 0; i < threads; ++i) {
    ThreadState* t = &slots[i];
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
        if (h.type == HostRecordType::kThreadHandover) {
          t->first_tid = HandoverTid(base + pos);
        } else if (h.size >= kTimestampOffset + sizeof(uint64_t) - kHeaderSize) {
          uint64_t ticks;
          std::memcpy(&ticks, base + pos + kTimestampOffset, sizeof ticks);
          if (HostTicksToNs(ticks) >= ts_ns) {
            stop = true;
            break;
          }
        }
        if (dropped != nullptr && h.type != HostRecordType::kThreadHandover) {
          dropped(ctx, t->first_tid, h.type, h.flags, base + pos + kHeaderSize, h.size);
        }
        pos += HostRecordBytes(h.size);
      }
      t->first_pos = pos;
      if (stop || next == nullptr) break;
      t->first = next;
      t->first_pos = kChunkHeaderSize;
      t->first_tid = next->tid;
      FreeChunk(c);
    }
  }
}

}  // namespace gprof::collector
