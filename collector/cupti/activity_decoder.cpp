// Decoding CUPTI activity records (see activity_decoder.h). Runs on the parser thread only.
#include "collector/cupti/activity_decoder.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "model/profile.h"

namespace gprof::collector {
namespace {

// model/records.h copies these CUPTI enums value for value (the exporters build without CUDA):
// the decoder casts CUPTI's numbers straight into them, so the values must agree.
template <typename Model, typename Cupti>
constexpr bool Same(Model m, Cupti c) {
  return static_cast<uint32_t>(m) == static_cast<uint32_t>(c);
}
static_assert(Same(CopyKind::kUnknown, CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN));
static_assert(Same(CopyKind::kHtoD, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD));
static_assert(Same(CopyKind::kDtoH, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH));
static_assert(Same(CopyKind::kHtoA, CUPTI_ACTIVITY_MEMCPY_KIND_HTOA));
static_assert(Same(CopyKind::kAtoH, CUPTI_ACTIVITY_MEMCPY_KIND_ATOH));
static_assert(Same(CopyKind::kAtoA, CUPTI_ACTIVITY_MEMCPY_KIND_ATOA));
static_assert(Same(CopyKind::kAtoD, CUPTI_ACTIVITY_MEMCPY_KIND_ATOD));
static_assert(Same(CopyKind::kDtoA, CUPTI_ACTIVITY_MEMCPY_KIND_DTOA));
static_assert(Same(CopyKind::kDtoD, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD));
static_assert(Same(CopyKind::kHtoH, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH));
static_assert(Same(CopyKind::kPtoP, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP));
static_assert(Same(MemKind::kUnknown, CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN));
static_assert(Same(MemKind::kPageable, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE));
static_assert(Same(MemKind::kPinned, CUPTI_ACTIVITY_MEMORY_KIND_PINNED));
static_assert(Same(MemKind::kDevice, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));
static_assert(Same(MemKind::kArray, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY));
static_assert(Same(MemKind::kManaged, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED));
static_assert(Same(MemKind::kDeviceStatic, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC));
static_assert(Same(MemKind::kManagedStatic, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC));
static_assert(Same(SyncKind::kUnknown, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN));
static_assert(Same(SyncKind::kEventSynchronize,
                   CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE));
static_assert(Same(SyncKind::kStreamWaitEvent,
                   CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT));
static_assert(Same(SyncKind::kStreamSynchronize,
                   CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE));
static_assert(Same(SyncKind::kContextSynchronize,
                   CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE));

uint32_t Dim(int32_t v) { return v < 0 ? 0u : static_cast<uint32_t>(v); }
uint8_t Dev8(uint32_t id) { return id > 255 ? 255 : static_cast<uint8_t>(id); }

MemKind ToMemKind(uint32_t kind) {
  return kind <= static_cast<uint32_t>(MemKind::kManagedStatic) ? static_cast<MemKind>(kind)
                                                                 : MemKind::kUnknown;
}

// A time span CUPTI can deliver broken: a zero start (an incomplete record of a forced flush, or
// a bad record), an end before the start, or a time past kMaxProfileTimeNs (the year 2116: no
// clock reads that, and the dump reader rejects a whole profile holding one, CheckProfile).
bool BadSpan(uint64_t start, uint64_t end) {
  return start == 0 || end < start || end >= kMaxProfileTimeNs;
}
bool BadInstant(uint64_t ts) { return ts == 0 || ts >= kMaxProfileTimeNs; }

// Counts and refuses a record with a broken span: unfinished (no end yet) or broken.
template <typename Activity>
bool Refuse(const Activity& a, GpuBatch* batch) {
  if (a.end == 0) {
    ++batch->records_incomplete;
    return true;
  }
  if (!BadSpan(a.start, a.end)) return false;
  ++batch->records_broken;
  return true;
}

// Counts and refuses a record with a size no device or host holds (kMaxRecordBytes, 256 TiB): a
// bad record, and one such would make the dump reader reject the whole profile.
bool RefuseSize(uint64_t bytes, GpuBatch* batch) {
  if (bytes < kMaxRecordBytes) return false;
  ++batch->records_broken;
  return true;
}

CopyKind ToCopyKind(uint32_t kind) {
  return kind <= static_cast<uint32_t>(CopyKind::kPtoP) ? static_cast<CopyKind>(kind)
                                                         : CopyKind::kUnknown;
}

}  // namespace

size_t LaunchConfigHash::operator()(const LaunchConfig& c) const noexcept {
  static_assert(sizeof(LaunchConfig) % 8 == 0);
  uint64_t h = 0;
  for (size_t at = 0; at < sizeof c; at += 8) {
    uint64_t word;
    std::memcpy(&word, reinterpret_cast<const char*>(&c) + at, 8);
    h = (h ^ word) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  return static_cast<size_t>(h);
}

uint32_t GpuBatch::InternLaunchConfig(const LaunchConfig& config, uint32_t hint) {
  // Kernels are launched with few distinct configurations, mostly the same one as last time for
  // the same kernel (`hint`) or one of the last few: compare those before hashing.
  const auto known = static_cast<uint32_t>(launch_configs.size());
  const LaunchConfigEqual equal;
  if (hint < known && equal(launch_configs[hint], config)) return hint;
  for (uint32_t index : recent_configs) {
    if (index < known && equal(launch_configs[index], config)) return index;
  }
  auto [it, inserted] = launch_config_index.try_emplace(config, known);
  if (inserted) launch_configs.push_back(config);
  recent_configs[recent_next] = it->second;
  recent_next = (recent_next + 1) % kRecentConfigs;
  return it->second;
}

StringId GpuBatch::InternKernelName(const char* name, NameCacheEntry** entry) {
  *entry = nullptr;
  if (name == nullptr) return strings.Intern("<unnamed>");
  const auto key = reinterpret_cast<uintptr_t>(name);
  NameCacheEntry& slot = name_cache[((key >> 4) ^ (key >> 12)) & (kNameCacheSlots - 1)];
  *entry = &slot;
  if (slot.pointer == name && slot.id < strings.size()) {
    // Confirm the hit: same pointer is not proof of the same name (freed and reused memory).
    // strnlen first, so memcmp never reads past the end of a shorter `name`.
    const std::string_view interned = strings.Get(slot.id);
    if (strnlen(name, interned.size() + 1) == interned.size() &&
        std::memcmp(name, interned.data(), interned.size()) == 0) {
      return slot.id;
    }
  }
  slot = NameCacheEntry{name, strings.Intern(std::string_view(name)), UINT32_MAX};
  return slot.id;
}

void GpuBatch::Clear() { *this = GpuBatch(); }

Kernel DecodeKernel(const KernelActivity& a, GpuBatch* batch) {
  LaunchConfig config{};
  config.grid[0] = Dim(a.gridX);
  config.grid[1] = Dim(a.gridY);
  config.grid[2] = Dim(a.gridZ);
  config.block[0] = Dim(a.blockX);
  config.block[1] = Dim(a.blockY);
  config.block[2] = Dim(a.blockZ);
  config.registers_per_thread = a.registersPerThread;
  config.static_shared_bytes = Dim(a.staticSharedMemory);
  config.dynamic_shared_bytes = Dim(a.dynamicSharedMemory);
  config.context_id = a.contextId;
  config.graph_id = a.graphId;
  config.device_id = a.deviceId;
  config.graph_node_id = a.graphNodeId;

  Kernel k{};
  k.start_ns = a.start;
  k.end_ns = a.end;
  k.correlation_id = a.correlationId;
  NameCacheEntry* slot = nullptr;
  k.name = batch->InternKernelName(a.name, &slot);
  k.launch_config =
      batch->InternLaunchConfig(config, slot != nullptr ? slot->last_config : UINT32_MAX);
  if (slot != nullptr) slot->last_config = k.launch_config;
  k.stream_id = a.streamId;
  return k;
}

// Fields Memcpy6 and MemcpyPtoP4 share, under the same names.
template <typename CopyActivity>
Memcpy DecodeCopyCommon(const CopyActivity& a) {
  Memcpy m{};
  m.start_ns = a.start;
  m.end_ns = a.end;
  m.bytes = a.bytes;
  m.correlation_id = a.correlationId;
  m.stream_id = a.streamId;
  m.context_id = a.contextId;
  m.device_id = Dev8(a.deviceId);
  m.kind = ToCopyKind(a.copyKind);
  m.src_kind = ToMemKind(a.srcKind);
  m.dst_kind = ToMemKind(a.dstKind);
  m.src_device = m.device_id;
  m.dst_device = m.device_id;
  m.is_async = (a.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
  return m;
}

Memcpy DecodeMemcpy(const MemcpyActivity& a) {
  Memcpy m = DecodeCopyCommon(a);
  // correlationId names the driver call; runtimeCorrelationId (when non-zero) the runtime call
  // that issued it. We record runtime calls, and the driver calls inside them are not recorded,
  // so link to the runtime call when there is one, else to the (direct) driver call.
  if (a.runtimeCorrelationId != 0) m.correlation_id = a.runtimeCorrelationId;
  return m;
}

Memcpy DecodePeerCopy(const PeerCopyActivity& a) {
  Memcpy m = DecodeCopyCommon(a);
  if (m.kind == CopyKind::kUnknown) m.kind = CopyKind::kPtoP;
  m.src_device = Dev8(a.srcDeviceId);
  m.dst_device = Dev8(a.dstDeviceId);
  return m;
}

Memset DecodeMemset(const MemsetActivity& a) {
  Memset m{};
  m.start_ns = a.start;
  m.end_ns = a.end;
  m.bytes = a.bytes;
  m.correlation_id = a.correlationId;
  m.stream_id = a.streamId;
  m.value = a.value;
  m.device_id = Dev8(a.deviceId);
  m.mem_kind = ToMemKind(a.memoryKind);
  m.is_async = (a.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0;
  return m;
}

MemoryOp DecodeMemory(const MemoryActivity& a) {
  MemoryOp m{};
  m.ts_ns = a.timestamp;
  m.address = a.address;
  m.bytes = a.bytes;
  m.correlation_id = a.correlationId;
  m.stream_id = a.streamId;
  m.op = a.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
             ? MemoryOpKind::kFree
             : MemoryOpKind::kAlloc;
  m.mem_kind = ToMemKind(a.memoryKind);
  m.device_id = Dev8(a.deviceId);
  m.is_async = a.isAsync ? 1 : 0;
  return m;
}

Sync DecodeSync(const SyncActivity& a) {
  Sync s{};
  s.start_ns = a.start;
  s.end_ns = a.end;
  s.correlation_id = a.correlationId;
  s.stream_id = a.streamId;
  s.context_id = a.contextId;
  uint32_t type = static_cast<uint32_t>(a.type);
  s.kind = type <= static_cast<uint32_t>(SyncKind::kContextSynchronize) ? static_cast<SyncKind>(type)
                                                                       : SyncKind::kUnknown;
  return s;
}

OverheadKind MapOverheadKind(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_UNKNOWN: return OverheadKind::kUnknown;
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return OverheadKind::kDriverCompiler;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return OverheadKind::kActivityBuffer;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return OverheadKind::kInstrumentation;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return OverheadKind::kResource;
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return OverheadKind::kRuntimeTrigger;
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return OverheadKind::kLazyFunctionLoad;
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return OverheadKind::kCommandBuffer;
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return OverheadKind::kActivityBufferRequest;
    default: return OverheadKind::kOther;
  }
}

Overhead DecodeOverhead(const OverheadActivity& a) {
  Overhead o{};
  o.start_ns = a.start;
  o.end_ns = a.end;
  o.tid = a.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? a.objectId.pt.threadId : 0;
  o.kind = MapOverheadKind(a.overheadKind);
  return o;
}

DeviceInfo DecodeDevice(const DeviceActivity& a, GpuBatch* batch) {
  DeviceInfo d{};
  d.id = a.id;
  d.name = batch->strings.Intern(a.name != nullptr ? std::string_view(a.name) : "");
  d.total_global_mem = a.globalMemorySize;
  d.compute_major = a.computeCapabilityMajor;
  d.compute_minor = a.computeCapabilityMinor;
  d.num_sms = a.numMultiprocessors;
  d.max_threads_per_block = a.maxThreadsPerBlock;
  d.max_threads_per_sm = a.maxWarpsPerMultiprocessor * a.numThreadsPerWarp;
  d.max_registers_per_block = a.maxRegistersPerBlock;
  d.max_registers_per_sm = a.maxRegistersPerMultiprocessor;
  d.max_shared_memory_per_block = a.maxSharedMemoryPerBlock;
  d.max_shared_memory_per_sm = a.maxSharedMemoryPerMultiprocessor;
  d.warp_size = a.numThreadsPerWarp;
  return d;
}

void DecodeRecord(const CUpti_Activity* record, GpuBatch* batch) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto& a = *reinterpret_cast<const KernelActivity*>(record);
      if (Refuse(a, batch)) break;
      batch->kernels.push_back(DecodeKernel(a, batch));
      if (a.correlationId == 0) ++batch->records_uncorrelated;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& a = *reinterpret_cast<const MemcpyActivity*>(record);
      if (Refuse(a, batch) || RefuseSize(a.bytes, batch)) break;
      batch->memcpys.push_back(DecodeMemcpy(a));
      if (batch->memcpys.back().correlation_id == 0) ++batch->records_uncorrelated;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto& a = *reinterpret_cast<const PeerCopyActivity*>(record);
      if (Refuse(a, batch) || RefuseSize(a.bytes, batch)) break;
      batch->memcpys.push_back(DecodePeerCopy(a));
      if (batch->memcpys.back().correlation_id == 0) ++batch->records_uncorrelated;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& a = *reinterpret_cast<const MemsetActivity*>(record);
      if (Refuse(a, batch) || RefuseSize(a.bytes, batch)) break;
      batch->memsets.push_back(DecodeMemset(a));
      if (batch->memsets.back().correlation_id == 0) ++batch->records_uncorrelated;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto& a = *reinterpret_cast<const MemoryActivity*>(record);
      if (BadInstant(a.timestamp)) {
        ++batch->records_broken;
        break;
      }
      if (RefuseSize(a.bytes, batch)) break;
      batch->memory_ops.push_back(DecodeMemory(a));
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& a = *reinterpret_cast<const SyncActivity*>(record);
      if (Refuse(a, batch)) break;
      batch->syncs.push_back(DecodeSync(a));
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& a = *reinterpret_cast<const OverheadActivity*>(record);
      if (Refuse(a, batch)) break;
      batch->overheads.push_back(DecodeOverhead(a));
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      DeviceInfo d = DecodeDevice(*reinterpret_cast<const DeviceActivity*>(record), batch);
      bool seen = false;
      for (const DeviceInfo& old : batch->devices) seen = seen || old.id == d.id;
      if (!seen) batch->devices.push_back(d);
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      ++batch->graph_traces;
      break;
    default:
      ++batch->records_unknown_kind;
      break;
  }
}

uint64_t DecodeBuffer(uint8_t* buffer, size_t valid_size, NextRecordFn next_record, GpuBatch* batch,
                      uint64_t* errors) {
  uint64_t decoded = 0;
  if (buffer == nullptr || valid_size == 0) return 0;
  // Kernel records are the bulk of a buffer: room for a buffer full of them up front saves the
  // vector's regrowth copies (at most valid_size / 216 * 32 bytes, 15 % of the buffer; capacity
  // that is never written is mostly never paged in). Geometric when a batch takes many buffers.
  const size_t most_kernels = batch->kernels.size() + valid_size / sizeof(KernelActivity);
  if (batch->kernels.capacity() < most_kernels) {
    batch->kernels.reserve(std::max(most_kernels, 2 * batch->kernels.capacity()));
  }
  CUpti_Activity* record = nullptr;
  for (;;) {
    CUptiResult rc = next_record(buffer, valid_size, &record);
    if (rc == CUPTI_SUCCESS) {
      DecodeRecord(record, batch);
      ++decoded;
      continue;
    }
    if (rc == CUPTI_ERROR_INVALID_KIND) {
      ++batch->records_incomplete;  // incomplete or invalid: the rest of the buffer is unreadable
    } else if (rc != CUPTI_ERROR_MAX_LIMIT_REACHED && errors != nullptr) {
      ++*errors;
    }
    break;
  }
  return decoded;
}

uint64_t DecodedBytes(const GpuBatch& batch) {
  uint64_t bytes = 0;
  ForEachGpuKind(batch, [&](GpuKind, const auto& records) {
    bytes += records.capacity() * sizeof(records[0]);
  });
  return bytes;
}

}  // namespace gprof::collector
