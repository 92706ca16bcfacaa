// The allocation and free records of a profile (Profile::memory_ops, CUPTI's MEMORY2) in time
// order, with what every reader of them needs and must agree on: each free's size (its
// allocation's, matched by device and address; CUPTI may report a free with 0 bytes, and a free
// of something never seen allocated keeps its own), and the device memory in use after each
// record. Device memory is everything but pinned host memory (MemKind::kPinned), which the
// table counts as CPU memory. Used by the table's memory columns (key_averages.cpp), the trace's
// counters and peak (trace_plan.cpp), the memory findings and stats' memory_sum. Launcher only.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "model/profile.h"

namespace gprof {

struct MemoryEvent {
  uint32_t op;          // index into Profile::memory_ops
  uint32_t alloc_op;    // a free: the allocation it ends (kNoAlloc when never seen)
  int64_t delta;        // +size of an allocation, -size of a free
  uint64_t in_use;      // device memory in use after it, all devices together
  uint64_t on_device;   // device memory in use on this record's device after it
  // One of torch's caching allocator segments (its address is a segment_alloc's in
  // Profile::torch_memory): in CUDA's view, never in the memory columns, which count torch's
  // blocks in it instead.
  bool torch_segment;
};
inline constexpr uint32_t kNoAlloc = 0xffffffffu;

// Byte sums that stop at the type's limit instead of overflowing. Each size is below
// kMaxRecordBytes (the dump reader checks), but a hostile dump can hold enough of them to pass
// 2^63; no real profile comes near it.
inline int64_t AddBytes(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}
inline int64_t SubBytes(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}
inline uint64_t AddBytes(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

inline bool IsDeviceMemory(const MemoryOp& m) { return m.mem_kind != MemKind::kPinned; }

// Every memory record of `p`, ordered by time (stable for equal times).
std::vector<MemoryEvent> MemoryTimeline(const Profile& p);

// The index of the first event with the highest `in_use`, or -1 when there is none above 0.
int64_t MemoryPeakEvent(const std::vector<MemoryEvent>& timeline);

// The allocations live right after event `at` (op indices), largest first.
std::vector<uint32_t> LiveAllocations(const Profile& p, const std::vector<MemoryEvent>& timeline,
                                      size_t at);

// PyTorch's caching allocator (Profile::torch_memory, when the launcher attached it): its block
// allocations and frees in time order, with the bytes its blocks hold after each — torch's
// "allocated" memory (memory_allocated()), where MemoryTimeline is CUDA's view of the same
// program (the allocator's segments, torch's "reserved"). A free of a block allocated before the
// profile's window counts down to 0, never below.
struct TorchMemoryPoint {
  uint32_t event;      // index into Profile::torch_memory
  uint64_t allocated;  // all devices together, after it
  uint64_t on_device;  // on the event's device, after it
};
std::vector<TorchMemoryPoint> TorchAllocatedTimeline(const Profile& p);
// The index of the first point with the highest `allocated`, or -1 when there is none above 0.
int64_t TorchAllocatedPeak(const std::vector<TorchMemoryPoint>& timeline);
// The blocks live right after point `at` (torch_memory indices of their allocations), largest
// first.
std::vector<uint32_t> LiveTorchBlocks(const Profile& p,
                                      const std::vector<TorchMemoryPoint>& timeline, size_t at);

}  // namespace gprof
