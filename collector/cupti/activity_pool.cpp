// The bounded activity-buffer pool (see activity_pool.h for which thread calls what).
#include "collector/cupti/activity_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

namespace gprof::collector {

ActivityBufferPool::~ActivityBufferPool() {
  // Only test pools are destroyed; the collector's pool lives until the process ends.
  for (Slot& slot : slots_) {
    if (slot.mapping != nullptr) munmap(slot.mapping, kHeader + buffer_bytes_);
  }
}

void ActivityBufferPool::Init(size_t buffer_bytes, uint32_t max_buffers,
                              uint64_t max_pending_bytes) {
  buffer_bytes_ = (buffer_bytes + 7) & ~size_t{7};
  max_pending_bytes_ = max_pending_bytes;
  slots_ = std::vector<Slot>(max_buffers == 0 ? 1 : max_buffers);
}

bool ActivityBufferPool::ReserveHeld() {
  uint32_t held = held_.load(std::memory_order_relaxed);
  for (;;) {
    if (held >= slots_.size()) return false;
    const uint64_t decoded = decoded_bytes_.load(std::memory_order_relaxed);
    const uint64_t after = (uint64_t{held} + 1) * buffer_bytes_ + decoded;
    if (max_pending_bytes_ != 0 && after > max_pending_bytes_ && (held != 0 || decoded != 0)) {
      refused_pending_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    // A CAS, so that threads requesting at once cannot pass the cap together.
    if (held_.compare_exchange_weak(held, held + 1, std::memory_order_relaxed)) return true;
  }
}

uint32_t ActivityBufferPool::in_use() const {
  uint32_t n = 0;
  for (const Slot& slot : slots_) n += slot.state.load(std::memory_order_acquire) == kInUse;
  return n;
}

uint32_t ActivityBufferPool::completed_waiting() const {
  uint32_t n = 0;
  for (const Slot& slot : slots_) n += slot.state.load(std::memory_order_acquire) == kCompleted;
  return n;
}

uint8_t* ActivityBufferPool::Acquire() {
  if (!ReserveHeld()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  // Reuse a mapped buffer first, so the pool grows only when every mapped one is busy.
  for (Slot& slot : slots_) {
    uint32_t expected = kFree;
    if (slot.state.load(std::memory_order_relaxed) == kFree &&
        slot.state.compare_exchange_strong(expected, kInUse, std::memory_order_acquire)) {
      return slot.mapping + kHeader;
    }
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    uint32_t expected = kEmpty;
    if (slot.state.load(std::memory_order_relaxed) == kEmpty &&
        slot.state.compare_exchange_strong(expected, kInUse, std::memory_order_acquire)) {
      // mmap, not malloc: a syscall is acceptable in the request callback, the allocator's locks
      // are not. Fresh anonymous pages are zero.
      void* mem = mmap(nullptr, kHeader + buffer_bytes_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mem == MAP_FAILED) {
        slot.state.store(kEmpty, std::memory_order_release);
        break;  // refused below
      }
      slot.mapping = static_cast<uint8_t*>(mem);
      uint64_t index = i;
      std::memcpy(slot.mapping, &index, sizeof(index));
      allocated_.fetch_add(1, std::memory_order_relaxed);
      return slot.mapping + kHeader;
    }
  }
  held_.fetch_sub(1, std::memory_order_relaxed);
  refused_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

ActivityBufferPool::Slot* ActivityBufferPool::SlotOf(uint8_t* buffer) {
  if (buffer == nullptr) return nullptr;
  uint64_t index = 0;
  std::memcpy(&index, buffer - kHeader, sizeof(index));
  if (index >= slots_.size() || slots_[index].mapping + kHeader != buffer) return nullptr;
  return &slots_[index];
}

void ActivityBufferPool::Complete(uint8_t* buffer, size_t valid_size) {
  Slot* slot = SlotOf(buffer);
  if (slot == nullptr) return;
  slot->valid_size = std::min(valid_size, buffer_bytes_);
  slot->sequence = completed_.fetch_add(1, std::memory_order_relaxed);
  slot->state.store(kCompleted, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_one();
}

void ActivityBufferPool::TakeCompleted(std::vector<Completed>* out) {
  size_t first = out->size();
  for (Slot& slot : slots_) {
    if (slot.state.load(std::memory_order_acquire) == kCompleted) {
      out->push_back({slot.mapping + kHeader, slot.valid_size, slot.sequence});
    }
  }
  std::sort(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(),
            [](const Completed& a, const Completed& b) { return a.sequence < b.sequence; });
}

void ActivityBufferPool::Release(uint8_t* buffer, size_t valid_size) {
  Slot* slot = SlotOf(buffer);
  if (slot == nullptr) return;
  std::memset(buffer, 0, std::min(valid_size, buffer_bytes_));
  slot->valid_size = 0;
  slot->state.store(kFree, std::memory_order_release);
  held_.fetch_sub(1, std::memory_order_relaxed);
}

void ActivityBufferPool::WaitForWork(uint32_t seen_generation) {
  generation_.wait(seen_generation, std::memory_order_acquire);
}

void ActivityBufferPool::Wake() {
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
}

}  // namespace gprof::collector
