// Compile-time proof that the record fields the decoder reads sit where every supported CUPTI
// writes them. Compiled with the build's own CUPTI headers (into gprof_collector_cupti) and once
// more against each header set scripts/fetch-cupti-headers fetched (13.2 and 13.5 from PyPI's
// nvidia-cuda-cupti, 12.4, 12.6, 12.8 and 12.9 from nvidia-cuda-cupti-cu12; CMake's cupti_headers_* and
// cupti_layouts_* targets): in each, the struct that CUPTI writes for a kind (the newest of its
// headers) must have each decoded field at its CUDA 13.0 offset and size. The numbers below were
// read off the 13.0 headers (CUPTI_API_VERSION 130001, 64-bit); a header set that moves one fails
// the build here instead of misreading records at run time. The activity kinds and attributes the
// collector uses are checked to keep their 13.0 values too.
// No code: static_asserts only.
#include <cupti_activity.h>
#include <cupti_version.h>

#include <cstddef>

#if CUPTI_API_VERSION >= 130000
#include "collector/cupti/record_structs.h"
#endif

namespace gprof::collector::layout_check {

// The struct each CUPTI writes for a kind: the newest of its headers (cupti_activity.h).
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
#elif CUPTI_API_VERSION >= 130000
using Kernel = CUpti_ActivityKernel10;     // 216
using Memcpy = CUpti_ActivityMemcpy6;
using Memset = CUpti_ActivityMemset4;
using Device = CUpti_ActivityDevice5;
#elif CUPTI_API_VERSION >= 26               // CUDA 12.8 and 12.9 (v26, v28)
using Kernel = CUpti_ActivityKernel9;      // 208: 13.0's Kernel10 less its last 8 bytes
using Memcpy = CUpti_ActivityMemcpy6;
using Memset = CUpti_ActivityMemset4;
using Device = CUpti_ActivityDevice5;
#elif CUPTI_API_VERSION >= 22               // CUDA 12.4 to 12.7 (v22 12.4, v23 12.5, v24 12.6)
using Kernel = CUpti_ActivityKernel9;
using Memcpy = CUpti_ActivityMemcpy5;      // 88: 13.0's Memcpy6 less its last 8 bytes
using Memset = CUpti_ActivityMemset4;
using Device = CUpti_ActivityDevice5;
#else
#error "these CUPTI headers are older than any this build decodes (config/cupti_support.h)"
#endif
#if CUPTI_API_VERSION >= 26 || CUPTI_API_VERSION >= 130000
using Sync = CUpti_ActivitySynchronization2;
#else
using Sync = CUpti_ActivitySynchronization;  // 40: Synchronization2 (56) less its last 16 bytes
#endif
#if CUPTI_API_VERSION >= 24 || CUPTI_API_VERSION >= 130000
using Memory = CUpti_ActivityMemory4;
#else
using Memory = CUpti_ActivityMemory3;      // 120: Memory4 (128) less its last 8 bytes (12.4, 12.5)
#endif
using PeerCopy = CUpti_ActivityMemcpyPtoP4;
using Overhead = CUpti_ActivityOverhead3;

// (struct, field, offset and size in CUDA 13.0): every field activity_decoder.cpp reads. A record
// smaller than the decoder's 13.0 struct (CUDA 12's Kernel9, 12.4-12.7's Memcpy5, Memory3 and
// Synchronization) is safe exactly because each of these lies inside it (the second assert).
#define GPROF_DECODED_FIELDS(X) \
  X(Kernel, kind, 0, 4) \
  X(Kernel, start, 16, 8) \
  X(Kernel, end, 24, 8) \
  X(Kernel, deviceId, 40, 4) \
  X(Kernel, contextId, 44, 4) \
  X(Kernel, streamId, 48, 4) \
  X(Kernel, gridX, 52, 4) \
  X(Kernel, gridY, 56, 4) \
  X(Kernel, gridZ, 60, 4) \
  X(Kernel, blockX, 64, 4) \
  X(Kernel, blockY, 68, 4) \
  X(Kernel, blockZ, 72, 4) \
  X(Kernel, staticSharedMemory, 76, 4) \
  X(Kernel, dynamicSharedMemory, 80, 4) \
  X(Kernel, registersPerThread, 6, 2) \
  X(Kernel, correlationId, 92, 4) \
  X(Kernel, name, 104, 8) \
  X(Kernel, graphNodeId, 144, 8) \
  X(Kernel, graphId, 156, 4) \
  X(Memcpy, kind, 0, 4) \
  X(Memcpy, copyKind, 4, 1) \
  X(Memcpy, srcKind, 5, 1) \
  X(Memcpy, dstKind, 6, 1) \
  X(Memcpy, flags, 7, 1) \
  X(Memcpy, bytes, 8, 8) \
  X(Memcpy, start, 16, 8) \
  X(Memcpy, end, 24, 8) \
  X(Memcpy, deviceId, 32, 4) \
  X(Memcpy, contextId, 36, 4) \
  X(Memcpy, streamId, 40, 4) \
  X(Memcpy, correlationId, 44, 4) \
  X(Memcpy, runtimeCorrelationId, 48, 4) \
  X(PeerCopy, kind, 0, 4) \
  X(PeerCopy, copyKind, 4, 1) \
  X(PeerCopy, srcKind, 5, 1) \
  X(PeerCopy, dstKind, 6, 1) \
  X(PeerCopy, flags, 7, 1) \
  X(PeerCopy, bytes, 8, 8) \
  X(PeerCopy, start, 16, 8) \
  X(PeerCopy, end, 24, 8) \
  X(PeerCopy, deviceId, 32, 4) \
  X(PeerCopy, contextId, 36, 4) \
  X(PeerCopy, streamId, 40, 4) \
  X(PeerCopy, srcDeviceId, 44, 4) \
  X(PeerCopy, dstDeviceId, 52, 4) \
  X(PeerCopy, correlationId, 60, 4) \
  X(Memset, kind, 0, 4) \
  X(Memset, value, 4, 4) \
  X(Memset, bytes, 8, 8) \
  X(Memset, start, 16, 8) \
  X(Memset, end, 24, 8) \
  X(Memset, deviceId, 32, 4) \
  X(Memset, streamId, 40, 4) \
  X(Memset, correlationId, 44, 4) \
  X(Memset, flags, 48, 2) \
  X(Memset, memoryKind, 50, 2) \
  X(Memory, kind, 0, 4) \
  X(Memory, memoryOperationType, 4, 4) \
  X(Memory, memoryKind, 8, 4) \
  X(Memory, correlationId, 12, 4) \
  X(Memory, address, 16, 8) \
  X(Memory, bytes, 24, 8) \
  X(Memory, timestamp, 32, 8) \
  X(Memory, deviceId, 52, 4) \
  X(Memory, streamId, 60, 4) \
  X(Memory, isAsync, 72, 4) \
  X(Sync, kind, 0, 4) \
  X(Sync, type, 4, 4) \
  X(Sync, start, 8, 8) \
  X(Sync, end, 16, 8) \
  X(Sync, correlationId, 24, 4) \
  X(Sync, contextId, 28, 4) \
  X(Sync, streamId, 32, 4) \
  X(Overhead, kind, 0, 4) \
  X(Overhead, overheadKind, 4, 4) \
  X(Overhead, objectKind, 8, 4) \
  X(Overhead, objectId, 12, 12) \
  X(Overhead, start, 24, 8) \
  X(Overhead, end, 32, 8) \
  X(Device, kind, 0, 4) \
  X(Device, globalMemorySize, 16, 8) \
  X(Device, id, 112, 4) \
  X(Device, maxThreadsPerBlock, 76, 4) \
  X(Device, maxRegistersPerBlock, 68, 4) \
  X(Device, maxSharedMemoryPerBlock, 72, 4) \
  X(Device, maxWarpsPerMultiprocessor, 52, 4) \
  X(Device, maxRegistersPerMultiprocessor, 64, 4) \
  X(Device, maxSharedMemoryPerMultiprocessor, 60, 4) \
  X(Device, numMultiprocessors, 44, 4) \
  X(Device, numThreadsPerWarp, 32, 4) \
  X(Device, computeCapabilityMajor, 104, 4) \
  X(Device, computeCapabilityMinor, 108, 4) \
  X(Device, name, 136, 8)

#define GPROF_CHECK_NEWEST(T, field, offset, size)                                         \
  static_assert(offsetof(T, field) == (offset) && sizeof(T::field) == (size),              \
                #T "::" #field " moved in these CUPTI headers");                           \
  static_assert(offsetof(T, field) + sizeof(T::field) <= sizeof(T));
GPROF_DECODED_FIELDS(GPROF_CHECK_NEWEST)
#undef GPROF_CHECK_NEWEST

#if CUPTI_API_VERSION >= 130000
// The decoder's aliases (record_structs.h) are the 13.0 structs.
#define GPROF_CHECK_ALIAS(T, field, offset, size)                                        \
  static_assert(offsetof(collector::T##Activity, field) == (offset), #T "Activity::" #field \
                " moved");
GPROF_DECODED_FIELDS(GPROF_CHECK_ALIAS)
#undef GPROF_CHECK_ALIAS
#endif
#undef GPROF_DECODED_FIELDS

// The kinds the session enables and the attributes it sets, at their 13.0 values.
static_assert(CUPTI_ACTIVITY_KIND_MEMCPY == 1 && CUPTI_ACTIVITY_KIND_MEMSET == 2 &&
              CUPTI_ACTIVITY_KIND_DEVICE == 8 && CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL == 10 &&
              CUPTI_ACTIVITY_KIND_OVERHEAD == 17 && CUPTI_ACTIVITY_KIND_MEMCPY2 == 22 &&
              CUPTI_ACTIVITY_KIND_SYNCHRONIZATION == 38 && CUPTI_ACTIVITY_KIND_MEMORY2 == 49);
static_assert(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER == 5 &&
              CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER == 9);

}  // namespace gprof::collector::layout_check
