// Test-only JSON -> Profile loader (see profile_loader.h and README.md).
#include "tests/golden/profile_loader.h"

#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gprof::golden {
namespace {

using nlohmann::json;

template <typename E>
E Enum(const json& v, const std::map<std::string, E>& names, const char* what) {
  const std::string s = v.get<std::string>();
  const auto it = names.find(s);
  if (it == names.end()) throw std::runtime_error(std::string("unknown ") + what + " '" + s + "'");
  return it->second;
}

const std::map<std::string, MemKind> kMemKinds = {
    {"Unknown", MemKind::kUnknown}, {"Pageable", MemKind::kPageable}, {"Pinned", MemKind::kPinned},
    {"Device", MemKind::kDevice},   {"Array", MemKind::kArray},       {"Managed", MemKind::kManaged},
    {"DeviceStatic", MemKind::kDeviceStatic}, {"ManagedStatic", MemKind::kManagedStatic}};
const std::map<std::string, CopyKind> kCopyKinds = {
    {"Unknown", CopyKind::kUnknown}, {"HtoD", CopyKind::kHtoD}, {"DtoH", CopyKind::kDtoH},
    {"HtoA", CopyKind::kHtoA},       {"AtoH", CopyKind::kAtoH}, {"AtoA", CopyKind::kAtoA},
    {"AtoD", CopyKind::kAtoD},       {"DtoA", CopyKind::kDtoA}, {"DtoD", CopyKind::kDtoD},
    {"HtoH", CopyKind::kHtoH},       {"PtoP", CopyKind::kPtoP}};
const std::map<std::string, SyncKind> kSyncKinds = {
    {"event", SyncKind::kEventSynchronize}, {"wait_event", SyncKind::kStreamWaitEvent},
    {"stream", SyncKind::kStreamSynchronize}, {"context", SyncKind::kContextSynchronize}};
const std::map<std::string, OverheadKind> kOverheadKinds = {
    {"driver_compiler", OverheadKind::kDriverCompiler}, {"activity_buffer", OverheadKind::kActivityBuffer},
    {"instrumentation", OverheadKind::kInstrumentation}, {"resource", OverheadKind::kResource},
    {"buffer_request", OverheadKind::kActivityBufferRequest}, {"other", OverheadKind::kOther}};

class Loader {
 public:
  explicit Loader(Profile& p) : p_(p) {}

  void Load(const json& j) {
    base_ = j.value("time_base_ns", uint64_t{0});
    if (j.contains("info")) Info(j["info"]);
    if (j.contains("counters")) Counters(j["counters"]);
    for (const json& d : j.value("domains", json::array())) p_.domains.push_back(Str(d));
    for (const json& t : j.value("threads", json::array())) p_.threads.push_back({t.at("tid"), Str(t.at("name"))});
    for (const json& d : j.value("devices", json::array())) Device(d);
    Records(j, 0, 0);
    for (const json& r : j.value("repeat", json::array())) {
      const uint64_t count = r.at("count"), period = r.at("period_ns");
      const uint32_t corr_step = r.value("correlation_step", 1u);
      for (uint64_t k = 0; k < count; ++k) Records(r, k * period, static_cast<uint32_t>(k) * corr_step);
    }
  }

 private:
  StringId Str(const json& v) { return p_.strings.Intern(DecodeBytes(v.get<std::string>())); }
  uint64_t T(const json& e, const char* key, uint64_t shift) { return base_ + e.at(key).get<uint64_t>() + shift; }

  void Info(const json& i) {
    ProfileInfo& info = p_.info;
    info.pid = i.value("pid", 0u);
    info.parent_pid = i.value("parent_pid", 0u);
    info.program = i.value("program", "");
    info.command_line = i.value("command_line", "");
    info.hostname = i.value("hostname", "");
    info.start_ns = base_ + i.value("start", uint64_t{0});
    info.end_ns = base_ + i.value("end", uint64_t{0});
    info.rank = i.value("rank", -1);
    info.world_size = i.value("world_size", -1);
    info.cycle = i.value("cycle", 0u);
    info.first_step = i.value("first_step", 0u);
    info.last_step = i.value("last_step", 0u);
    info.partial_window = i.value("partial", false);
    info.gpu_status = i.value("gpu_status", "collected");
    info.cupti_library = i.value("cupti_library", "");
  }

  void Counters(const json& c) {
    gprof::ForEachCounter(p_.counters, [&](const char* name, uint64_t& value, const char*) {
      value = c.value(name, uint64_t{0});
    });
  }

  void Device(const json& d) {
    DeviceInfo x{};
    x.id = d.at("id");
    x.name = Str(d.at("name"));
    x.total_global_mem = d.value("total_global_mem", uint64_t{0});
    x.compute_major = d.value("compute_major", 0u);
    x.compute_minor = d.value("compute_minor", 0u);
    x.num_sms = d.value("num_sms", 0u);
    x.max_threads_per_block = d.value("max_threads_per_block", 1024u);
    x.max_threads_per_sm = d.value("max_threads_per_sm", 2048u);
    x.max_registers_per_block = d.value("max_registers_per_block", 65536u);
    x.max_registers_per_sm = d.value("max_registers_per_sm", 65536u);
    x.max_shared_memory_per_block = d.value("max_shared_memory_per_block", 49152u);
    x.max_shared_memory_per_sm = d.value("max_shared_memory_per_sm", 233472u);
    x.warp_size = d.value("warp_size", 32u);
    p_.devices.push_back(x);
  }

  void ApiName(ApiDomain domain, uint16_t cbid, const json& name) {
    for (const gprof::ApiName& n : p_.api_names) {
      if (n.domain == domain && n.cbid == cbid) return;
    }
    p_.api_names.push_back({cbid, domain, 0, Str(name)});
  }

  // Records of every kind in `j`, times shifted by `dt` and correlation ids by `dc`.
  void Records(const json& j, uint64_t dt, uint32_t dc) {
    for (const json& r : j.value("ranges", json::array())) {
      HostRange x{};
      x.start_ns = T(r, "start", dt);
      x.end_ns = T(r, "end", dt);
      x.name = Str(r.at("name"));
      x.tid = r.at("tid");
      x.domain = r.value("domain", 0);
      x.category = r.value("category", 0u);
      for (const json& f : r.value("flags", json::array())) {
        x.flags |= Enum<uint16_t>(f, {{"open_at_end", kRangeOpenAtEnd}, {"start_end", kRangeStartEnd},
                                      {"step", kRangeStep}}, "range flag");
      }
      p_.ranges.push_back(x);
    }
    for (const json& m : j.value("marks", json::array())) {
      HostMark x{};
      x.ts_ns = T(m, "ts", dt);
      x.name = Str(m.at("name"));
      x.tid = m.at("tid");
      x.domain = m.value("domain", 0);
      x.category = m.value("category", 0u);
      p_.marks.push_back(x);
    }
    for (const json& c : j.value("api_calls", json::array())) {
      ApiCall x{};
      x.start_ns = T(c, "start", dt);
      x.end_ns = T(c, "end", dt);
      x.correlation_id = c.at("correlation").get<uint32_t>() + dc;
      x.tid = c.at("tid");
      x.cbid = c.at("cbid");
      x.domain = c.value("api", "runtime") == "driver" ? ApiDomain::kDriver : ApiDomain::kRuntime;
      ApiName(x.domain, x.cbid, c.at("name"));
      p_.api_calls.push_back(x);
    }
    for (const json& k : j.value("kernels", json::array())) {
      LaunchConfig lc{};
      for (int i = 0; i < 3; ++i) {
        lc.grid[i] = k.value("grid", json::array({1, 1, 1}))[i];
        lc.block[i] = k.value("block", json::array({1, 1, 1}))[i];
      }
      lc.registers_per_thread = k.value("registers", 0u);
      lc.static_shared_bytes = k.value("static_shared", 0u);
      lc.dynamic_shared_bytes = k.value("dynamic_shared", 0u);
      lc.context_id = k.value("context", 1u);
      lc.device_id = k.value("device", 0u);
      uint32_t config = 0;
      while (config < p_.launch_configs.size() &&
             std::memcmp(&p_.launch_configs[config], &lc, sizeof lc) != 0) {
        ++config;
      }
      if (config == p_.launch_configs.size()) p_.launch_configs.push_back(lc);
      Kernel x{};
      x.start_ns = T(k, "start", dt);
      x.end_ns = T(k, "end", dt);
      x.correlation_id = k.at("correlation").get<uint32_t>() + dc;
      x.name = Str(k.at("name"));
      x.launch_config = config;
      x.stream_id = k.at("stream");
      p_.kernels.push_back(x);
    }
    for (const json& m : j.value("memcpys", json::array())) {
      Memcpy x{};
      x.start_ns = T(m, "start", dt);
      x.end_ns = T(m, "end", dt);
      x.bytes = m.at("bytes");
      x.correlation_id = m.at("correlation").get<uint32_t>() + dc;
      x.stream_id = m.at("stream");
      x.context_id = m.value("context", 1u);
      x.device_id = m.value("device", 0);
      x.kind = Enum(m.at("kind"), kCopyKinds, "copy kind");
      x.src_kind = Enum(m.at("src"), kMemKinds, "memory kind");
      x.dst_kind = Enum(m.at("dst"), kMemKinds, "memory kind");
      x.src_device = m.value("src_device", x.device_id);
      x.dst_device = m.value("dst_device", x.device_id);
      x.is_async = m.value("async", false);
      p_.memcpys.push_back(x);
    }
    for (const json& m : j.value("memsets", json::array())) {
      Memset x{};
      x.start_ns = T(m, "start", dt);
      x.end_ns = T(m, "end", dt);
      x.bytes = m.at("bytes");
      x.correlation_id = m.at("correlation").get<uint32_t>() + dc;
      x.stream_id = m.at("stream");
      x.value = m.value("value", 0u);
      x.device_id = m.value("device", 0);
      x.mem_kind = Enum(m.value("mem", json("Device")), kMemKinds, "memory kind");
      x.is_async = m.value("async", false);
      p_.memsets.push_back(x);
    }
    for (const json& s : j.value("syncs", json::array())) {
      Sync x{};
      x.start_ns = T(s, "start", dt);
      x.end_ns = T(s, "end", dt);
      x.correlation_id = s.value("correlation", 0u) + dc;
      x.stream_id = s.value("stream", 0xffffffffu);
      x.context_id = s.value("context", 1u);
      x.kind = Enum(s.at("kind"), kSyncKinds, "sync kind");
      p_.syncs.push_back(x);
    }
    for (const json& m : j.value("memory_ops", json::array())) {
      MemoryOp x{};
      x.ts_ns = T(m, "ts", dt);
      x.address = m.at("address");
      x.bytes = m.at("bytes");
      x.correlation_id = m.value("correlation", 0u);
      x.stream_id = m.value("stream", 0xffffffffu);
      x.op = m.at("op") == "free" ? MemoryOpKind::kFree : MemoryOpKind::kAlloc;
      x.mem_kind = Enum(m.value("mem", json("Device")), kMemKinds, "memory kind");
      x.device_id = m.value("device", 0);
      p_.memory_ops.push_back(x);
    }
    for (const json& o : j.value("overheads", json::array())) {
      Overhead x{};
      x.start_ns = T(o, "start", dt);
      x.end_ns = T(o, "end", dt);
      x.tid = o.value("tid", 0u);
      x.kind = Enum(o.at("kind"), kOverheadKinds, "overhead kind");
      p_.overheads.push_back(x);
    }
    for (const json& s : j.value("steps", json::array())) {
      p_.steps.push_back({T(s, "start", dt), T(s, "end", dt), s.at("number"), s.at("tid")});
    }
  }

  Profile& p_;
  uint64_t base_ = 0;
};

}  // namespace

std::string DecodeBytes(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 0 && s[i + 1] == 'x') {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

GoldenCase LoadGoldenCase(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  GoldenCase c;
  try {
    const json j = json::parse(in);
    if (j.contains("table")) {
      c.table.sort_by = j["table"].value("sort_by", "auto");
      c.table.row_limit = j["table"].value("row_limit", -1);
    }
    Loader(c.profile).Load(j.at("profile"));
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return c;
}

}  // namespace gprof::golden
