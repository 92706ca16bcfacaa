// See record_layouts.h. Test-only. Threads: any (reads immutable knobs).
#include "tests/cudasim/cupti/record_layouts.h"

#include <cstdlib>
#include <cstring>

#include "tests/cudasim/sim_api.h"

namespace gprof::cudasim {
namespace {

using namespace layout;

// The 13.0 sizes, from the toolkit's headers where libcupti.so.13 is built (layout_check.cpp checks
// them against the 12.8 headers libcupti.so.12 is built with).
constexpr size_t kMemcpy6 = 96, kMemset4 = 88, kDevice5 = 184, kMemory4 = 128, kSync2 = 56;
constexpr RecordLayouts k130{"13.0", kKernel10Size, kMemcpy6, kMemset4, kDevice5, kMemory4, kSync2};
constexpr RecordLayouts k131{"13.1", kKernel11Size, kMemcpy6, kMemset4, kDevice5, kMemory4, kSync2};
constexpr RecordLayouts k132{"13.2", kKernel11Size, kMemcpy6, kMemset4, kDevice6Size, kMemory4,
                             kSync2};
constexpr RecordLayouts k135{"13.5", kKernel13Size, kMemcpy7Size, kMemset5Size, kDevice6Size,
                             kMemory4, kSync2};
constexpr RecordLayouts k128{"12.8", kKernel9Size, kMemcpy6, kMemset4, kDevice5, kMemory4, kSync2};
constexpr RecordLayouts k126{"12.6", kKernel9Size, kMemcpy5Size, kMemset4, kDevice5, kMemory4,
                             kSync1Size};
constexpr RecordLayouts k124{"12.4", kKernel9Size, kMemcpy5Size, kMemset4, kDevice5, kMemory3Size,
                             kSync1Size};

template <typename T>
void Put(uint8_t* bytes, size_t offset, T value) {
  std::memcpy(bytes + offset, &value, sizeof(value));
}

}  // namespace

const RecordLayouts& LayoutsFor(uint32_t v) {
  if (v >= 130500 && v < 140000) return k135;
  if (v >= 130200 && v < 140000) return k132;
  if (v >= 130100 && v < 140000) return k131;
  if (v >= 26 && v < 10000) return k128;  // CUDA 12.8 (26) and 12.9 (27, 28)
  if (v >= 24 && v < 26) return k126;     // CUDA 12.6 (24; 25 has no header to read)
  if (v > 0 && v < 24) return k124;     // CUDA 12.4 (22), 12.5 (23); older for the number only
  return k130;  // 13.0, and other versions (played for their number only)
}

uint32_t PlayedCuptiVersion() {
#if CUDASIM_CUPTI_MAJOR == 12
  static const bool set = std::getenv("CUDASIM_CUPTI_VERSION") != nullptr;
  if (!set) return 26;
#endif
  return cudasim_knobs()->cupti_version;
}

const RecordLayouts& PlayedLayouts() { return LayoutsFor(PlayedCuptiVersion()); }

size_t PlayedRecordSize(CUpti_ActivityKind kind, size_t base) {
  const RecordLayouts& l = PlayedLayouts();
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return l.kernel;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return l.memcpy;
    case CUPTI_ACTIVITY_KIND_MEMSET: return l.memset;
    case CUPTI_ACTIVITY_KIND_DEVICE: return l.device;
    case CUPTI_ACTIVITY_KIND_MEMORY2: return l.memory;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return l.sync;
    default: return base;
  }
}

size_t WidenToPlayedLayout(uint8_t* bytes, size_t size, size_t capacity) {
  CUpti_ActivityKind kind;
  std::memcpy(&kind, bytes, sizeof(kind));
  const size_t grown = PlayedRecordSize(kind, size);
  if (grown <= size) return grown;  // the same struct, or a smaller 12.x one: its prefix
  if (grown > capacity) return 0;
  std::memset(bytes + size, 0, grown - size);
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      // The default priority, as a kernel on a stream created without one has.
      Put<int32_t>(bytes, kKernel11Priority, 0);
      if (grown >= kKernel13Size) {
        uint32_t graph_id = 0;
        uint64_t graph_node_id = 0;
        std::memcpy(&graph_id, bytes + offsetof(HandedKernel, graphId), sizeof(graph_id));
        std::memcpy(&graph_node_id, bytes + offsetof(HandedKernel, graphNodeId),
                    sizeof(graph_node_id));
        Put<uint32_t>(bytes, kKernel13ExecutionModel, kExecutionModelSimt);
        // cupti_activity.h (13.5): the graph and node a cloned graph's node came from; a kernel
        // outside a cloned graph reports its own ids.
        Put<uint32_t>(bytes, kKernel13SourceGraphId, graph_id);
        Put<uint64_t>(bytes, kKernel13SourceGraphNodeId, graph_node_id);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      uint32_t graph_id = 0;
      uint64_t node_id = 0;
      std::memcpy(&graph_id, bytes + offsetof(CUpti_ActivityMemcpy6, graphId), sizeof(graph_id));
      std::memcpy(&node_id, bytes + offsetof(CUpti_ActivityMemcpy6, graphNodeId), sizeof(node_id));
      Put<uint32_t>(bytes, kMemcpy7SourceGraphId, graph_id);
      Put<uint64_t>(bytes, kMemcpy7SourceGraphNodeId, node_id);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      uint32_t graph_id = 0;
      uint64_t node_id = 0;
      std::memcpy(&graph_id, bytes + offsetof(CUpti_ActivityMemset4, graphId), sizeof(graph_id));
      std::memcpy(&node_id, bytes + offsetof(CUpti_ActivityMemset4, graphNodeId), sizeof(node_id));
      Put<uint32_t>(bytes, kMemset5SourceGraphId, graph_id);
      Put<uint64_t>(bytes, kMemset5SourceGraphNodeId, node_id);
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: Put<uint32_t>(bytes, kDevice6NumTpcs, kDeviceTpcs); break;
    default: break;
  }
  return grown;
}

}  // namespace gprof::cudasim
