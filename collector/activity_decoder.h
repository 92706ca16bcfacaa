// Decoding CUPTI activity records into model records (model/records.h): pure functions from the
// pinned CUPTI structs (cupti_structs.h) to our POD records, plus a GpuBatch that holds what one
// parse produced with its own interned names and launch configurations.
//
// Threads: called only on the collector's parser thread (and in tests). Allocation is fine here;
// never called from a CUPTI callback.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/cupti_structs.h"
#include "model/records.h"
#include "model/string_table.h"

namespace gprof::collector {

// Everything decoded since the last drain. StringIds and launch-config indices refer to this
// batch's own tables; MergeBatchInto (cupti_session) re-interns them into a Profile.
struct GpuBatch {
  StringTable strings;
  std::vector<LaunchConfig> launch_configs;
  std::unordered_map<std::string, uint32_t> launch_config_index;  // raw bytes -> index
  std::vector<Kernel> kernels;
  std::vector<Memcpy> memcpys;
  std::vector<Memset> memsets;
  std::vector<Sync> syncs;
  std::vector<MemoryOp> memory_ops;
  std::vector<Overhead> overheads;
  std::vector<DeviceInfo> devices;
  uint64_t records_unknown_kind = 0;   // kinds we do not decode
  uint64_t records_uncorrelated = 0;   // GPU work records with correlation id 0
  uint64_t graph_traces = 0;           // GRAPH_TRACE records (graph-level; kernels carry graph ids)

  uint32_t InternLaunchConfig(const LaunchConfig& config);
  void Clear();
};

Kernel DecodeKernel(const KernelActivity& a, GpuBatch* batch);
Memcpy DecodeMemcpy(const MemcpyActivity& a);
Memcpy DecodePeerCopy(const PeerCopyActivity& a);
Memset DecodeMemset(const MemsetActivity& a);
MemoryOp DecodeMemory(const MemoryActivity& a);
Sync DecodeSync(const SyncActivity& a);
Overhead DecodeOverhead(const OverheadActivity& a);
DeviceInfo DecodeDevice(const DeviceActivity& a, GpuBatch* batch);
OverheadKind MapOverheadKind(CUpti_ActivityOverheadKind kind);

// Dispatches on record->kind and appends to the matching vector of `batch`. Unknown kinds are
// counted (records_unknown_kind), never misread.
void DecodeRecord(const CUpti_Activity* record, GpuBatch* batch);

// Walks one completed CUPTI buffer with `next_record` (cuptiActivityGetNextRecord, or a stand-in in
// tests) and decodes every record. Returns the number of records decoded; counts a CUPTI error
// (anything but CUPTI_ERROR_MAX_LIMIT_REACHED at the end) in *errors.
using NextRecordFn = CUptiResult (*)(uint8_t* buffer, size_t valid_size, CUpti_Activity** record);
uint64_t DecodeBuffer(uint8_t* buffer, size_t valid_size, NextRecordFn next_record, GpuBatch* batch,
                      uint64_t* errors);

}  // namespace gprof::collector
