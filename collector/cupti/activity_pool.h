// The bounded pool of CUPTI activity buffers. CUPTI asks for a buffer whenever it needs one; we
// hand out at most `max_buffers` at once (GPROF_ACTIVITY_POOL x GPROF_ACTIVITY_BUFFER_KIB), so a
// program that launches faster than we parse loses records (counted) instead of memory.
//
// Threads and rules:
//   Acquire   - CUPTI's buffer-request callback (an application thread or a CUPTI thread). Lock-
//               free: a CAS over slot states. The first use of a slot mmaps its buffer (lazy,
//               reused afterwards); no malloc, no locks, no logging.
//   Complete  - CUPTI's buffer-completed callback (a CUPTI thread, or the thread calling
//               cuptiActivityFlushAll). Lock-free: marks the slot and wakes the parser.
//   TakeCompleted / Release - the collector's parser thread only.
//   Counters  - any thread (atomics).
// Buffers handed back by Release are zeroed (up to the bytes CUPTI used), so the pool can promise
// CUPTI zeroed buffers (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gprof::collector {

class ActivityBufferPool {
 public:
  struct Completed {
    uint8_t* buffer;
    size_t valid_size;
    uint64_t sequence;  // completion order
  };

  ActivityBufferPool() = default;
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;
  ~ActivityBufferPool();

  // Cold: sizes the slot table (no buffer is allocated yet). Call once.
  void Init(size_t buffer_bytes, uint32_t max_buffers);

  // A free buffer of buffer_size() bytes (8-byte aligned, zeroed), or nullptr when all
  // max_buffers are outstanding (counted in refused()).
  uint8_t* Acquire();
  // CUPTI is done with `buffer`; `valid_size` bytes hold records. Unknown pointers are ignored.
  void Complete(uint8_t* buffer, size_t valid_size);

  // Parser thread: appends every completed buffer, oldest completion first.
  void TakeCompleted(std::vector<Completed>* out);
  // Parser thread: the buffer is parsed; zero it and make it available again.
  void Release(uint8_t* buffer, size_t valid_size);

  // Blocks until a completion newer than `seen_generation` happened or Wake() was called.
  void WaitForWork(uint32_t seen_generation);
  uint32_t generation() const { return generation_.load(std::memory_order_acquire); }
  void Wake();

  size_t buffer_size() const { return buffer_bytes_; }
  uint32_t capacity() const { return static_cast<uint32_t>(slots_.size()); }
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  uint64_t completed() const { return completed_.load(std::memory_order_acquire); }
  uint32_t allocated() const { return allocated_.load(std::memory_order_relaxed); }
  // Buffers CUPTI holds now (handed out, not completed). Cold: a scan of the slot table.
  uint32_t in_use() const;

 private:
  enum State : uint32_t { kEmpty = 0, kFree = 1, kInUse = 2, kCompleted = 3 };
  struct Slot {
    std::atomic<uint32_t> state{kEmpty};
    uint8_t* mapping = nullptr;  // header + buffer; written once by the thread that mapped it
    size_t valid_size = 0;       // written by Complete before state becomes kCompleted
    uint64_t sequence = 0;
  };
  // The header in front of each buffer records its slot, so Complete finds it in O(1).
  static constexpr size_t kHeader = 64;

  Slot* SlotOf(uint8_t* buffer);

  size_t buffer_bytes_ = 0;
  std::vector<Slot> slots_;  // sized once in Init, never resized (callbacks index into it)
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint32_t> allocated_{0};
  std::atomic<uint32_t> generation_{0};  // bumped on every completion (futex word)
};

}  // namespace gprof::collector
