// Correlation id lookups (see correlation_index.h).
#include "analysis/attribution/correlation_index.h"

#include <algorithm>
#include <tuple>

namespace gprof {

template <typename Id>
void CorrelationIndex::Dense::Build(size_t count, Id id_at) {
  starts.clear();
  if (count == 0) return;
  const uint32_t lo = id_at(0), hi = id_at(count - 1);
  // A direct table costs 4 bytes per id in the span: worth it up to 4 ids per element.
  if (static_cast<uint64_t>(hi - lo) + 1 > 4 * static_cast<uint64_t>(count) + 1024) return;
  base = lo;
  starts.resize(static_cast<size_t>(hi - lo) + 2);
  size_t pos = 0;
  for (uint64_t id = lo; id <= static_cast<uint64_t>(hi) + 1; ++id) {
    while (pos < count && id_at(pos) < id) ++pos;
    starts[id - lo] = static_cast<uint32_t>(pos);
  }
}

CorrelationIndex::CorrelationIndex(const Profile& p) {
  gpu_.reserve(p.kernels.size() + p.memcpys.size() + p.memsets.size());
  for (uint32_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel& k = p.kernels[i];
    gpu_.push_back({k.start_ns, k.end_ns, k.correlation_id, i, KernelDeviceId(p, k), k.stream_id,
                    GpuKind::kKernel});
  }
  for (uint32_t i = 0; i < p.memcpys.size(); ++i) {
    const Memcpy& m = p.memcpys[i];
    gpu_.push_back({m.start_ns, m.end_ns, m.correlation_id, i, m.device_id, m.stream_id, GpuKind::kMemcpy});
  }
  for (uint32_t i = 0; i < p.memsets.size(); ++i) {
    const Memset& m = p.memsets[i];
    gpu_.push_back({m.start_ns, m.end_ns, m.correlation_id, i, m.device_id, m.stream_id, GpuKind::kMemset});
  }
  std::stable_sort(gpu_.begin(), gpu_.end(), [](const GpuRef& a, const GpuRef& b) {
    return std::tie(a.correlation_id, a.start_ns) < std::tie(b.correlation_id, b.start_ns);
  });
  api_.reserve(p.api_calls.size());
  for (uint32_t i = 0; i < p.api_calls.size(); ++i) api_.emplace_back(p.api_calls[i].correlation_id, i);
  std::sort(api_.begin(), api_.end());
  gpu_dense_.Build(gpu_.size(), [&](size_t i) { return gpu_[i].correlation_id; });
  api_dense_.Build(api_.size(), [&](size_t i) { return api_[i].first; });
}

std::span<const GpuRef> CorrelationIndex::Gpu(uint32_t correlation_id) const {
  if (correlation_id == 0) return {};  // CUPTI's "no correlation": links nothing
  if (gpu_dense_.Covers(correlation_id)) {
    const uint32_t i = correlation_id - gpu_dense_.base;
    return {gpu_.data() + gpu_dense_.starts[i], gpu_.data() + gpu_dense_.starts[i + 1]};
  }
  if (!gpu_dense_.starts.empty()) return {};  // outside the ids there are
  const auto lo = std::lower_bound(gpu_.begin(), gpu_.end(), correlation_id,
                                   [](const GpuRef& r, uint32_t c) { return r.correlation_id < c; });
  auto hi = lo;
  while (hi != gpu_.end() && hi->correlation_id == correlation_id) ++hi;
  return {lo, hi};
}

uint64_t CorrelationIndex::GpuTimeNs(uint32_t correlation_id) const {
  uint64_t sum = 0;
  for (const GpuRef& r : Gpu(correlation_id)) sum += r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0;
  return sum;
}

int64_t CorrelationIndex::ApiCall(uint32_t correlation_id) const {
  if (correlation_id == 0) return -1;
  if (api_dense_.Covers(correlation_id)) {
    const uint32_t i = correlation_id - api_dense_.base;
    if (api_dense_.starts[i] == api_dense_.starts[i + 1]) return -1;
    return api_[api_dense_.starts[i]].second;
  }
  if (!api_dense_.starts.empty()) return -1;
  const auto it = std::lower_bound(api_.begin(), api_.end(), std::make_pair(correlation_id, 0u));
  if (it == api_.end() || it->first != correlation_id) return -1;
  return it->second;
}

}  // namespace gprof
