// CorrelationIndex: links CUDA API calls and the GPU work they launched through CUPTI's
// correlation id (launcher process only). Used by the table (a CPU op's CUDA total), the trace
// (ac2g flows, gpu_user_annotation spans) and the findings. Lookups are O(1) through a direct
// table when the ids are dense (CUPTI numbers calls consecutively: the usual case), else a
// binary search.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "model/gpu_records.h"
#include "model/profile.h"

namespace gprof {

// GpuRef::kind is model/gpu_records.h's GpuKind; the index only holds kKernel, kMemcpy and
// kMemset (0, 1, 2), which the trace writers use as indices of their 3-element tables.

struct GpuRef {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t correlation_id;
  uint32_t index;  // into Profile::kernels / memcpys / memsets
  uint32_t device_id;
  uint32_t stream_id;
  GpuKind kind;
};

class CorrelationIndex {
 public:
  explicit CorrelationIndex(const Profile& profile);
  // GPU work with this correlation id, earliest first. Id 0 (CUPTI: none) matches nothing.
  std::span<const GpuRef> Gpu(uint32_t correlation_id) const;
  // Summed duration of that work (the launching call's CUDA total).
  uint64_t GpuTimeNs(uint32_t correlation_id) const;
  // Index into Profile::api_calls of the first call with this id, or -1.
  int64_t ApiCall(uint32_t correlation_id) const;
  // Every launch: f(api_index, records) once per correlation id that has both GPU work and an
  // API call, with the first call with that id (ApiCall) and its work (Gpu). In correlation id
  // order; one linear pass (no lookups), for callers that visit every launch.
  template <typename F>
  void ForEachLaunch(F&& f) const;

 private:
  // For the ids base..base+size-2 of a sorted id sequence: starts[id - base] is the position of
  // the first element with that id or more, so [starts[i], starts[i + 1]) holds id base + i.
  // Empty (binary search instead) when the ids span more than a few times their count.
  struct Dense {
    uint32_t base = 0;
    std::vector<uint32_t> starts;
    template <typename Id>
    void Build(size_t count, Id id_at);
    bool Covers(uint32_t id) const {
      return id >= base && static_cast<uint64_t>(id - base) + 1 < starts.size();
    }
  };

  std::vector<GpuRef> gpu_;                          // sorted by (correlation, start)
  std::vector<std::pair<uint32_t, uint32_t>> api_;  // (correlation, index), sorted
  Dense gpu_dense_, api_dense_;
};

template <typename F>
void CorrelationIndex::ForEachLaunch(F&& f) const {
  size_t a = 0;
  size_t g = 0;
  while (a < api_.size() && g < gpu_.size()) {
    const uint32_t id = gpu_[g].correlation_id;
    if (api_[a].first < id) {
      ++a;
      continue;
    }
    size_t g_end = g + 1;
    while (g_end < gpu_.size() && gpu_[g_end].correlation_id == id) ++g_end;
    // api_ is sorted by (id, index): api_[a] is the first call with this id.
    if (api_[a].first == id && id != 0) {
      f(api_[a].second, std::span<const GpuRef>(gpu_.data() + g, g_end - g));
    }
    g = g_end;
  }
}

}  // namespace gprof
