// GpuRecords: the GPU work records of a profile (or of one decoded CUPTI batch), one vector per
// kind, and ForEachGpuKind, the one list of those kinds. Code that treats every kind alike (merge,
// move, window cut, dump sections, time bounds) iterates with ForEachGpuKind, so a new record
// kind is one line here plus what only that kind needs (its decoder, its trace events).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "model/records.h"

namespace gprof {

// Stable ids of the GPU record kinds (the dump maps each to its section id).
enum class GpuKind : uint8_t { kKernel, kMemcpy, kMemset, kSync, kMemoryOp, kOverhead };
inline constexpr size_t kGpuKindCount = 6;

struct GpuRecords {
  std::vector<Kernel> kernels;
  std::vector<Memcpy> memcpys;
  std::vector<Memset> memsets;
  std::vector<Sync> syncs;
  std::vector<MemoryOp> memory_ops;
  std::vector<Overhead> overheads;
};

// A vector added above must be added to ForEachGpuKind and GpuKind too.
static_assert(sizeof(GpuRecords) == kGpuKindCount * sizeof(std::vector<Kernel>),
              "every GpuRecords vector is a GpuKind listed in ForEachGpuKind");

// Calls f(GpuKind, vector&) for every kind, in GpuKind order. R is GpuRecords or const
// GpuRecords (or a type derived from it).
template <typename R, typename F>
void ForEachGpuKind(R& r, F&& f) {
  f(GpuKind::kKernel, r.kernels);
  f(GpuKind::kMemcpy, r.memcpys);
  f(GpuKind::kMemset, r.memsets);
  f(GpuKind::kSync, r.syncs);
  f(GpuKind::kMemoryOp, r.memory_ops);
  f(GpuKind::kOverhead, r.overheads);
}

// The vector of records of type T in `r` (kernels for Kernel, memcpys for Memcpy, ...).
template <typename T, typename R>
auto& RecordsOf(R& r) {
  static_assert(std::is_same_v<T, Kernel> || std::is_same_v<T, Memcpy> ||
                    std::is_same_v<T, Memset> || std::is_same_v<T, Sync> ||
                    std::is_same_v<T, MemoryOp> || std::is_same_v<T, Overhead>,
                "not a GpuRecords kind");
  std::conditional_t<std::is_const_v<R>, const std::vector<T>, std::vector<T>>* found = nullptr;
  ForEachGpuKind(r, [&](GpuKind, auto& v) {
    if constexpr (std::is_same_v<typename std::decay_t<decltype(v)>::value_type, T>) found = &v;
  });
  return *found;
}

// When a GPU record starts (a memory operation is an instant).
template <typename T>
uint64_t GpuRecordStartNs(const T& r) {
  if constexpr (std::is_same_v<T, MemoryOp>) {
    return r.ts_ns;
  } else {
    return r.start_ns;
  }
}

// Whether records of kind T carry the correlation id of the API call that caused them (overhead
// records describe CUPTI's own work and carry none).
template <typename T>
inline constexpr bool kGpuRecordHasCorrelation = !std::is_same_v<T, Overhead>;

}  // namespace gprof
