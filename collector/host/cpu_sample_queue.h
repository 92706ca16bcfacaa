// The queue that --cpu-sampling's samples wait in until a profile build takes them
// (docs/CPU_SAMPLING.md).
//
// Threads: TryPush runs in a SIGPROF handler on any program thread (timer backend) or on the
// perf reader thread: lock-free, no allocation, no syscall, async-signal-safe (a bounded
// multi-producer ring after D. Vyukov's: a producer claims a slot with one CAS, fills it, then
// publishes it with a release store of its sequence number). Drain runs on one thread at a time
// (profile builds hold flush_mutex). A slot claimed but not yet published stops the drain there:
// it is taken by the next build. A full queue drops the sample and counts it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "model/records.h"

namespace gprof::collector {

class CpuSampleQueue {
 public:
  // Cold: reserves `capacity` slots (a power of two) with mmap, touched only as they fill.
  bool Init(size_t capacity) noexcept;

  bool TryPush(uint64_t time_ns, uint32_t tid, uint64_t cpu_ns, const uint64_t* pcs,
               uint32_t depth) noexcept {
    if (slots_ == nullptr || depth == 0) return false;
    uint64_t pos = enqueue_.load(std::memory_order_relaxed);
    Slot* slot = nullptr;
    for (;;) {
      slot = &slots_[pos & mask_];
      const uint64_t seq = slot->seq.load(std::memory_order_acquire);
      const int64_t diff = static_cast<int64_t>(seq - pos);
      if (diff == 0) {
        if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (diff < 0) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
      } else {
        pos = enqueue_.load(std::memory_order_relaxed);
      }
    }
    slot->time_ns = time_ns;
    slot->tid = tid;
    slot->cpu_ns = cpu_ns;
    slot->depth = depth > kMaxStackDepth ? kMaxStackDepth : depth;
    for (uint32_t i = 0; i < slot->depth; ++i) slot->pcs[i] = pcs[i];
    slot->seq.store(pos + 1, std::memory_order_release);
    return true;
  }

  // One consumer: calls f(time_ns, tid, cpu_ns, pcs, depth) for each published sample, oldest first.
  template <typename F>
  size_t Drain(F&& f) {
    size_t n = 0;
    while (slots_ != nullptr) {
      Slot* slot = &slots_[dequeue_ & mask_];
      if (slot->seq.load(std::memory_order_acquire) != dequeue_ + 1) break;
      f(slot->time_ns, slot->tid, slot->cpu_ns, slot->pcs, slot->depth);
      slot->seq.store(dequeue_ + mask_ + 1, std::memory_order_release);
      ++dequeue_;
      ++n;
    }
    return n;
  }

  void CountDropped(uint64_t n) noexcept { dropped_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<uint64_t> seq;
    uint64_t time_ns;
    uint32_t tid;
    uint32_t depth;
    uint64_t cpu_ns;
    uint64_t pcs[kMaxStackDepth];
  };
  Slot* slots_ = nullptr;
  uint64_t mask_ = 0;
  std::atomic<uint64_t> enqueue_{0};
  uint64_t dequeue_ = 0;  // the consumer's only
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace gprof::collector
