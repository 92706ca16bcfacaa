// Benchmark support (not in-process code): model records turned back into the CUDA 13 CUPTI
// activity records that carry them (Kernel10, Memcpy6, Memset4), packed back to back into
// buffers the size of CUPTI's default activity buffers, so that benchmarks decode them with the
// parser's own DecodeBuffer (walked by tests/support/packed_buffer.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "collector/cupti/record_structs.h"
#include "model/records.h"

namespace gprof::bench {

// 8 MiB per CUPTI buffer: GPROF_ACTIVITY_BUFFER_KIB's default when figures 3 and 6 were first
// measured (the default is 256 KiB now; the decoder's cost per record does not depend on it).
inline constexpr size_t kActivityBufferBytes = 8u << 20;

// One activity buffer being filled, as CUPTI fills it.
struct PackedBuffer {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kActivityBufferBytes, 0);
  size_t used = 0;
  uint64_t records = 0;

  // Appends one record; false (nothing written) when it does not fit.
  template <typename Activity>
  bool Add(const Activity& a) {
    if (used + sizeof(Activity) > bytes.size()) return false;
    std::memcpy(bytes.data() + used, &a, sizeof(Activity));
    used += sizeof(Activity);
    ++records;
    return true;
  }
  void Clear() {
    used = 0;
    records = 0;
  }
};

// `name` must stay valid (NUL-terminated) while the buffer is decoded, as CUPTI's name pointers.
inline collector::KernelActivity ToKernelActivity(const Kernel& k, const LaunchConfig& c,
                                                  const char* name) {
  collector::KernelActivity a{};
  a.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  a.start = k.start_ns;
  a.end = k.end_ns;
  a.correlationId = k.correlation_id;
  a.name = name;
  a.gridX = static_cast<int32_t>(c.grid[0]);
  a.gridY = static_cast<int32_t>(c.grid[1]);
  a.gridZ = static_cast<int32_t>(c.grid[2]);
  a.blockX = static_cast<int32_t>(c.block[0]);
  a.blockY = static_cast<int32_t>(c.block[1]);
  a.blockZ = static_cast<int32_t>(c.block[2]);
  a.registersPerThread = static_cast<uint16_t>(c.registers_per_thread);
  a.staticSharedMemory = static_cast<int32_t>(c.static_shared_bytes);
  a.dynamicSharedMemory = static_cast<int32_t>(c.dynamic_shared_bytes);
  a.deviceId = c.device_id;
  a.contextId = c.context_id;
  a.graphId = c.graph_id;
  a.graphNodeId = c.graph_node_id;
  a.streamId = k.stream_id;
  return a;
}

// A runtime cudaMemcpyAsync: CUPTI puts the runtime call's id in runtimeCorrelationId and the
// nested driver call's in correlationId (the decoder links to the runtime one). Here both carry
// the runtime call's id: the driver call is not in the benchmark's host records.
inline collector::MemcpyActivity ToMemcpyActivity(const Memcpy& m) {
  collector::MemcpyActivity a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  a.copyKind = static_cast<uint8_t>(m.kind);
  a.srcKind = static_cast<uint8_t>(m.src_kind);
  a.dstKind = static_cast<uint8_t>(m.dst_kind);
  a.flags = m.is_async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  a.bytes = m.bytes;
  a.start = m.start_ns;
  a.end = m.end_ns;
  a.deviceId = m.device_id;
  a.contextId = m.context_id;
  a.streamId = m.stream_id;
  a.correlationId = m.correlation_id;
  a.runtimeCorrelationId = m.correlation_id;
  return a;
}

inline collector::MemsetActivity ToMemsetActivity(const Memset& m) {
  collector::MemsetActivity a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  a.value = m.value;
  a.bytes = m.bytes;
  a.start = m.start_ns;
  a.end = m.end_ns;
  a.deviceId = m.device_id;
  a.contextId = 1;
  a.streamId = m.stream_id;
  a.correlationId = m.correlation_id;
  a.flags = m.is_async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  a.memoryKind = static_cast<uint16_t>(m.mem_kind);
  return a;
}

}  // namespace gprof::bench
