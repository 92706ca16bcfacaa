// Checks record_layouts.h's hand-written sizes and offsets against the real CUPTI headers of each
// version they model. Compiled with the build's headers (13.0: the older structs' sizes) and once
// per header set scripts/fetch-cupti-headers fetched (12.4, 12.6, 12.8, 12.9, 13.2, 13.5; CMake's
// cudasim_layouts_* targets; libcupti.so.12 itself is built with 12.8's). static_asserts only.
// Test-only.
#include <cupti_activity.h>
#include <cupti_version.h>

#include <cstddef>

#include "tests/cudasim/cupti/record_layouts.h"

namespace gprof::cudasim::layout {

static_assert(sizeof(CUpti_ActivityMemset4) == 88 && sizeof(CUpti_ActivityDevice5) == 184);
// Every header set from 12.4 on keeps the 12.4-12.6 structs (cupti_activity_deprecated.h later).
static_assert(sizeof(CUpti_ActivityMemcpy5) == kMemcpy5Size);
static_assert(sizeof(CUpti_ActivitySynchronization) == kSync1Size);
static_assert(sizeof(CUpti_ActivityMemory3) == kMemory3Size);
// Each is its successor's prefix: the fields both have sit at the same offsets.
static_assert(offsetof(CUpti_ActivityMemcpy5, graphId) == 72 &&
              offsetof(CUpti_ActivityMemcpy5, channelType) == 80);
static_assert(offsetof(CUpti_ActivitySynchronization, cudaEventId) == 36);
static_assert(offsetof(CUpti_ActivityMemory3, memoryPoolConfig) == 80);
#if CUPTI_API_VERSION >= 24
static_assert(sizeof(CUpti_ActivityMemory4) == 128);
#endif
#if CUPTI_API_VERSION >= 26
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96 && offsetof(CUpti_ActivityMemcpy6, graphId) == 72 &&
              offsetof(CUpti_ActivityMemcpy6, channelType) == 80);
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56 &&
              offsetof(CUpti_ActivitySynchronization2, cudaEventId) == 36);
#endif
#if CUPTI_API_VERSION >= 130000
static_assert(sizeof(CUpti_ActivityKernel10) == kKernel10Size);
#else  // CUDA 12.4 to 12.9
static_assert(sizeof(CUpti_ActivityKernel9) == kKernel9Size);
#endif
// The handed kernel record's fields libcupti reads (activity.cpp, record_layouts.cpp) sit at
// Kernel10's offsets in whichever struct this build names it by.
static_assert(offsetof(HandedKernel, start) == 16 && offsetof(HandedKernel, end) == 24 &&
              offsetof(HandedKernel, completed) == 32 && offsetof(HandedKernel, graphNodeId) == 144 &&
              offsetof(HandedKernel, graphId) == 156);
#if CUPTI_API_VERSION >= 130100 && CUPTI_API_VERSION < 140000
static_assert(sizeof(CUpti_ActivityKernel11) == kKernel11Size);
static_assert(offsetof(CUpti_ActivityKernel11, priority) == kKernel11Priority);
#endif
#if CUPTI_API_VERSION >= 130200
static_assert(sizeof(CUpti_ActivityDevice6) == kDevice6Size);
static_assert(offsetof(CUpti_ActivityDevice6, numTpcs) == kDevice6NumTpcs);
#endif
#if CUPTI_API_VERSION >= 130500
static_assert(sizeof(CUpti_ActivityKernel13) == kKernel13Size);
static_assert(offsetof(CUpti_ActivityKernel13, executionModel) == kKernel13ExecutionModel);
static_assert(offsetof(CUpti_ActivityKernel13, sourceGraphId) == kKernel13SourceGraphId);
static_assert(offsetof(CUpti_ActivityKernel13, sourceGraphNodeId) == kKernel13SourceGraphNodeId);
static_assert(CUPTI_FUNC_EXECUTION_MODEL_SIMT == kExecutionModelSimt);
static_assert(sizeof(CUpti_ActivityMemcpy7) == kMemcpy7Size);
static_assert(offsetof(CUpti_ActivityMemcpy7, sourceGraphId) == kMemcpy7SourceGraphId);
static_assert(offsetof(CUpti_ActivityMemcpy7, sourceGraphNodeId) == kMemcpy7SourceGraphNodeId);
static_assert(sizeof(CUpti_ActivityMemset5) == kMemset5Size);
static_assert(offsetof(CUpti_ActivityMemset5, sourceGraphId) == kMemset5SourceGraphId);
static_assert(offsetof(CUpti_ActivityMemset5, sourceGraphNodeId) == kMemset5SourceGraphNodeId);
#endif

}  // namespace gprof::cudasim::layout
