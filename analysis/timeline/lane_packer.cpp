// Greedy nesting lane packer (see lane_packer.h).
#include "analysis/timeline/lane_packer.h"

#include <algorithm>
#include <numeric>

namespace gprof {

std::vector<uint32_t> PackNestedLanes(const std::vector<LaneInterval>& in) {
  std::vector<uint32_t> order(in.size());
  std::iota(order.begin(), order.end(), 0u);
  // Placement order: by start, longest first, then order, id, input position.
  const auto before = [&](uint32_t a, uint32_t b) {
    const LaneInterval& x = in[a];
    const LaneInterval& y = in[b];
    if (x.start != y.start) return x.start < y.start;
    if (x.end != y.end) return x.end > y.end;
    if (x.order != y.order) return x.order < y.order;
    if (x.id != y.id) return x.id < y.id;
    return a < b;
  };
  // A track's events usually arrive in that order already (one stream, one thread): skip the sort.
  if (!std::is_sorted(order.begin(), order.end(), before)) std::sort(order.begin(), order.end(), before);
  std::vector<uint32_t> lane(in.size(), 0);
  std::vector<std::vector<uint64_t>> stacks;  // per lane: ends of the open slices
  for (uint32_t i : order) {
    const uint64_t start = in[i].start;
    const uint64_t end = std::max(in[i].end, start);
    size_t k = 0;
    for (; k < stacks.size(); ++k) {
      auto& st = stacks[k];
      while (!st.empty() && st.back() <= start) st.pop_back();
      if (st.empty() || end <= st.back()) break;
    }
    if (k == stacks.size()) stacks.emplace_back();
    stacks[k].push_back(end);
    lane[i] = static_cast<uint32_t>(k);
  }
  return lane;
}

}  // namespace gprof
