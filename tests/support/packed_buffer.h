// Test and benchmark support (never linked into the product): a stand-in for
// cuptiActivityGetNextRecord that walks a buffer of CUDA 13 activity records packed back to back,
// for driving DecodeBuffer with buffers built in memory.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "collector/cupti/record_structs.h"

namespace gprof::collector::test_support {

// Size of a packed record of the kinds the tests and benchmarks build; 0 for any other kind.
inline size_t PackedRecordSize(const CUpti_Activity* r) {
  switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(KernelActivity);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(MemcpyActivity);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(MemsetActivity);
    default: return 0;
  }
}

// Same contract as cuptiActivityGetNextRecord: *record == nullptr starts at the beginning.
inline CUptiResult WalkPackedRecords(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t offset = 0;
  if (*record != nullptr) {
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) +
             PackedRecordSize(*record);
  }
  if (offset >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  if (PackedRecordSize(next) == 0) return CUPTI_ERROR_INVALID_KIND;
  *record = next;
  return CUPTI_SUCCESS;
}

}  // namespace gprof::collector::test_support
