// MemoryTimeline (see memory_timeline.h).
#include "analysis/timeline/memory_timeline.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace gprof {

std::vector<MemoryEvent> MemoryTimeline(const Profile& p) {
  std::vector<uint32_t> order(p.memory_ops.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return p.memory_ops[a].ts_ns < p.memory_ops[b].ts_ns;
  });
  std::vector<MemoryEvent> out;
  out.reserve(order.size());
  std::unordered_map<uint64_t, uint32_t> live;  // (device << 56 ^ address) -> allocation
  std::map<uint32_t, uint64_t> on_device;       // device -> bytes
  std::unordered_set<uint64_t> segments;       // (device << 56 ^ address) of torch's segments
  for (const TorchMemoryEvent& t : p.torch_memory) {
    if (t.action == TorchMemAction::kSegmentAlloc) {
      segments.insert(static_cast<uint64_t>(t.device) << 56 ^ t.address);
    }
  }
  uint64_t in_use = 0;
  for (uint32_t i : order) {
    const MemoryOp& m = p.memory_ops[i];
    const uint64_t key = static_cast<uint64_t>(m.device_id) << 56 ^ m.address;
    MemoryEvent e{i, kNoAlloc, 0, 0, 0, segments.count(key) != 0};
    uint64_t bytes = m.bytes;
    if (m.op == MemoryOpKind::kAlloc) {
      live[key] = i;
      e.delta = static_cast<int64_t>(bytes);
    } else {
      if (auto it = live.find(key); it != live.end()) {
        e.alloc_op = it->second;
        bytes = p.memory_ops[it->second].bytes;
        live.erase(it);
      }
      e.delta = -static_cast<int64_t>(bytes);
    }
    uint64_t& dev = on_device[m.device_id];
    if (IsDeviceMemory(m)) {
      if (e.delta >= 0) {
        in_use = AddBytes(in_use, bytes);
        dev = AddBytes(dev, bytes);
      } else {
        in_use -= std::min(in_use, bytes);
        dev -= std::min(dev, bytes);
      }
    }
    e.in_use = in_use;
    e.on_device = dev;
    out.push_back(e);
  }
  return out;
}

namespace {

// The index of the first point whose `bytes` is the highest, or -1 when none is above 0.
template <typename Point, typename Bytes>
int64_t FirstHighest(const std::vector<Point>& timeline, Bytes bytes_of) {
  int64_t peak = -1;
  uint64_t bytes = 0;
  for (size_t i = 0; i < timeline.size(); ++i) {
    if (bytes_of(timeline[i]) > bytes) {
      bytes = bytes_of(timeline[i]);
      peak = static_cast<int64_t>(i);
    }
  }
  return peak;
}

}  // namespace

int64_t MemoryPeakEvent(const std::vector<MemoryEvent>& timeline) {
  return FirstHighest(timeline, [](const MemoryEvent& e) { return e.in_use; });
}

std::vector<uint32_t> LiveAllocations(const Profile& p, const std::vector<MemoryEvent>& timeline,
                                      size_t at) {
  std::unordered_set<uint32_t> live;
  for (size_t i = 0; i <= at && i < timeline.size(); ++i) {
    const MemoryEvent& e = timeline[i];
    if (!IsDeviceMemory(p.memory_ops[e.op])) continue;
    if (p.memory_ops[e.op].op == MemoryOpKind::kAlloc) {
      live.insert(e.op);
    } else if (e.alloc_op != kNoAlloc) {
      live.erase(e.alloc_op);
    }
  }
  std::vector<uint32_t> out(live.begin(), live.end());
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    return std::make_pair(p.memory_ops[a].bytes, b) > std::make_pair(p.memory_ops[b].bytes, a);
  });
  return out;
}

std::vector<TorchMemoryPoint> TorchAllocatedTimeline(const Profile& p) {
  std::vector<TorchMemoryPoint> out;
  std::map<uint32_t, uint64_t> on_device;
  uint64_t allocated = 0;
  for (uint32_t i = 0; i < p.torch_memory.size(); ++i) {  // already in time order
    const TorchMemoryEvent& e = p.torch_memory[i];
    if (e.action != TorchMemAction::kAlloc && e.action != TorchMemAction::kFree) continue;
    uint64_t& dev = on_device[e.device];
    if (e.action == TorchMemAction::kAlloc) {
      allocated = AddBytes(allocated, e.bytes);
      dev = AddBytes(dev, e.bytes);
    } else {
      allocated -= std::min(allocated, e.bytes);
      dev -= std::min(dev, e.bytes);
    }
    out.push_back({i, allocated, dev});
  }
  return out;
}

int64_t TorchAllocatedPeak(const std::vector<TorchMemoryPoint>& timeline) {
  return FirstHighest(timeline, [](const TorchMemoryPoint& e) { return e.allocated; });
}

std::vector<uint32_t> LiveTorchBlocks(const Profile& p,
                                      const std::vector<TorchMemoryPoint>& timeline, size_t at) {
  std::unordered_map<uint64_t, uint32_t> live;  // (device << 56 ^ address) -> allocation
  for (size_t i = 0; i <= at && i < timeline.size(); ++i) {
    const TorchMemoryEvent& e = p.torch_memory[timeline[i].event];
    const uint64_t key = static_cast<uint64_t>(e.device) << 56 ^ e.address;
    if (e.action == TorchMemAction::kAlloc) {
      live[key] = timeline[i].event;
    } else {
      live.erase(key);
    }
  }
  std::vector<uint32_t> out;
  out.reserve(live.size());
  for (const auto& [key, event] : live) out.push_back(event);
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    return std::make_pair(p.torch_memory[a].bytes, b) > std::make_pair(p.torch_memory[b].bytes, a);
  });
  return out;
}

}  // namespace gprof
