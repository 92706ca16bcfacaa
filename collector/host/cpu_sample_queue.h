// The queue that --cpu-sampling's samples wait in until a profile build takes them
// (docs/CPU_SAMPLING.md).
//
// Threads: TryPush runs in a SIGPROF handler on any program thread (timer backend) or on the
// perf reader thread: lock-free, no allocation, no syscall, async-signal-safe (a bounded
// multi-producer ring after D. Vyukov's: a producer claims a slot with one CAS, fills it, then
// publishes it with a release store of its sequence number). Drain runs on one thread at a time
// (profile builds hold flush_mutex). A slot claimed but not yet published stops the drain there:
// it is taken by the next build. A full queue drops the sample and counts it.
//
// The slots and the producers' counters live in one shared memory file (memfd), so that the
// sampler process (cpu_sampler_process.cpp, which maps the same file) pushes into the queue the
// program's profile builds drain: lock-free atomics in shared memory work across processes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "model/records.h"

namespace gprof::collector {

class CpuSampleQueue {
 public:
  // Cold: reserves `capacity` slots (a power of two) in a shared memory file (memfd_create; an
  // anonymous shared mapping where that is refused, and fd() is then -1).
  bool Init(size_t capacity) noexcept;
  // Cold, in the sampler process: maps the queue another process made with Init (its fd()).
  bool Attach(int fd, size_t capacity) noexcept;
  int fd() const noexcept { return fd_; }
  static size_t Bytes(size_t capacity) noexcept { return sizeof(Shared) + capacity * sizeof(Slot); }

  bool TryPush(uint64_t time_ns, uint32_t tid, uint64_t cpu_ns, const uint64_t* pcs,
               uint32_t depth) noexcept {
    if (slots_ == nullptr || depth == 0) return false;
    std::atomic<uint64_t>& enqueue = shared_->enqueue;
    uint64_t pos = enqueue.load(std::memory_order_relaxed);
    Slot* slot = nullptr;
    for (;;) {
      slot = &slots_[pos & mask_];
      const uint64_t seq = slot->seq.load(std::memory_order_acquire);
      const int64_t diff = static_cast<int64_t>(seq - pos);
      if (diff == 0) {
        if (enqueue.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (diff < 0) {
        shared_->dropped.fetch_add(1, std::memory_order_relaxed);
        return false;
      } else {
        pos = enqueue.load(std::memory_order_relaxed);
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

  void CountDropped(uint64_t n) noexcept {
    if (shared_ != nullptr) shared_->dropped.fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t dropped() const noexcept {
    return shared_ == nullptr ? 0 : shared_->dropped.load(std::memory_order_relaxed);
  }

 private:
  struct Slot {
    std::atomic<uint64_t> seq;
    uint64_t time_ns;
    uint32_t tid;
    uint32_t depth;
    uint64_t cpu_ns;
    uint64_t pcs[kMaxStackDepth];
  };
  // The producers' counters, at the start of the shared mapping (the slots follow).
  struct alignas(64) Shared {
    std::atomic<uint64_t> enqueue;
    std::atomic<uint64_t> dropped;
  };
  static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared between processes");
  Shared* shared_ = nullptr;
  Slot* slots_ = nullptr;
  uint64_t mask_ = 0;
  uint64_t dequeue_ = 0;  // the consumer's only
  int fd_ = -1;           // the memfd behind the mapping (close-on-exec)
};

}  // namespace gprof::collector
