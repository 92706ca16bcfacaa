// The CUPTI_ACTIVITY_KIND_* tables (see sqlite_internal.h): kernels, runtime and driver calls,
// copies, memsets and syncs, with the names the kernels add to StringIds.
#include "outputs/sqlite/sqlite_export.h"
#include "outputs/sqlite/sqlite_internal.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace gprof {
namespace sqlite_detail {

// [time]: the session starts at the profile's collection start, or at its first record when that
// is earlier (a window's API call begun before the window), so that no time is negative.
uint64_t SessionStartNs(const Profile& p) {
  uint64_t start = p.info.start_ns != 0 ? p.info.start_ns : std::numeric_limits<uint64_t>::max();
  auto take = [&](uint64_t t) { start = std::min(start, t); };
  for (const HostRange& r : p.ranges) take(r.start_ns);
  for (const HostMark& m : p.marks) take(m.ts_ns);
  for (const ApiCall& c : p.api_calls) take(c.start_ns);
  ForEachGpuKind(p, [&](GpuKind, const auto& records) {
    for (const auto& r : records) take(GpuRecordStartNs(r));
  });
  return start == std::numeric_limits<uint64_t>::max() ? 0 : start;
}

Writer::Writer(const Profile& run, Database* db, uint64_t origin)
    : p_(run), db_(*db), strings_(run.strings), origin_(origin),
      global_pid_(GlobalPid(run.info.pid)) {
  for (const LaunchConfig& lc : run.launch_configs) NoteContext(lc.device_id, lc.context_id);
}

void Writer::WriteRecords(const Profile& r) {
  WriteKernels(r);
  WriteRuntime(r);
  WriteMemcpys(r);
  WriteMemsets(r);
  WriteSyncs(r);
  WriteNvtx(r);
}

uint64_t Writer::Finish() {
  WriteProcess();
  WriteEnums();
  strings_.WriteTable(&db_, &rows_);  // last: the rows above add names to it
  return rows_;
}

const Writer::KernelNames& Writer::NamesOf(StringId mangled) {
  if (mangled >= kernel_names_.size()) kernel_names_.resize(mangled + size_t{1});
  KernelNames& n = kernel_names_[mangled];
  if (!n.done) {
    const std::string demangled = DemangleKernelName(p_.strings.Get(mangled));
    n.demangled = strings_.Id(demangled);
    n.short_name = strings_.Id(KernelShortName(demangled));
    n.done = true;
  }
  return n;
}

void Writer::WriteKernels(const Profile& r) {
  // Columns not named are NULL; localMemoryPerThread, localMemoryTotal and gridId are NOT NULL
  // in nsys's schema and unknown to us: 0. tensorSizeMinusOneElements: '' (no tensor map).
  Insert ins(&db_,
             "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
             "streamId, correlationId, globalPid, demangledName, shortName, mangledName, "
             "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
             "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
             "localMemoryTotal, gridId, graphNodeId, graphId, tensorSizeMinusOneElements) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?, "
             "'')",
             &rows_);
  const LaunchConfig unknown{};
  for (const Kernel& k : r.kernels) {
    const LaunchConfig& lc =
        k.launch_config < p_.launch_configs.size() ? p_.launch_configs[k.launch_config] : unknown;
    const KernelNames& names = NamesOf(k.name);
    ins.Int(T(k.start_ns)).Int(T(k.end_ns)).Int(KernelDeviceId(p_, k)).Int(lc.context_id);
    ins.Int(k.stream_id).Int(k.correlation_id).Int(global_pid_);
    ins.Int(names.demangled).Int(names.short_name).Int(k.name);
    ins.Int(lc.registers_per_thread);
    ins.Int(lc.grid[0]).Int(lc.grid[1]).Int(lc.grid[2]);
    ins.Int(lc.block[0]).Int(lc.block[1]).Int(lc.block[2]);
    ins.Int(lc.static_shared_bytes).Int(lc.dynamic_shared_bytes);
    ins.IntOr(lc.graph_node_id != 0, static_cast<int64_t>(lc.graph_node_id));
    ins.IntOr(lc.graph_id != 0, lc.graph_id);
    ins.Row();
  }
}

uint32_t Writer::ApiNameId(const ApiCall& c) {
  const uint32_t key = static_cast<uint32_t>(c.domain) << 16 | c.cbid;
  auto [it, inserted] = api_name_ids_.emplace(key, 0);
  if (inserted) {
    it->second = strings_.Id(api_names_.ApiCallName(c));
  }
  return it->second;
}

void Writer::WriteRuntime(const Profile& r) {
  Insert ins(&db_,
             "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
             "correlationId, nameId, returnValue) VALUES (?, ?, ?, ?, ?, ?, ?)",
             &rows_);
  for (const ApiCall& c : r.api_calls) {
    ins.Int(T(c.start_ns)).Int(T(c.end_ns));
    ins.Int(c.domain == ApiDomain::kDriver ? kEventClassCudaDriver : kEventClassCudaRuntime);
    ins.Int(GlobalTid(p_.info.pid, c.tid)).Int(c.correlation_id).Int(ApiNameId(c));
    ins.Int(c.return_code).Row();
  }
}

void Writer::WriteMemcpys(const Profile& r) {
  Insert ins(&db_,
             "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
             "streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, "
             "srcDeviceId, dstDeviceId) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             &rows_);
  for (const Memcpy& m : r.memcpys) {
    const bool peer = m.kind == CopyKind::kPtoP;
    ins.Int(T(m.start_ns)).Int(T(m.end_ns)).Int(m.device_id).Int(m.context_id);
    ins.Int(m.stream_id).Int(m.correlation_id).Int(global_pid_);
    ins.Int(static_cast<int64_t>(m.bytes)).Int(CopyKindCode(m.kind));
    ins.Int(MemKindCode(m.src_kind)).Int(MemKindCode(m.dst_kind));
    ins.IntOr(peer, m.src_device).IntOr(peer, m.dst_device).Row();
  }
}

void Writer::WriteMemsets(const Profile& r) {
  // A memset record carries no context: the device's, when the profile saw only one on it.
  Insert ins(&db_,
             "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
             "streamId, correlationId, globalPid, value, bytes, memKind) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             &rows_);
  for (const Memset& m : r.memsets) {
    ins.Int(T(m.start_ns)).Int(T(m.end_ns)).Int(m.device_id);
    ins.Int(context_of_device_.Get(m.device_id, 0));
    ins.Int(m.stream_id).Int(m.correlation_id).Int(global_pid_).Int(m.value);
    ins.Int(static_cast<int64_t>(m.bytes)).Int(MemKindCode(m.mem_kind)).Row();
  }
}

void Writer::WriteSyncs(const Profile& r) {
  // A sync record carries no device: its context's. streamId stays CUPTI's (0xffffffff when
  // the sync is not on a stream); eventId is NOT NULL in nsys's schema and unknown to us: 0.
  Insert ins(&db_,
             "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, "
             "contextId, streamId, correlationId, globalPid, syncType, eventId) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
             &rows_);
  for (const Sync& s : r.syncs) {
    ins.Int(T(s.start_ns)).Int(T(s.end_ns)).Int(device_of_context_.Get(s.context_id, 0));
    ins.Int(s.context_id).Int(s.stream_id).Int(s.correlation_id).Int(global_pid_);
    ins.Int(SyncKindCode(s.kind)).Row();
  }
}

}  // namespace sqlite_detail
}  // namespace gprof
