// Decoding CUPTI activity records into model records (model/records.h): pure functions from the
// pinned CUPTI structs (record_structs.h) to our POD records, plus a GpuBatch that holds what one
// parse produced with its own interned names and launch configurations.
//
// Threads: called only on the collector's parser thread (and in tests). Allocation is fine here;
// never called from a CUPTI callback.
//
// Speed (bench figure 3): a kernel record costs a name lookup and a launch-config lookup. Both go
// through small caches first (NameCacheEntry, recent_configs) and only fall back to hashing on a
// miss. The caches are accelerators only: every hit is confirmed against the interned value, so a
// stale entry (a reused name pointer, a moved-from batch) costs a miss, never a wrong id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "collector/cupti/record_structs.h"
#include "model/gpu_records.h"
#include "model/records.h"
#include "model/string_table.h"

namespace gprof::collector {

// Launch configurations are keyed by their 56 bytes (no padding: see the static_assert in
// records.h), hashed a word at a time.
struct LaunchConfigHash {
  size_t operator()(const LaunchConfig& c) const noexcept;
};
struct LaunchConfigEqual {
  bool operator()(const LaunchConfig& a, const LaunchConfig& b) const noexcept {
    return std::memcmp(&a, &b, sizeof(LaunchConfig)) == 0;
  }
};

// One slot of the kernel-name cache: CUPTI hands out one name pointer per kernel, so the pointer
// finds the slot; the name is then confirmed against the interned string (a module unload can
// free a name and a later kernel can get the same address). `last_config` is the launch config
// this kernel had last time, the first one tried for its next launch.
struct NameCacheEntry {
  const char* pointer = nullptr;
  StringId id = 0;
  uint32_t last_config = UINT32_MAX;
};

// Everything decoded since the last drain. StringIds and launch-config indices refer to this
// batch's own tables; MergeGpuBatches (gpu_drain.h) re-interns them into a Profile.
struct GpuBatch : GpuRecords {
  StringTable strings;
  std::vector<LaunchConfig> launch_configs;
  std::unordered_map<LaunchConfig, uint32_t, LaunchConfigHash, LaunchConfigEqual>
      launch_config_index;  // config -> index into launch_configs
  std::vector<DeviceInfo> devices;
  uint64_t buffer_bytes = 0;           // valid bytes of the buffer this batch was decoded from
  uint64_t records_unknown_kind = 0;   // kinds we do not decode
  uint64_t records_uncorrelated = 0;   // GPU work records with correlation id 0
  uint64_t graph_traces = 0;           // GRAPH_TRACE records (graph-level; kernels carry graph ids)
  // Records dropped because CUPTI delivered them broken: a broken time span (start 0, end before
  // start, or a time past kMaxProfileTimeNs; a memory record with timestamp 0 or past it), or a
  // copy, set or memory record sized at or past kMaxRecordBytes (256 TiB). One such record would
  // move the trace's base time to the epoch, or make the dump reader reject the whole profile
  // (model/profile.h CheckProfile). A record CUPTI delivered broken is a
  // CUPTI-side error: the drain adds this to Counters::cupti_errors.
  uint64_t records_broken = 0;
  // Records CUPTI handed back unfinished: an end timestamp of 0 (a forced flush returns buffers
  // holding work still running, cupti_activity.h on cuptiActivityFlushAll; kernels also carry 0
  // timestamps "for lack of device memory"), or CUPTI_ERROR_INVALID_KIND from
  // cuptiActivityGetNextRecord ("activity record is either incomplete or invalid"), which ends
  // the walk of that buffer. Dropped; Counters::gpu_records_incomplete.
  uint64_t records_incomplete = 0;

  // Caches in front of `strings` and `launch_config_index` (see the file comment).
  static constexpr size_t kNameCacheSlots = 64;  // power of two
  static constexpr size_t kRecentConfigs = 4;
  NameCacheEntry name_cache[kNameCacheSlots];
  uint32_t recent_configs[kRecentConfigs] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
  uint32_t recent_next = 0;  // slot of recent_configs to overwrite next

  // Returns the index of `config` in launch_configs, adding it when new. `hint` (an index, or
  // UINT32_MAX) is compared first.
  uint32_t InternLaunchConfig(const LaunchConfig& config, uint32_t hint = UINT32_MAX);
  // Returns the id of the NUL-terminated kernel name `name` (nullptr: "<unnamed>") and, in
  // *entry, its cache slot (for last_config).
  StringId InternKernelName(const char* name, NameCacheEntry** entry);
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
// counted (records_unknown_kind), never misread; records with broken timestamps or sizes are
// counted (records_broken) and dropped.
void DecodeRecord(const CUpti_Activity* record, GpuBatch* batch);

// Walks one completed CUPTI buffer with `next_record` (cuptiActivityGetNextRecord, or a stand-in in
// tests) and decodes every record. Returns the number of records decoded; counts a CUPTI error
// (anything but CUPTI_ERROR_MAX_LIMIT_REACHED at the end) in *errors.
using NextRecordFn = CUptiResult (*)(uint8_t* buffer, size_t valid_size, CUpti_Activity** record);
uint64_t DecodeBuffer(uint8_t* buffer, size_t valid_size, NextRecordFn next_record, GpuBatch* batch,
                      uint64_t* errors);

// The memory a decoded batch's records hold (vector capacities; strings and launch configurations
// excluded: they are few). What the pending-record accounting counts.
uint64_t DecodedBytes(const GpuBatch& batch);

}  // namespace gprof::collector
