// CUPTI record layouts this build decodes, pinned in one place. CUPTI renames a struct when it
// grows between CUDA minors (13.1 and 13.2 write Kernel11, 13.5 Kernel13), so every decoder reads
// the aliases below: CUDA 13.0's structs, the prefix every 13.x record starts with. At run time,
// StartGpuCollection refuses a libcupti outside config/cupti_support.h (CuptiVersionSupported).
//
// Header only; included by collector/ files alone (the only module that sees CUPTI).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>

#include "config/cupti_support.h"

namespace gprof::collector {

// The CUPTI API version of the headers this build was compiled against.
inline constexpr uint32_t kBuiltCuptiApiVersion = CUPTI_API_VERSION;

// Whether a libcupti reporting `version` (cuptiGetVersion) is decoded by this build: its CUDA
// major is in config/cupti_support.h's table and it is at or above that major's oldest decoded
// version. Any 13.x from 13.0 on is: the structs below are 13.0's, and every later 13.x record
// starts with them (the offsets are checked against the 13.0, 13.2 and 13.5 headers by
// record_layout_check.cpp). A newer field is never read: none of them is decoded today, and one
// that is must be read only when the library's version says the record has it.
inline constexpr bool CuptiVersionSupported(uint32_t version) {
  return FindCuptiSupport(version) != nullptr;
}
// Supported, but newer than any header set the layout checks ran against.
inline constexpr bool CuptiVersionUntested(uint32_t version) {
  const CuptiSupport* s = FindCuptiSupport(version);
  return s != nullptr && version > static_cast<uint32_t>(s->max_tested_api_version);
}
// "13.2.2 (API version 130202)"; CUDA 12's small numbers as "API version 26".
inline std::string CuptiVersionText(uint32_t version) {
  const std::string api = "API version " + std::to_string(version);
  if (version < 10000) return api;
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100) + " (" + api + ")";
}
// Built with CUDA 13 headers only. CUDA 12's records are read with the same structs: each struct a
// CUDA 12.4-12.9 CUPTI writes is its 13.0 successor cut short (Kernel9 208 bytes against
// Kernel10's 216; before 12.8 also Memcpy5 88 against Memcpy6's 96, Synchronization 40 against 56,
// and in 12.4/12.5 Memory3 120 against Memory4's 128), and every field read lies inside the
// shorter record at the same offset (record_layout_check.cpp, compiled against the 12.4, 12.6, 12.8
// and 12.9 headers), so a shorter record is never read past its end.
static_assert(CuptiMajorOf(kBuiltCuptiApiVersion) == 13,
              "record_structs.h pins CUDA 13.0's structs: build gprof-run with CUDA 13 headers");

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
// list, from the 13.0 headers on a 64-bit build. These are the prefixes read; a record of a newer
// 13.x is larger, and the walk steps by the library's own size (cuptiActivityGetNextRecord), never
// by these.
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
