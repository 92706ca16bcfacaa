// libFuzzer target: the CUPTI activity record decoder (collector/cupti/activity_decoder.h) and
// the drain's merge of decoded batches into a profile (gpu_drain.h, CheckGpuAgainstCalls). CUPTI
// hands back buffers whose records may be unfinished (a forced flush), of kinds we do not decode,
// zeroed or nonsense: the decoder must count and drop what it cannot use and never misread the
// rest.
//
// Input: operations, each one byte and its arguments (bytes past the end read as 0):
//   op % 16 == 0   name slot: [slot][len][len bytes] become the NUL-terminated text of slot % 8
//                  (an embedded NUL ends the C string early)
//   op % 16 == 1   end of buffer: [mode]: the records so far go to the decoder as one buffer with
//                  its last mode % 64 bytes cut off (a record cut short); mode & 64: the walk ends
//                  in a CUPTI error instead of at the end of the buffer
//   op % 16 == 2   API call: [u32 correlation id][u64 start][u16 cbid][domain][return code]
//   op % 16 == 3   record of any kind: [u32 kind][name][body]
//   op % 16 >= 4   record of kind kKinds[op % 16 - 4]: [name][body]
// A body is the record after its kind field, as long as CUPTI's struct (zeros past the end of the
// input). Pointers cannot be fuzzed: the name pointers the decoder reads (kernel and device
// names; memory records' name and source) point into the harness's name slots, chosen by the
// [name] byte (0: nullptr, else slot (b - 1) % 8 at offset (b - 1) / 8, so names share tails and
// addresses), and the other pointers of those records are nullptr. Enum fields keep values
// CUPTI's enums can hold (every one ends in FORCE_INT = 0x7fffffff: bit 31 clear); kinds the
// decoder does not decode keep their bytes (only their kind is read).
//
// Buffers are laid out as CUPTI lays them out, records back to back, and walked by a stand-in for
// cuptiActivityGetNextRecord written like tests/cudasim/cupti's (sizes by kind, INVALID_KIND for
// a kind without one, MAX_LIMIT_REACHED at the end). One batch takes every buffer of the input,
// and a name slot may be rewritten between buffers at the same address (a module unload, then a
// new kernel name in the same memory).
//
// Checks, each a promise of activity_decoder.h, gpu_drain.h, gpu_collector.h or profile.h:
//  - DecodeBuffer decodes exactly the records the walk hands out, counts an INVALID_KIND end as
//    one incomplete record and any other error as a CUPTI error, and builds the same batch as
//    DecodeRecord on each record in turn;
//  - each record has exactly one effect: appended to its vector, or counted (unfinished, broken
//    timestamps, unknown kind, graph trace); a device once per id;
//  - an accepted record has start != 0, end >= start, no time past kMaxProfileTimeNs, and
//    carries its fields; a kernel's name is the text at its name pointer when it was decoded (the
//    name cache never hands out a stale name), its launch config the one it ran with; enums land
//    inside the model's ranges;
//  - MergeGpuBatches keeps every record with the same names and configs, names each device once
//    and adds up the counters (twice: a second drain into the same profile); the counts of
//    CheckGpuAgainstCalls agree with a plain recount; the merged profile passes CheckProfile,
//    the dump reader's check (what the collector writes, `gprof-run report` must accept).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "collector/cupti/activity_decoder.h"
#include "collector/cupti/gpu_collector.h"
#include "collector/cupti/gpu_drain.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "model/gpu_checks.h"
#include "model/profile.h"

namespace gprof::collector {
namespace {

using Reader = fuzz::FuzzReader;

// The kinds a record op names directly; any other comes through op 3.
constexpr CUpti_ActivityKind kKinds[12] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,            CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_OVERHEAD,
    CUPTI_ACTIVITY_KIND_DEVICE,            CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_MARKER,
};

// Record sizes the walk knows (tests/cudasim/cupti/activity.cpp RecordSize, plus GRAPH_TRACE,
// which the collector enables); 0: CUPTI_ERROR_INVALID_KIND.
size_t RecordSize(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(KernelActivity);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(MemcpyActivity);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(PeerCopyActivity);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(MemsetActivity);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(MemoryActivity);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return sizeof(ApiActivity);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(SyncActivity);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(OverheadActivity);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(DeviceActivity);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(GraphTraceActivity);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    default: return 0;
  }
}
// Records follow each other 8-byte aligned, as in CUPTI's buffers (its structs hold uint64s).
static_assert(sizeof(KernelActivity) % 8 == 0 && sizeof(MemcpyActivity) % 8 == 0 &&
              sizeof(PeerCopyActivity) % 8 == 0 && sizeof(MemsetActivity) % 8 == 0 &&
              sizeof(MemoryActivity) % 8 == 0 && sizeof(ApiActivity) % 8 == 0 &&
              sizeof(SyncActivity) % 8 == 0 && sizeof(OverheadActivity) % 8 == 0 &&
              sizeof(DeviceActivity) % 8 == 0 && sizeof(GraphTraceActivity) % 8 == 0 &&
              sizeof(CUpti_ActivityExternalCorrelation) % 8 == 0 &&
              sizeof(CUpti_ActivityMarker2) % 8 == 0 &&
              sizeof(CUpti_ActivityMarkerData2) % 8 == 0 &&
              sizeof(CUpti_ActivityContext3) % 8 == 0 && sizeof(CUpti_ActivityName) % 8 == 0);
constexpr size_t kMaxRecord = 256;
static_assert(sizeof(KernelActivity) <= kMaxRecord && sizeof(MemoryActivity) <= kMaxRecord &&
              sizeof(DeviceActivity) <= kMaxRecord);

// Name slots: the memory name pointers point into. Cleared for every input.
constexpr size_t kSlots = 8;
constexpr size_t kSlotBytes = 320;  // 31 (largest offset) + 255 + NUL, zeros after
char g_slots[kSlots][kSlotBytes];

const char* NamePointer(uint8_t b) {
  if (b == 0) return nullptr;
  return &g_slots[(b - 1) % kSlots][(b - 1) / kSlots];
}

void ClearBit31(unsigned char* record, size_t offset) {
  uint32_t v;
  std::memcpy(&v, record + offset, 4);
  v &= 0x7fffffffu;
  std::memcpy(record + offset, &v, 4);
}
void SetPointer(unsigned char* record, size_t offset, const void* p) {
  std::memcpy(record + offset, &p, sizeof p);
}

// Pointers and enum fields of the records the decoder reads (see the file comment).
void Sanitize(uint32_t kind, unsigned char* r, uint8_t name) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      ClearBit31(r, offsetof(KernelActivity, partitionedGlobalCacheRequested));
      ClearBit31(r, offsetof(KernelActivity, partitionedGlobalCacheExecuted));
      ClearBit31(r, offsetof(KernelActivity, shmemLimitConfig));
      ClearBit31(r, offsetof(KernelActivity, channelType));
      SetPointer(r, offsetof(KernelActivity, name), NamePointer(name));
      SetPointer(r, offsetof(KernelActivity, reserved0), nullptr);
      SetPointer(r, offsetof(KernelActivity, pAccessPolicyWindow), nullptr);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      ClearBit31(r, offsetof(MemcpyActivity, channelType));
      SetPointer(r, offsetof(MemcpyActivity, reserved0), nullptr);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      ClearBit31(r, offsetof(PeerCopyActivity, channelType));
      SetPointer(r, offsetof(PeerCopyActivity, reserved0), nullptr);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      ClearBit31(r, offsetof(MemsetActivity, channelType));
      SetPointer(r, offsetof(MemsetActivity, reserved0), nullptr);
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      ClearBit31(r, offsetof(MemoryActivity, memoryOperationType));
      ClearBit31(r, offsetof(MemoryActivity, memoryKind));
      ClearBit31(r, offsetof(MemoryActivity, memoryPoolConfig.memoryPoolType));
      SetPointer(r, offsetof(MemoryActivity, name), NamePointer(name));
      SetPointer(r, offsetof(MemoryActivity, source), NamePointer(name));
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      ClearBit31(r, offsetof(SyncActivity, type));
      break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      ClearBit31(r, offsetof(OverheadActivity, overheadKind));
      ClearBit31(r, offsetof(OverheadActivity, objectKind));
      SetPointer(r, offsetof(OverheadActivity, overheadData), nullptr);
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      ClearBit31(r, offsetof(DeviceActivity, flags));
      SetPointer(r, offsetof(DeviceActivity, name), NamePointer(name));
      break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      SetPointer(r, offsetof(GraphTraceActivity, reserved), nullptr);
      break;
    default:
      break;
  }
}

// The stand-in for cuptiActivityGetNextRecord. `g_walk_fails`: the end of the buffer is reported
// as a CUPTI error (CUPTI_ERROR_UNKNOWN) instead of CUPTI_ERROR_MAX_LIMIT_REACHED.
bool g_walk_fails = false;

CUptiResult Walk(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  const CUptiResult end = g_walk_fails ? CUPTI_ERROR_UNKNOWN : CUPTI_ERROR_MAX_LIMIT_REACHED;
  size_t offset = 0;
  if (*record != nullptr) {
    const size_t size = RecordSize((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + size;
  }
  if (offset + sizeof(CUpti_ActivityKind) > valid) return end;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  const size_t size = RecordSize(next->kind);
  if (size == 0) return CUPTI_ERROR_INVALID_KIND;
  if (offset + size > valid) return end;
  *record = next;
  return CUPTI_SUCCESS;
}

// What a record may change in a batch.
struct Tally {
  size_t kernels, memcpys, memsets, syncs, memory_ops, overheads, devices;
  uint64_t unknown, uncorrelated, graph_traces, broken_records, incomplete;
  bool operator==(const Tally&) const = default;
};
Tally TallyOf(const GpuBatch& b) {
  return Tally{b.kernels.size(),   b.memcpys.size(),       b.memsets.size(),
               b.syncs.size(),     b.memory_ops.size(),    b.overheads.size(),
               b.devices.size(),   b.records_unknown_kind, b.records_uncorrelated,
               b.graph_traces,     b.records_broken, b.records_incomplete};
}

uint32_t Dim(int32_t v) { return v < 0 ? 0u : static_cast<uint32_t>(v); }
uint8_t Dev8(uint32_t id) { return id > 255 ? 255 : static_cast<uint8_t>(id); }

// The rule of activity_decoder.h for spans: no end yet is unfinished; a zero start, an end before
// the start or a time past kMaxProfileTimeNs is broken. Sets the tally it implies; true if
// refused.
template <typename Activity>
bool Refused(const Activity& a, Tally* expect) {
  if (a.end == 0) {
    ++expect->incomplete;
    return true;
  }
  if (a.start == 0 || a.end < a.start || a.end >= kMaxProfileTimeNs) {
    ++expect->broken_records;
    return true;
  }
  return false;
}
// The rule for sizes: one at or past kMaxRecordBytes is broken.
bool RefusedSize(uint64_t bytes, Tally* expect) {
  if (bytes < kMaxRecordBytes) return false;
  ++expect->broken_records;
  return true;
}

template <typename Activity>
Activity As(const CUpti_Activity* record) {
  Activity a;
  std::memcpy(&a, record, sizeof a);
  return a;
}

// Decodes one record with DecodeRecord and checks its one effect on `b`.
void DecodeAndCheck(const CUpti_Activity* record, GpuBatch* b) {
  const Tally before = TallyOf(*b);
  const size_t strings_before = b->strings.size();
  const size_t configs_before = b->launch_configs.size();
  DecodeRecord(record, b);
  Tally expect = before;
  bool names_may_grow = false;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto a = As<KernelActivity>(record);
      if (Refused(a, &expect)) break;
      names_may_grow = true;
      ++expect.kernels;
      if (a.correlationId == 0) ++expect.uncorrelated;
      GPROF_FUZZ_CHECK(b->kernels.size() == expect.kernels);
      const Kernel& k = b->kernels.back();
      GPROF_FUZZ_CHECK(k.start_ns == a.start && k.end_ns == a.end);
      GPROF_FUZZ_CHECK(k.correlation_id == a.correlationId && k.stream_id == a.streamId);
      const std::string_view name = a.name != nullptr ? std::string_view(a.name) : "<unnamed>";
      GPROF_FUZZ_CHECK(k.name < b->strings.size() && b->strings.Get(k.name) == name);
      GPROF_FUZZ_CHECK(k.launch_config < b->launch_configs.size());
      const LaunchConfig& c = b->launch_configs[k.launch_config];
      GPROF_FUZZ_CHECK(c.grid[0] == Dim(a.gridX) && c.grid[1] == Dim(a.gridY) &&
                       c.grid[2] == Dim(a.gridZ));
      GPROF_FUZZ_CHECK(c.block[0] == Dim(a.blockX) && c.block[1] == Dim(a.blockY) &&
                       c.block[2] == Dim(a.blockZ));
      GPROF_FUZZ_CHECK(c.registers_per_thread == a.registersPerThread);
      GPROF_FUZZ_CHECK(c.static_shared_bytes == Dim(a.staticSharedMemory) &&
                       c.dynamic_shared_bytes == Dim(a.dynamicSharedMemory));
      GPROF_FUZZ_CHECK(c.context_id == a.contextId && c.device_id == a.deviceId);
      GPROF_FUZZ_CHECK(c.graph_id == a.graphId && c.graph_node_id == a.graphNodeId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const bool peer = record->kind == CUPTI_ACTIVITY_KIND_MEMCPY2;
      const auto a = As<MemcpyActivity>(record);
      const auto p = As<PeerCopyActivity>(record);
      // The fields both layouts share sit at the same offsets.
#define GPROF_SAME_OFFSET(field) \
  static_assert(offsetof(MemcpyActivity, field) == offsetof(PeerCopyActivity, field))
      GPROF_SAME_OFFSET(flags);
      GPROF_SAME_OFFSET(bytes);
      GPROF_SAME_OFFSET(start);
      GPROF_SAME_OFFSET(end);
      GPROF_SAME_OFFSET(deviceId);
      GPROF_SAME_OFFSET(contextId);
      GPROF_SAME_OFFSET(streamId);
#undef GPROF_SAME_OFFSET
      if (Refused(a, &expect) || RefusedSize(a.bytes, &expect)) break;
      ++expect.memcpys;
      const uint32_t id = peer ? p.correlationId
                               : (a.runtimeCorrelationId != 0 ? a.runtimeCorrelationId
                                                              : a.correlationId);
      if (id == 0) ++expect.uncorrelated;
      GPROF_FUZZ_CHECK(b->memcpys.size() == expect.memcpys);
      const Memcpy& m = b->memcpys.back();
      GPROF_FUZZ_CHECK(m.start_ns == a.start && m.end_ns == a.end && m.bytes == a.bytes);
      GPROF_FUZZ_CHECK(m.correlation_id == id && m.stream_id == a.streamId &&
                       m.context_id == a.contextId && m.device_id == Dev8(a.deviceId));
      GPROF_FUZZ_CHECK(static_cast<uint32_t>(m.kind) <= static_cast<uint32_t>(CopyKind::kPtoP));
      GPROF_FUZZ_CHECK(static_cast<uint32_t>(m.src_kind) <=
                           static_cast<uint32_t>(MemKind::kManagedStatic) &&
                       static_cast<uint32_t>(m.dst_kind) <=
                           static_cast<uint32_t>(MemKind::kManagedStatic));
      GPROF_FUZZ_CHECK(m.is_async == ((a.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0));
      if (peer) {
        GPROF_FUZZ_CHECK(m.kind != CopyKind::kUnknown);
        GPROF_FUZZ_CHECK(m.src_device == Dev8(p.srcDeviceId) &&
                         m.dst_device == Dev8(p.dstDeviceId));
      } else {
        GPROF_FUZZ_CHECK(m.src_device == m.device_id && m.dst_device == m.device_id);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto a = As<MemsetActivity>(record);
      if (Refused(a, &expect) || RefusedSize(a.bytes, &expect)) break;
      ++expect.memsets;
      if (a.correlationId == 0) ++expect.uncorrelated;
      GPROF_FUZZ_CHECK(b->memsets.size() == expect.memsets);
      const Memset& m = b->memsets.back();
      GPROF_FUZZ_CHECK(m.start_ns == a.start && m.end_ns == a.end && m.bytes == a.bytes);
      GPROF_FUZZ_CHECK(m.correlation_id == a.correlationId && m.stream_id == a.streamId &&
                       m.value == a.value && m.device_id == Dev8(a.deviceId));
      GPROF_FUZZ_CHECK(static_cast<uint32_t>(m.mem_kind) <=
                       static_cast<uint32_t>(MemKind::kManagedStatic));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto a = As<MemoryActivity>(record);
      if (a.timestamp == 0 || a.timestamp >= kMaxProfileTimeNs) {
        ++expect.broken_records;
        break;
      }
      if (RefusedSize(a.bytes, &expect)) break;
      ++expect.memory_ops;
      GPROF_FUZZ_CHECK(b->memory_ops.size() == expect.memory_ops);
      const MemoryOp& m = b->memory_ops.back();
      GPROF_FUZZ_CHECK(m.ts_ns == a.timestamp && m.address == a.address && m.bytes == a.bytes);
      GPROF_FUZZ_CHECK(m.correlation_id == a.correlationId && m.stream_id == a.streamId);
      const bool release = a.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
      GPROF_FUZZ_CHECK(m.op == (release ? MemoryOpKind::kFree : MemoryOpKind::kAlloc));
      GPROF_FUZZ_CHECK(static_cast<uint32_t>(m.mem_kind) <=
                       static_cast<uint32_t>(MemKind::kManagedStatic));
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto a = As<SyncActivity>(record);
      if (Refused(a, &expect)) break;
      ++expect.syncs;
      GPROF_FUZZ_CHECK(b->syncs.size() == expect.syncs);
      const Sync& s = b->syncs.back();
      GPROF_FUZZ_CHECK(s.start_ns == a.start && s.end_ns == a.end &&
                       s.correlation_id == a.correlationId && s.stream_id == a.streamId);
      GPROF_FUZZ_CHECK(static_cast<uint32_t>(s.kind) <=
                       static_cast<uint32_t>(SyncKind::kContextSynchronize));
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto a = As<OverheadActivity>(record);
      if (Refused(a, &expect)) break;
      ++expect.overheads;
      GPROF_FUZZ_CHECK(b->overheads.size() == expect.overheads);
      const Overhead& o = b->overheads.back();
      GPROF_FUZZ_CHECK(o.start_ns == a.start && o.end_ns == a.end);
      GPROF_FUZZ_CHECK(o.kind == OverheadKind::kOther ||
                       static_cast<uint32_t>(o.kind) <=
                           static_cast<uint32_t>(OverheadKind::kActivityBufferRequest));
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto a = As<DeviceActivity>(record);
      names_may_grow = true;
      bool seen = false;
      for (size_t i = 0; i < before.devices; ++i) seen = seen || b->devices[i].id == a.id;
      if (seen) break;  // the first record of a device wins
      ++expect.devices;
      GPROF_FUZZ_CHECK(b->devices.size() == expect.devices);
      const DeviceInfo& d = b->devices.back();
      const std::string_view name = a.name != nullptr ? std::string_view(a.name) : "";
      GPROF_FUZZ_CHECK(d.id == a.id && d.name < b->strings.size() &&
                       b->strings.Get(d.name) == name);
      GPROF_FUZZ_CHECK(d.total_global_mem == a.globalMemorySize &&
                       d.num_sms == a.numMultiprocessors);
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      ++expect.graph_traces;
      break;
    default:
      ++expect.unknown;
      break;
  }
  GPROF_FUZZ_CHECK(TallyOf(*b) == expect);
  if (!names_may_grow) GPROF_FUZZ_CHECK(b->strings.size() == strings_before);
  if (expect.kernels == before.kernels) {
    GPROF_FUZZ_CHECK(b->launch_configs.size() == configs_before);
  }
}

template <typename T>
bool SameRecords(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// `whole` (DecodeBuffer) and `each` (DecodeRecord per record) decoded the same records.
void CheckSameBatch(const GpuBatch& whole, const GpuBatch& each, uint64_t walk_incomplete) {
  GPROF_FUZZ_CHECK(SameRecords(whole.kernels, each.kernels));
  GPROF_FUZZ_CHECK(SameRecords(whole.memcpys, each.memcpys));
  GPROF_FUZZ_CHECK(SameRecords(whole.memsets, each.memsets));
  GPROF_FUZZ_CHECK(SameRecords(whole.syncs, each.syncs));
  GPROF_FUZZ_CHECK(SameRecords(whole.memory_ops, each.memory_ops));
  GPROF_FUZZ_CHECK(SameRecords(whole.overheads, each.overheads));
  GPROF_FUZZ_CHECK(SameRecords(whole.launch_configs, each.launch_configs));
  GPROF_FUZZ_CHECK(SameRecords(whole.devices, each.devices));
  GPROF_FUZZ_CHECK(whole.strings.size() == each.strings.size());
  for (StringId i = 0; i < whole.strings.size(); ++i) {
    GPROF_FUZZ_CHECK(whole.strings.Get(i) == each.strings.Get(i));
  }
  Tally t = TallyOf(each);
  t.incomplete += walk_incomplete;
  GPROF_FUZZ_CHECK(TallyOf(whole) == t);
  // Each configuration once, and the index agrees with the list.
  GPROF_FUZZ_CHECK(whole.launch_config_index.size() == whole.launch_configs.size());
  for (uint32_t i = 0; i < whole.launch_configs.size(); ++i) {
    const auto it = whole.launch_config_index.find(whole.launch_configs[i]);
    GPROF_FUZZ_CHECK(it != whole.launch_config_index.end() && it->second == i);
  }
}

// Kernels, copies and memsets (the kinds MergeGpuBatches checks against the calls) from `first`
// on whose correlation id no call has (0 never has one).
uint64_t CountUnlinked(const Profile& p, size_t first_kernel, size_t first_memcpy,
                       size_t first_memset, const std::set<uint32_t>& call_ids) {
  uint64_t n = 0;
  auto count = [&](const auto& records, size_t first) {
    for (size_t i = first; i < records.size(); ++i) {
      const uint32_t id = records[i].correlation_id;
      if (id == 0 || call_ids.count(id) == 0) ++n;
    }
  };
  count(p.kernels, first_kernel);
  count(p.memcpys, first_memcpy);
  count(p.memsets, first_memset);
  return n;
}

uint64_t CountZeroIds(const GpuBatch& b) {
  uint64_t n = 0;
  for (const Kernel& k : b.kernels) n += k.correlation_id == 0;
  for (const Memcpy& m : b.memcpys) n += m.correlation_id == 0;
  for (const Memset& m : b.memsets) n += m.correlation_id == 0;
  return n;
}

// Merges `batch` (emptied) into `p` as one drain and checks the result against `reference`, a
// batch with the same content that stays (DecodeRecord's copy for the first drain; the first
// drain's records in `p` for the second).
void MergeAndCheck(GpuBatch* batch, const GpuBatch* reference, KnownDevices* known, Profile* p,
                   const std::set<uint32_t>& call_ids) {
  const size_t first_kernel = p->kernels.size(), first_memcpy = p->memcpys.size(),
               first_memset = p->memsets.size();
  const Counters before = p->counters;
  const uint64_t incomplete = batch->records_incomplete, unknown = batch->records_unknown_kind,
                 bad = batch->records_broken;
  GPROF_FUZZ_CHECK(batch->records_uncorrelated == CountZeroIds(*batch));
  const uint64_t zero_ids = batch->records_uncorrelated;
  std::vector<GpuBatch> batches;
  batches.push_back(std::move(*batch));
  const MergeTotals totals = MergeGpuBatches(&batches, known, p);
  GPROF_FUZZ_CHECK(batches.empty());
  GPROF_FUZZ_CHECK(totals.broken_records == bad);
  GPROF_FUZZ_CHECK(p->counters.gpu_records_incomplete ==
                   before.gpu_records_incomplete + incomplete);
  GPROF_FUZZ_CHECK(p->counters.records_unknown_kind == before.records_unknown_kind + unknown);
  const uint64_t unlinked = p->api_calls.empty()
                                ? zero_ids
                                : CountUnlinked(*p, first_kernel, first_memcpy, first_memset,
                                                call_ids);
  GPROF_FUZZ_CHECK(p->counters.gpu_records_uncorrelated ==
                   before.gpu_records_uncorrelated + unlinked);

  if (reference != nullptr) {
    // First drain: the records of `reference`, names and configs re-interned to the same values.
    GPROF_FUZZ_CHECK(p->kernels.size() == reference->kernels.size());
    for (size_t i = 0; i < p->kernels.size(); ++i) {
      const Kernel& k = p->kernels[i];
      const Kernel& r = reference->kernels[i];
      GPROF_FUZZ_CHECK(k.start_ns == r.start_ns && k.end_ns == r.end_ns &&
                       k.correlation_id == r.correlation_id && k.stream_id == r.stream_id);
      GPROF_FUZZ_CHECK(p->strings.Get(k.name) == reference->strings.Get(r.name));
      GPROF_FUZZ_CHECK(k.launch_config < p->launch_configs.size());
      GPROF_FUZZ_CHECK(std::memcmp(&p->launch_configs[k.launch_config],
                                   &reference->launch_configs[r.launch_config],
                                   sizeof(LaunchConfig)) == 0);
    }
    GPROF_FUZZ_CHECK(SameRecords(p->memcpys, reference->memcpys));
    GPROF_FUZZ_CHECK(SameRecords(p->memsets, reference->memsets));
    GPROF_FUZZ_CHECK(SameRecords(p->syncs, reference->syncs));
    GPROF_FUZZ_CHECK(SameRecords(p->memory_ops, reference->memory_ops));
    GPROF_FUZZ_CHECK(SameRecords(p->overheads, reference->overheads));
    GPROF_FUZZ_CHECK(known->size() == reference->devices.size());
    for (size_t i = 0; i < known->size(); ++i) {
      const DeviceInfo& d = reference->devices[i];
      GPROF_FUZZ_CHECK((*known)[i].first.id == d.id &&
                       (*known)[i].second == reference->strings.Get(d.name));
    }
  } else {
    // Second drain of the same records: appended after the first ones, identical to them (same
    // names and configs in the profile's tables), no new device.
    GPROF_FUZZ_CHECK(p->kernels.size() == 2 * first_kernel);
    GPROF_FUZZ_CHECK(std::equal(p->kernels.begin(), p->kernels.begin() + first_kernel,
                                p->kernels.begin() + first_kernel,
                                [](const Kernel& a, const Kernel& b) {
                                  return std::memcmp(&a, &b, sizeof a) == 0;
                                }));
    GPROF_FUZZ_CHECK(p->memcpys.size() == 2 * first_memcpy &&
                     p->memsets.size() == 2 * first_memset);
  }
  // Every device once, named as CUPTI named it.
  GPROF_FUZZ_CHECK(p->devices.size() == known->size());
  for (size_t i = 0; i < p->devices.size(); ++i) {
    for (size_t j = 0; j < i; ++j) GPROF_FUZZ_CHECK(p->devices[i].id != p->devices[j].id);
    GPROF_FUZZ_CHECK(p->devices[i].id == (*known)[i].first.id &&
                     p->strings.Get(p->devices[i].name) == (*known)[i].second);
  }
}

// CheckGpuAgainstCalls' two counters, recounted plainly.
void CheckAgainstCalls(Profile* p) {
  std::map<uint32_t, uint64_t> first_start;  // the first call with each id
  for (const ApiCall& c : p->api_calls) first_start.emplace(c.correlation_id, c.start_ns);
  uint64_t before_launch = 0;
  auto early = [&](const auto& records) {
    for (const auto& r : records) {
      const auto it =
          r.correlation_id != 0 ? first_start.find(r.correlation_id) : first_start.end();
      if (it != first_start.end() && r.start_ns + kLaunchSkewSlackNs < it->second) ++before_launch;
    }
  };
  early(p->kernels);
  early(p->memcpys);
  early(p->memsets);
  std::set<uint32_t> arrived;
  ForEachGpuKind(*p, [&](GpuKind, const auto& records) {
    using T = typename std::decay_t<decltype(records)>::value_type;
    if constexpr (kGpuRecordHasCorrelation<T>) {
      for (const T& r : records) arrived.insert(r.correlation_id);
    }
  });
  // A launch made during a stream capture makes no record of its own (gpu_collector.h).
  const std::vector<bool> captured = CapturedCalls(*p);
  uint64_t without = 0;
  for (size_t i = 0; i < p->api_calls.size(); ++i) {
    const ApiCall& c = p->api_calls[i];
    if (IsLaunchCall(c) && !captured[i] && arrived.count(c.correlation_id) == 0) ++without;
  }
  MarkLaunchCalls(p, nullptr);
  CheckGpuAgainstCalls(p);
  GPROF_FUZZ_CHECK(p->counters.gpu_records_before_launch == before_launch);
  GPROF_FUZZ_CHECK(p->counters.gpu_launches_without_records == without);
}

}  // namespace
}  // namespace gprof::collector

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gprof;
  using namespace gprof::collector;
  std::memset(g_slots, 0, sizeof g_slots);
  Reader in(data, size);
  GpuBatch whole, each;  // DecodeBuffer's batch, and DecodeRecord's per record
  uint64_t errors = 0, walk_errors = 0, walk_incomplete = 0;
  std::vector<uint64_t> storage;  // 8-byte aligned, as CUPTI's buffers are
  size_t used = 0;
  Profile p;

  auto end_buffer = [&](uint8_t mode) {
    const size_t cut = std::min<size_t>(mode % 64, used);
    const size_t valid = used - cut;
    auto* buffer = reinterpret_cast<uint8_t*>(storage.data());
    g_walk_fails = (mode & 64) != 0;
    const uint64_t decoded = DecodeBuffer(buffer, valid, &Walk, &whole, &errors);
    uint64_t handed = 0;
    if (buffer != nullptr && valid != 0) {  // DecodeBuffer does not walk an empty buffer
      CUpti_Activity* record = nullptr;
      CUptiResult rc;
      while ((rc = Walk(buffer, valid, &record)) == CUPTI_SUCCESS) {
        DecodeAndCheck(record, &each);
        ++handed;
      }
      if (rc == CUPTI_ERROR_INVALID_KIND) ++walk_incomplete;
      else if (rc != CUPTI_ERROR_MAX_LIMIT_REACHED) ++walk_errors;
    }
    GPROF_FUZZ_CHECK(decoded == handed);
    GPROF_FUZZ_CHECK(errors == walk_errors);
    CheckSameBatch(whole, each, walk_incomplete);
    storage.clear();
    used = 0;
  };

  while (!in.empty()) {
    const uint8_t op = in.Byte();
    switch (op % 16) {
      case 0: {
        char* slot = g_slots[in.Byte() % kSlots];
        const uint8_t len = in.Byte();
        in.Bytes(slot, len);
        slot[len] = '\0';
        break;
      }
      case 1:
        end_buffer(in.Byte());
        break;
      case 2: {
        ApiCall c{};
        c.correlation_id = in.Get<uint32_t>();
        c.start_ns = in.Get<uint64_t>() % kMaxProfileTimeNs;
        c.end_ns = c.start_ns;
        c.tid = 1;
        c.cbid = in.Get<uint16_t>();
        c.domain = (in.Byte() & 1) ? ApiDomain::kDriver : ApiDomain::kRuntime;
        c.return_code = in.Byte();
        p.api_calls.push_back(c);
        break;
      }
      default: {
        const uint32_t kind =
            op % 16 == 3 ? in.Get<uint32_t>() & 0x7fffffffu
                         : static_cast<uint32_t>(kKinds[op % 16 - 4]);
        const uint8_t name = in.Byte();
        size_t bytes = RecordSize(kind);
        if (bytes == 0) bytes = 8;  // the walk stops at it: INVALID_KIND
        alignas(8) unsigned char record[kMaxRecord];
        std::memcpy(record, &kind, 4);
        in.Bytes(record + 4, bytes - 4);
        Sanitize(kind, record, name);
        storage.resize((used + bytes) / 8);
        std::memcpy(reinterpret_cast<unsigned char*>(storage.data()) + used, record, bytes);
        used += bytes;
        break;
      }
    }
  }
  end_buffer(0);

  std::set<uint32_t> call_ids;
  for (const ApiCall& c : p.api_calls) call_ids.insert(c.correlation_id);
  KnownDevices known;
  MergeAndCheck(&whole, &each, &known, &p, call_ids);
  MergeAndCheck(&each, nullptr, &known, &p, call_ids);
  CheckAgainstCalls(&p);
  const std::string why = CheckProfile(p);
  if (!why.empty()) std::fprintf(stderr, "CheckProfile: %s\n", why.c_str());
  GPROF_FUZZ_CHECK(why.empty());
  return 0;
}
