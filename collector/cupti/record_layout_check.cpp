// Compile-time proof that the record fields the decoder reads sit where every supported CUPTI
// writes them. Compiled with the build's own CUPTI headers (into gprof_collector_cupti) and once
// more against each header set scripts/fetch-cupti-headers fetched (13.2 and 13.5 from PyPI's
// nvidia-cuda-cupti; CMake's cupti_layouts_* targets): in each, the newest struct of every kind
// (the one that library writes) must have each decoded field at its CUDA 13.0 offset. The offsets
// below were read off the 13.0 headers (CUPTI_API_VERSION 130001, 64-bit); a header set that
// moves one fails the build here instead of misreading records at run time.
// No code: static_asserts only.
#include <cstddef>

#include "collector/cupti/record_structs.h"

namespace gprof::collector::layout_check {

// The struct each CUPTI 13.x writes for a kind: the newest of its headers (cupti_activity.h).
#if CUPTI_API_VERSION >= 130500
using Kernel = CUpti_ActivityKernel13;     // 248 bytes
using Memcpy = CUpti_ActivityMemcpy7;      // 112
using Memset = CUpti_ActivityMemset5;      // 104
using Device = CUpti_ActivityDevice6;      // 192
#elif CUPTI_API_VERSION >= 130200
using Kernel = CUpti_ActivityKernel11;     // 224
using Memcpy = CUpti_ActivityMemcpy6;
using Memset = CUpti_ActivityMemset4;
using Device = CUpti_ActivityDevice6;
#elif CUPTI_API_VERSION >= 130100
using Kernel = CUpti_ActivityKernel11;
using Memcpy = CUpti_ActivityMemcpy6;
using Memset = CUpti_ActivityMemset4;
using Device = CUpti_ActivityDevice5;
#else
using Kernel = CUpti_ActivityKernel10;
using Memcpy = CUpti_ActivityMemcpy6;
using Memset = CUpti_ActivityMemset4;
using Device = CUpti_ActivityDevice5;
#endif
using PeerCopy = CUpti_ActivityMemcpyPtoP4;
using Memory = CUpti_ActivityMemory4;
using Sync = CUpti_ActivitySynchronization2;
using Overhead = CUpti_ActivityOverhead3;

// The decoder's aliases are the 13.0 structs; the newest ones may only be larger.
static_assert(sizeof(Kernel) >= sizeof(KernelActivity) && sizeof(Memcpy) >= sizeof(MemcpyActivity) &&
              sizeof(Memset) >= sizeof(MemsetActivity) && sizeof(Device) >= sizeof(DeviceActivity));

// (struct, field, offset in CUDA 13.0): every field activity_decoder.cpp reads.
#define GPROF_DECODED_FIELDS(X) \
  X(Kernel, kind, 0) \
  X(Kernel, start, 16) \
  X(Kernel, end, 24) \
  X(Kernel, deviceId, 40) \
  X(Kernel, contextId, 44) \
  X(Kernel, streamId, 48) \
  X(Kernel, gridX, 52) \
  X(Kernel, gridY, 56) \
  X(Kernel, gridZ, 60) \
  X(Kernel, blockX, 64) \
  X(Kernel, blockY, 68) \
  X(Kernel, blockZ, 72) \
  X(Kernel, staticSharedMemory, 76) \
  X(Kernel, dynamicSharedMemory, 80) \
  X(Kernel, registersPerThread, 6) \
  X(Kernel, correlationId, 92) \
  X(Kernel, name, 104) \
  X(Kernel, graphNodeId, 144) \
  X(Kernel, graphId, 156) \
  X(Memcpy, kind, 0) \
  X(Memcpy, copyKind, 4) \
  X(Memcpy, srcKind, 5) \
  X(Memcpy, dstKind, 6) \
  X(Memcpy, flags, 7) \
  X(Memcpy, bytes, 8) \
  X(Memcpy, start, 16) \
  X(Memcpy, end, 24) \
  X(Memcpy, deviceId, 32) \
  X(Memcpy, contextId, 36) \
  X(Memcpy, streamId, 40) \
  X(Memcpy, correlationId, 44) \
  X(Memcpy, runtimeCorrelationId, 48) \
  X(PeerCopy, kind, 0) \
  X(PeerCopy, copyKind, 4) \
  X(PeerCopy, srcKind, 5) \
  X(PeerCopy, dstKind, 6) \
  X(PeerCopy, flags, 7) \
  X(PeerCopy, bytes, 8) \
  X(PeerCopy, start, 16) \
  X(PeerCopy, end, 24) \
  X(PeerCopy, deviceId, 32) \
  X(PeerCopy, contextId, 36) \
  X(PeerCopy, streamId, 40) \
  X(PeerCopy, srcDeviceId, 44) \
  X(PeerCopy, dstDeviceId, 52) \
  X(PeerCopy, correlationId, 60) \
  X(Memset, kind, 0) \
  X(Memset, value, 4) \
  X(Memset, bytes, 8) \
  X(Memset, start, 16) \
  X(Memset, end, 24) \
  X(Memset, deviceId, 32) \
  X(Memset, streamId, 40) \
  X(Memset, correlationId, 44) \
  X(Memset, flags, 48) \
  X(Memset, memoryKind, 50) \
  X(Memory, kind, 0) \
  X(Memory, memoryOperationType, 4) \
  X(Memory, memoryKind, 8) \
  X(Memory, correlationId, 12) \
  X(Memory, address, 16) \
  X(Memory, bytes, 24) \
  X(Memory, timestamp, 32) \
  X(Memory, deviceId, 52) \
  X(Memory, streamId, 60) \
  X(Memory, isAsync, 72) \
  X(Sync, kind, 0) \
  X(Sync, type, 4) \
  X(Sync, start, 8) \
  X(Sync, end, 16) \
  X(Sync, correlationId, 24) \
  X(Sync, contextId, 28) \
  X(Sync, streamId, 32) \
  X(Overhead, kind, 0) \
  X(Overhead, overheadKind, 4) \
  X(Overhead, objectKind, 8) \
  X(Overhead, objectId, 12) \
  X(Overhead, start, 24) \
  X(Overhead, end, 32) \
  X(Device, kind, 0) \
  X(Device, globalMemorySize, 16) \
  X(Device, id, 112) \
  X(Device, maxThreadsPerBlock, 76) \
  X(Device, maxRegistersPerBlock, 68) \
  X(Device, maxSharedMemoryPerBlock, 72) \
  X(Device, maxWarpsPerMultiprocessor, 52) \
  X(Device, maxRegistersPerMultiprocessor, 64) \
  X(Device, maxSharedMemoryPerMultiprocessor, 60) \
  X(Device, numMultiprocessors, 44) \
  X(Device, numThreadsPerWarp, 32) \
  X(Device, computeCapabilityMajor, 104) \
  X(Device, computeCapabilityMinor, 108) \
  X(Device, name, 136) \

#define GPROF_CHECK_NEWEST(T, field, offset)                                     \
  static_assert(offsetof(T, field) == (offset), #T "::" #field " moved in these CUPTI headers");
#define GPROF_CHECK_ALIAS(T, field, offset) \
  static_assert(offsetof(T##Activity, field) == (offset), #T "Activity::" #field " moved");
using KernelActivity = collector::KernelActivity;
using MemcpyActivity = collector::MemcpyActivity;
using PeerCopyActivity = collector::PeerCopyActivity;
using MemsetActivity = collector::MemsetActivity;
using MemoryActivity = collector::MemoryActivity;
using SyncActivity = collector::SyncActivity;
using OverheadActivity = collector::OverheadActivity;
using DeviceActivity = collector::DeviceActivity;
GPROF_DECODED_FIELDS(GPROF_CHECK_NEWEST)
GPROF_DECODED_FIELDS(GPROF_CHECK_ALIAS)
#undef GPROF_CHECK_NEWEST
#undef GPROF_CHECK_ALIAS
#undef GPROF_DECODED_FIELDS

}  // namespace gprof::collector::layout_check
