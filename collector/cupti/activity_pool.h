// The bounded pool of CUPTI activity buffers. CUPTI asks for a buffer whenever it needs one; we
// hand out at most `max_buffers` at once (GPROF_ACTIVITY_POOL x GPROF_ACTIVITY_BUFFER_KIB), and
// only while the pending bytes stay under `max_pending_bytes` (GPROF_PENDING_MIB): the buffers
// held (lent to CUPTI, or completed and not yet parsed) plus the decoded records waiting for a
// drain (SetDecodedBytes). CUPTI keeps a buffer until every record in it is complete
// (cupti_activity.h, cuptiActivityFlushAll), so when the host runs ahead of the GPU the held
// buffers cannot be shortened or given back: refusing the next request is the one lever, and
// CUPTI then drops and counts the records (a null buffer is allowed since CUPTI API 27). So a
// program that launches faster than the GPU or we can keep up loses records (counted) instead
// of memory.
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

  // Cold: sizes the slot table (no buffer is allocated yet). Call once. `max_pending_bytes` 0:
  // no byte cap. One buffer is always lent when none is held and nothing waits decoded.
  void Init(size_t buffer_bytes, uint32_t max_buffers, uint64_t max_pending_bytes = 0);

  // A free buffer of buffer_size() bytes (8-byte aligned, zeroed), or nullptr when all
  // max_buffers are outstanding or one more would pass max_pending_bytes (counted in refused()).
  uint8_t* Acquire();
  // CUPTI is done with `buffer`; `valid_size` bytes hold records. Unknown pointers are ignored.
  void Complete(uint8_t* buffer, size_t valid_size);

  // Parser thread: appends every completed buffer, oldest completion first.
  void TakeCompleted(std::vector<Completed>* out);
  // Parser thread: the buffer is parsed; zero it and make it available again.
  void Release(uint8_t* buffer, size_t valid_size);

  // Blocks until a completion newer than `seen_generation` happened or Wake() was called.
  // Parser and drain: the decoded records now waiting for a drain, in bytes (counted against
  // max_pending_bytes).
  void SetDecodedBytes(uint64_t bytes) { decoded_bytes_.store(bytes, std::memory_order_relaxed); }
  // Buffers held now: lent to CUPTI or completed and not yet released.
  uint32_t held() const { return held_.load(std::memory_order_relaxed); }

  void WaitForWork(uint32_t seen_generation);
  uint32_t generation() const { return generation_.load(std::memory_order_acquire); }
  void Wake();

  size_t buffer_size() const { return buffer_bytes_; }
  uint32_t capacity() const { return static_cast<uint32_t>(slots_.size()); }
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  // Of those, the requests refused at max_pending_bytes.
  uint64_t refused_pending() const { return refused_pending_.load(std::memory_order_relaxed); }
  uint64_t max_pending_bytes() const { return max_pending_bytes_; }
  uint64_t completed() const { return completed_.load(std::memory_order_acquire); }
  uint32_t allocated() const { return allocated_.load(std::memory_order_relaxed); }
  // Buffers CUPTI holds now (handed out, not completed). Cold: a scan of the slot table.
  uint32_t in_use() const;
  // Buffers CUPTI completed that the parser has not taken back yet. Cold: a scan.
  uint32_t completed_waiting() const;

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

  bool ReserveHeld();  // one more held buffer within the caps; false: refuse (counted)

  size_t buffer_bytes_ = 0;
  uint64_t max_pending_bytes_ = 0;  // 0: no byte cap
  std::atomic<uint32_t> held_{0};
  std::atomic<uint64_t> decoded_bytes_{0};
  std::vector<Slot> slots_;  // sized once in Init, never resized (callbacks index into it)
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> refused_pending_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint32_t> allocated_{0};
  std::atomic<uint32_t> generation_{0};  // bumped on every completion (futex word)
};

}  // namespace gprof::collector
