// CUPTI record layouts this build decodes, pinned in one place. CUPTI renames its structs when a
// layout changes between CUDA minors (13.2 has Kernel11), so every decoder reads the aliases below
// and the static_asserts stop a silent misread if the headers ever change under us. At run time,
// StartGpuCollection refuses a libcupti outside this build's family (CuptiVersionSupported).
//
// Header only; included by collector/ files alone (the only module that sees CUPTI).
#pragma once

#include <cupti.h>

#include <cstdint>

namespace gprof::collector {

// The CUPTI API version these layouts belong to (cupti_version.h of the toolkit we built with).
inline constexpr uint32_t kBuiltCuptiApiVersion = CUPTI_API_VERSION;

// cupti_version.h (CUDA 13.0): "CUPTI_API_VERSION ... xxyyzz: xx major version of the CUDA
// Toolkit, yy minor version, zz CUPTI-specific update or patch version (does NOT necessarily match
// the CUDA Toolkit update version)"; v130000 is 13.0, v130001 13.0 Update 1. Record layouts change
// only between minors (13.2 renames the kernel record to Kernel11), so a libcupti is decodable when
// its major.minor equals the build's: torch's wheel (13.0.x) and the toolkit's (13.0 Update 1)
// differ only in zz.
inline constexpr uint32_t CuptiVersionFamily(uint32_t version) { return version / 100; }
inline constexpr bool CuptiVersionSupported(uint32_t version) {
  return CuptiVersionFamily(version) == CuptiVersionFamily(kBuiltCuptiApiVersion);
}
// These layouts are CUDA 13.0's: building against other headers needs the aliases above checked
// and the family constant revisited, not a silent rebuild.
static_assert(CuptiVersionFamily(kBuiltCuptiApiVersion) == 1300,
              "record_structs.h pins CUDA 13.0's CUPTI record layouts; review it for these headers");

using KernelActivity = CUpti_ActivityKernel10;          // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
using MemcpyActivity = CUpti_ActivityMemcpy6;           // CUPTI_ACTIVITY_KIND_MEMCPY
using PeerCopyActivity = CUpti_ActivityMemcpyPtoP4;     // CUPTI_ACTIVITY_KIND_MEMCPY2
using MemsetActivity = CUpti_ActivityMemset4;           // CUPTI_ACTIVITY_KIND_MEMSET
using MemoryActivity = CUpti_ActivityMemory4;           // CUPTI_ACTIVITY_KIND_MEMORY2
using ApiActivity = CUpti_ActivityAPI;                  // CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER
using SyncActivity = CUpti_ActivitySynchronization2;    // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
using OverheadActivity = CUpti_ActivityOverhead3;       // CUPTI_ACTIVITY_KIND_OVERHEAD
using DeviceActivity = CUpti_ActivityDevice5;           // CUPTI_ACTIVITY_KIND_DEVICE
using GraphTraceActivity = CUpti_ActivityGraphTrace2;   // CUPTI_ACTIVITY_KIND_GRAPH_TRACE

// Sizes from REFERENCE.md §1 (CUDA 13.0, CUPTI_API_VERSION 130001) and, for the structs it does not
// list, from the 13.0 headers on a 64-bit build.
static_assert(sizeof(KernelActivity) == 216);
static_assert(sizeof(MemcpyActivity) == 96);
static_assert(sizeof(PeerCopyActivity) == 96);
static_assert(sizeof(MemsetActivity) == 88);
static_assert(sizeof(MemoryActivity) == 128);
static_assert(sizeof(ApiActivity) == 40);
static_assert(sizeof(SyncActivity) == 56);
static_assert(sizeof(OverheadActivity) == 56);
static_assert(sizeof(DeviceActivity) == 184);
static_assert(sizeof(GraphTraceActivity) == 56);

}  // namespace gprof::collector
