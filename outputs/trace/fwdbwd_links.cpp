#include "outputs/trace/fwdbwd_links.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace gprof {

std::unordered_map<uint32_t, FwdBwdEnd> FwdBwdLinks(const Profile& p) {
  std::unordered_map<uint32_t, FwdBwdEnd> links;
  const std::string_view prefix(kEvaluateFunctionPrefix);
  const auto& R = p.ranges;
  const auto evaluate = [&](uint32_t i) { return p.strings.Get(R[i].name).starts_with(prefix); };
  // The torch ops with a sequence number, and the evaluate_function ops (torch's NVTX observer
  // gives those none), by thread then start (outer before inner on a tie).
  std::vector<uint32_t> ops;
  for (uint32_t i = 0; i < R.size(); ++i) {
    if ((R[i].flags & kRangeTorch) && (R[i].seq >= 0 || evaluate(i))) ops.push_back(i);
  }
  if (ops.empty()) return links;
  std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
    if (R[a].tid != R[b].tid) return R[a].tid < R[b].tid;
    if (R[a].start_ns != R[b].start_ns) return R[a].start_ns < R[b].start_ns;
    return R[a].end_ns > R[b].end_ns;
  });
  // Backward ops: each evaluate_function op, and the op of the node's name nested in it with a
  // sequence number (the same, where the outer one has one too): the flow's end.
  std::vector<bool> backward(ops.size(), false);
  std::vector<uint32_t> ends;  // index into p.ranges of each flow's end
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!evaluate(ops[k])) continue;
    const HostRange& e = R[ops[k]];
    const std::string_view node = p.strings.Get(e.name).substr(prefix.size());
    backward[k] = true;
    int64_t end = e.seq >= 0 ? static_cast<int64_t>(ops[k]) : int64_t{-1};
    for (size_t j = k + 1; j < ops.size() && R[ops[j]].tid == e.tid &&
                           R[ops[j]].start_ns <= e.end_ns; ++j) {
      const HostRange& inner = R[ops[j]];
      if (inner.seq >= 0 && (e.seq < 0 || inner.seq == e.seq) && inner.end_ns <= e.end_ns &&
          p.strings.Get(inner.name) == node) {
        backward[j] = true;
        end = ops[j];
        break;
      }
    }
    if (end >= 0) ends.push_back(static_cast<uint32_t>(end));
  }
  // Forward ops by sequence number, each list in start order.
  std::unordered_map<int32_t, std::vector<uint32_t>> forward;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!backward[k] && R[ops[k]].seq >= 0) forward[R[ops[k]].seq].push_back(ops[k]);
  }
  for (auto& [seq, list] : forward) {
    std::sort(list.begin(), list.end(),
              [&](uint32_t a, uint32_t b) { return R[a].start_ns < R[b].start_ns; });
  }
  std::sort(ends.begin(), ends.end(),
            [&](uint32_t a, uint32_t b) { return R[a].start_ns < R[b].start_ns; });
  uint32_t next_flow = 1;
  for (uint32_t end : ends) {
    const HostRange& b = R[end];
    auto it = forward.find(b.seq);
    if (it == forward.end()) continue;
    // The last forward op to start before the backward op, on its thread if there is one.
    int64_t same_thread = -1, any_thread = -1;
    for (uint32_t f : it->second) {
      if (R[f].start_ns >= b.start_ns) break;
      any_thread = f;
      if (R[f].tid == b.tid) same_thread = f;
    }
    const int64_t chosen = same_thread >= 0 ? same_thread : any_thread;
    if (chosen < 0 || links.count(static_cast<uint32_t>(chosen))) continue;  // one flow each
    links[static_cast<uint32_t>(chosen)] = FwdBwdEnd{next_flow, true, 0};
    links[end] = FwdBwdEnd{next_flow, false, R[chosen].tid};
    ++next_flow;
  }
  return links;
}

}  // namespace gprof
