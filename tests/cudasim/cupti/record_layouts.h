// The record layouts the stand-in libcupti writes, chosen by the version it plays
// (CUDASIM_CUPTI_VERSION). A real CUPTI writes the newest struct of its own headers; within CUDA 13
// each grows only at its end, so the stand-in writes the 13.0 record libcudart hands it and
// extends it to the version's size with the newer fields. The stand-in is compiled against the
// toolkit's 13.0 headers, which lack the newer structs: their sizes and field offsets are written
// out here, from the headers of PyPI's nvidia-cuda-cupti wheels (cupti_activity.h), and
// layout_check.cpp checks them against those headers (13.2, 13.5) when scripts/fetch-cupti-headers
// fetched them. Test-only.
//
//   version        kernel        memcpy        memset        device        memory        sync
//   13.0 (1300xx)  Kernel10 216  Memcpy6  96   Memset4  88   Device5 184   Memory4 128   Sync2 56
//   13.1 (1301xx)  Kernel11 224  Memcpy6  96   Memset4  88   Device5 184   Memory4 128   Sync2 56
//   13.2 (1302xx+) Kernel11 224  Memcpy6  96   Memset4  88   Device6 192   Memory4 128   Sync2 56
//   13.5 (1305xx+) Kernel13 248  Memcpy7 112   Memset5 104   Device6 192   Memory4 128   Sync2 56
//   12.8 (26, 28)  Kernel9  208  Memcpy6  96   Memset4  88   Device5 184   Memory4 128   Sync2 56
//   12.6 (24, 25)  Kernel9  208  Memcpy5  88   Memset4  88   Device5 184   Memory4 128   Sync  40
//   12.4 (22, 23)  Kernel9  208  Memcpy5  88   Memset4  88   Device5 184   Memory3 120   Sync  40
// (12.x: the libcupti.so.12 stand-in, built from the same sources against PyPI's 12.8 headers
// with CUDASIM_CUPTI_MAJOR=12. Each 12.x struct is its 13.0 successor less its last bytes, so the
// record is cut, not grown. 12.3 and older are played with 12.4's layouts, for their number only.)
// (13.3 and 13.4 are played with 13.2's layouts: their headers are not modelled.)
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

namespace gprof::cudasim {

namespace layout {
// The kernel record libcudart hands over is CUDA 13.0's Kernel10 (libcudart is built with the
// toolkit's 13.0 headers). libcupti.so.12 is built with 12.8's headers, which have no Kernel10:
// there it reads the record through Kernel9, whose fields sit at Kernel10's offsets within its
// first 208 bytes (layout_check.cpp).
#if CUPTI_API_VERSION >= 130000
using HandedKernel = CUpti_ActivityKernel10;
#else
using HandedKernel = CUpti_ActivityKernel9;
#endif
constexpr size_t kKernel10Size = 216;
// 12.4 to 12.9 cupti_activity.h, CUpti_ActivityKernel9.
constexpr size_t kKernel9Size = 208;
// 12.4 to 12.6 cupti_activity.h: CUpti_ActivityMemcpy5 (Memcpy6 less its last 8 bytes),
// CUpti_ActivitySynchronization (Synchronization2 less its last 16), and in 12.4/12.5
// CUpti_ActivityMemory3 (Memory4 less its last 8).
constexpr size_t kMemcpy5Size = 88;
constexpr size_t kSync1Size = 40;
constexpr size_t kMemory3Size = 120;
// 13.1 / 13.2 cupti_activity.h, CUpti_ActivityKernel11: Kernel10 + int32 priority + padding.
constexpr size_t kKernel11Size = 224;
constexpr size_t kKernel11Priority = 216;
// 13.5 cupti_activity.h, CUpti_ActivityKernel13: Kernel11 + executionModel, sourceGraphId,
// sourceGraphNodeId (each padded to 8 bytes).
constexpr size_t kKernel13Size = 248;
constexpr size_t kKernel13ExecutionModel = 224;
constexpr size_t kKernel13SourceGraphId = 232;
constexpr size_t kKernel13SourceGraphNodeId = 240;
// 13.5, CUpti_ActivityMemcpy7: Memcpy6 + sourceGraphId (padded) + sourceGraphNodeId.
constexpr size_t kMemcpy7Size = 112;
constexpr size_t kMemcpy7SourceGraphId = 96;
constexpr size_t kMemcpy7SourceGraphNodeId = 104;
// 13.5, CUpti_ActivityMemset5: Memset4 + sourceGraphId (padded) + sourceGraphNodeId.
constexpr size_t kMemset5Size = 104;
constexpr size_t kMemset5SourceGraphId = 88;
constexpr size_t kMemset5SourceGraphNodeId = 96;
// 13.2, CUpti_ActivityDevice6: Device5 + numTpcs + reserved0.
constexpr size_t kDevice6Size = 192;
constexpr size_t kDevice6NumTpcs = 184;
// CUPTI_FUNC_EXECUTION_MODEL_SIMT (13.5 cupti_activity.h): what a CUDA C++ kernel reports.
constexpr uint32_t kExecutionModelSimt = 1;
// TPCs of the stand-in's device (Device6::numTpcs): two SMs per TPC.
constexpr uint32_t kDeviceTpcs = 66;
}  // namespace layout

// Record sizes of the version played. Immutable once the knobs are read.
struct RecordLayouts {
  const char* name;  // "12.4", "12.6", "12.8", "13.0", "13.1", "13.2", "13.5"
  size_t kernel, memcpy, memset, device, memory, sync;
};
const RecordLayouts& LayoutsFor(uint32_t cupti_version);
// The version played: CUDASIM_CUPTI_VERSION (cudasim_knobs()->cupti_version); unset, the
// libcupti.so.12 stand-in plays CUDA 12.8 (its cupti_version.h: CUPTI_API_VERSION 26).
uint32_t PlayedCuptiVersion();
const RecordLayouts& PlayedLayouts();  // of PlayedCuptiVersion()

// The size a record of `kind` has in the version played; `base` (the 13.0 size) for kinds whose
// record did not grow.
size_t PlayedRecordSize(CUpti_ActivityKind kind, size_t base);
// Grows the 13.0 record in `bytes` (room for `capacity` bytes) to the version played: zeroes the
// new bytes and fills the new fields; or, for a smaller 12.x struct, cuts it. Returns the record's
// new size (0 if it would not fit).
size_t WidenToPlayedLayout(uint8_t* bytes, size_t size, size_t capacity);

}  // namespace gprof::cudasim
