// WriteTraceJson: the Kineto-flavoured Chrome trace (REFERENCE.md §3, §4), launcher process only.
//
// Plan, then stream: the TracePlan (trace_plan.h, shared with the Perfetto writer) lists events as
// small fixed-size references placed on lanes and sorted; they are then formatted one by one with
// hand-written code into a buffered file (or a caller's memory sink). The document itself is never
// held in memory.
//
// Speed (bench/trace_export_bench.cpp, 1 M launches): names, API names and the
// launch-configuration part of kernel args are escaped/formatted once per distinct value and
// copied; kernels, API calls and flows (4 of every 4 events per launch) are formatted into one
// reserved region without per-field bounds checks.
//
// Tracks are the plan's: host events on pid = OS pid, tid = OS tid; GPU work on pid = device,
// tid = stream (as Kineto, so HTA finds args.stream > 0); overflow and extra tracks on synthetic
// tids from 0x80000000 up, named after the track they belong to.
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "exporters/exporters.h"
#include "exporters/json_writer.h"
#include "exporters/names.h"
#include "exporters/occupancy.h"
#include "exporters/trace_json.h"
#include "exporters/trace_plan.h"

namespace gprof {
namespace {

using Ev = TraceEventKind;
using EvRef = PlannedEvent;

uint64_t Dur(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

// The launch-configuration part of a kernel's args, formatted once per configuration.
struct KernelArgText {
  std::string head;  // ,"device":D,"context":C
  std::string tail;  // ,"registers per thread":...,"block":[x,y,z]}}
};

// Upper bound of the fixed text (keys, punctuation, numbers) of one fast-path event.
constexpr size_t kEventSlack = 512;
constexpr size_t kFastPathLimit = 60000;  // larger events (huge names) take the checked path


class TraceWriter {
 public:
  TraceWriter(const Profile& p, JsonWriter* out, std::string trace_name)
      : plan_(p), p_(p), names_(p), out_(*out), trace_name_(std::move(trace_name)),
        base_(plan_.base_ns()) {}


  TraceStats Write() {
    WriteHeader();
    out_.Raw("  \"traceEvents\": [\n");
    WriteMetadata();
    for (const EvRef& e : plan_.events()) WriteEvent(e);
    out_.Raw("\n  ],\n  \"traceName\": ");
    out_.String(trace_name_);
    out_.Raw("\n}\n");
    TraceStats stats;
    stats.events = count_;
    stats.bytes = out_.Close();
    return stats;
  }


 private:
  // ---- writing ----------------------------------------------------------------------------

  void WriteHeader() {
    JsonWriter& o = out_;
    o.Raw("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
    for (size_t i = 0; i < p_.devices.size(); ++i) {
      const DeviceInfo& d = p_.devices[i];
      o.Raw(i ? ",\n    {" : "\n    {");
      o.Raw("\"id\": ").Uint(d.id).Raw(", \"name\": ").String(p_.strings.Get(d.name));
      o.Raw(", \"totalGlobalMem\": ").Uint(d.total_global_mem);
      o.Raw(", \"computeMajor\": ").Uint(d.compute_major);
      o.Raw(", \"computeMinor\": ").Uint(d.compute_minor);
      o.Raw(", \"maxThreadsPerBlock\": ").Uint(d.max_threads_per_block);
      o.Raw(", \"maxThreadsPerMultiprocessor\": ").Uint(d.max_threads_per_sm);
      o.Raw(", \"regsPerBlock\": ").Uint(d.max_registers_per_block);
      o.Raw(", \"regsPerMultiprocessor\": ").Uint(d.max_registers_per_sm);
      o.Raw(", \"warpSize\": ").Uint(d.warp_size);
      o.Raw(", \"sharedMemPerBlock\": ").Uint(d.max_shared_memory_per_block);
      o.Raw(", \"sharedMemPerMultiprocessor\": ").Uint(d.max_shared_memory_per_sm);
      o.Raw(", \"numSms\": ").Uint(d.num_sms).Char('}');
    }
    o.Raw(p_.devices.empty() ? "],\n" : "\n  ],\n");
    if (p_.info.rank >= 0) {
      // HTA finds the rank with the regex "rank":\s+(\d+): keep the space after the colon.
      o.Raw("  \"distributedInfo\": {\"backend\": \"unknown\", \"rank\": ").Int(p_.info.rank);
      o.Raw(", \"world_size\": ").Int(p_.info.world_size).Raw("},\n");
    }
    o.Raw("  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ").Uint(base_).Raw(",\n");
    const ProfileInfo& i = p_.info;
    const Counters& c = p_.counters;
    o.Raw("  \"gprof\": {\"program\": ").String(i.program);
    o.Raw(", \"command_line\": ").String(i.command_line);
    o.Raw(", \"pid\": ").Uint(i.pid).Raw(", \"parent_pid\": ").Uint(i.parent_pid);
    o.Raw(", \"hostname\": ").String(i.hostname);
    o.Raw(", \"start_ns\": ").Uint(i.start_ns).Raw(", \"end_ns\": ").Uint(i.end_ns);
    o.Raw(", \"cycle\": ").Uint(i.cycle).Raw(", \"first_step\": ").Uint(i.first_step);
    o.Raw(", \"last_step\": ").Uint(i.last_step);
    o.Raw(", \"partial\": ").Raw(i.partial_window ? "true" : "false");
    o.Raw(", \"gpu_status\": ").String(i.gpu_status);
    o.Raw(", \"cupti_library\": ").String(i.cupti_library);
    o.Raw(",\n    \"counters\": {");
    const char* sep = "";
    ForEachCounter(c, [&](const char* name, uint64_t value, const char*) {
      o.Raw(sep).Raw("\"").Raw(name).Raw("\": ").Uint(value);
      sep = ", ";
    });
    o.Raw("}},\n");
  }

  void Begin(const char* ph) {
    out_.Raw(count_++ ? ",\n{\"ph\":\"" : "{\"ph\":\"").Raw(ph).Raw("\"");
  }

  void Meta(const char* name, uint32_t pid, const uint32_t* tid, const char* arg,
            const std::string* text, uint64_t number) {
    Begin("M");
    out_.Raw(",\"name\":\"").Raw(name).Raw("\",\"pid\":").Uint(pid);
    if (tid) out_.Raw(",\"tid\":").Uint(*tid);
    out_.Raw(",\"args\":{\"").Raw(arg).Raw("\":");
    if (text) out_.String(*text);
    else out_.Uint(number);
    out_.Raw("}}");
  }

  void WriteMetadata() {
    for (const TraceProcess& proc : plan_.Processes()) {
      Meta("process_name", proc.pid, nullptr, "name", &proc.name, 0);
      Meta("process_labels", proc.pid, nullptr, "labels", &proc.labels, 0);
      Meta("process_sort_index", proc.pid, nullptr, "sort_index", nullptr, proc.sort_index);
    }
    // Every (pid, tid) that carries events gets a name.
    for (const TraceTrack& track : plan_.Tracks()) {
      Meta("thread_name", track.pid, &track.tid, "name", &track.name, 0);
      Meta("thread_sort_index", track.pid, &track.tid, "sort_index", nullptr, track.sort_index);
    }
  }

  void Common(const char* cat, std::string_view name, const EvRef& e) {
    out_.Raw(",\"cat\":\"").Raw(cat).Raw("\",\"name\":").String(name);
    out_.Raw(",\"pid\":").Uint(e.pid).Raw(",\"tid\":").Uint(e.tid);
    out_.Raw(",\"ts\":").Micros(e.ts - base_);
  }

  void Slice(const char* cat, std::string_view name, const EvRef& e) {
    Begin("X");
    Common(cat, name, e);
    out_.Raw(",\"dur\":").Micros(Dur(e.ts, e.end));
  }

  // Kineto's occupancy args (occupancy.h) for the device of the launch; none for an unknown device.
  void KernelOccupancy(JsonWriter& o, const LaunchConfig& lc) {
    const DeviceInfo* dev = nullptr;
    for (const DeviceInfo& d : p_.devices) {
      if (d.id == lc.device_id) dev = &d;
    }
    if (dev == nullptr) return;
    const std::optional<OccupancyEstimate> est = EstimateOccupancy(*dev, lc);
    if (!est) return;
    o.Raw(",\"blocks per SM\":").Fixed(est->blocks_per_sm, 2);
    o.Raw(",\"warps per SM\":").Fixed(est->warps_per_sm, 2);
    if (est->achieved_percent) {
      o.Raw(",\"est. achieved occupancy %\":").Uint(*est->achieved_percent);
    }
  }

  void WriteEvent(const EvRef& e) {
    JsonWriter& o = out_;
    switch (e.kind) {
      case Ev::kStep: {
        Slice("user_annotation", TracePlan::StepName(p_.steps[e.index].number), e);
        o.Char('}');
        break;
      }
      case Ev::kRange: {
        const HostRange& r = p_.ranges[e.index];
        Slice("user_annotation", p_.strings.Get(r.name), e);
        RangeArgs(r.domain, r.category, r.flags);
        o.Char('}');
        break;
      }
      case Ev::kMark: {
        const HostMark& m = p_.marks[e.index];
        Begin("i");
        Common("user_annotation", p_.strings.Get(m.name), e);
        o.Raw(",\"s\":\"t\"");
        RangeArgs(m.domain, m.category, 0);
        o.Char('}');
        break;
      }
      case Ev::kApi: {
        if (WriteApiFast(e)) break;
        const ApiCall& c = p_.api_calls[e.index];
        Slice(c.domain == ApiDomain::kDriver ? "cuda_driver" : "cuda_runtime", names_.ApiCallName(c), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(c.correlation_id);
        o.Raw(",\"cbid\":").Uint(c.cbid).Raw("}}");
        break;
      }
      case Ev::kKernel: {
        if (WriteKernelFast(e)) break;
        const Kernel& k = p_.kernels[e.index];
        static const LaunchConfig kNone{};
        const LaunchConfig& lc =
            k.launch_config < p_.launch_configs.size() ? p_.launch_configs[k.launch_config] : kNone;
        Slice("kernel", names_.KernelName(k.name), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(k.correlation_id);
        o.Raw(",\"External id\":").Uint(k.correlation_id);
        o.Raw(",\"device\":").Uint(lc.device_id).Raw(",\"context\":").Uint(lc.context_id);
        o.Raw(",\"stream\":").Uint(k.stream_id);
        o.Raw(",\"registers per thread\":").Uint(lc.registers_per_thread);
        o.Raw(",\"shared memory\":").Uint(uint64_t{lc.static_shared_bytes} + lc.dynamic_shared_bytes);
        KernelOccupancy(o, lc);
        o.Raw(",\"grid\":[").Uint(lc.grid[0]).Char(',').Uint(lc.grid[1]).Char(',').Uint(lc.grid[2]);
        o.Raw("],\"block\":[").Uint(lc.block[0]).Char(',').Uint(lc.block[1]).Char(',').Uint(lc.block[2]);
        o.Raw("]}}");
        break;
      }
      case Ev::kMemcpy: {
        const Memcpy& m = p_.memcpys[e.index];
        Slice("gpu_memcpy", MemcpyName(m), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(m.correlation_id);
        o.Raw(",\"External id\":").Uint(m.correlation_id);
        o.Raw(",\"device\":").Uint(m.device_id).Raw(",\"context\":").Uint(m.context_id);
        o.Raw(",\"stream\":").Uint(m.stream_id).Raw(",\"bytes\":").Uint(m.bytes);
        const uint64_t d = Dur(m.start_ns, m.end_ns);
        // bytes per ns == GB/s
        o.Raw(",\"memory bandwidth (GB/s)\":").Fixed(d ? static_cast<double>(m.bytes) / d : 0, 3);
        o.Raw("}}");
        break;
      }
      case Ev::kMemset: {
        const Memset& m = p_.memsets[e.index];
        Slice("gpu_memset", MemsetName(m), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(m.correlation_id);
        o.Raw(",\"External id\":").Uint(m.correlation_id);
        o.Raw(",\"device\":").Uint(m.device_id).Raw(",\"stream\":").Uint(m.stream_id);
        o.Raw(",\"bytes\":").Uint(m.bytes);
        const uint64_t d = Dur(m.start_ns, m.end_ns);
        o.Raw(",\"memory bandwidth (GB/s)\":").Fixed(d ? static_cast<double>(m.bytes) / d : 0, 3);
        o.Raw("}}");
        break;
      }
      case Ev::kSync: {
        const Sync& s = p_.syncs[e.index];
        Slice("cuda_sync", SyncName(s.kind), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(s.correlation_id);
        o.Raw(",\"context\":").Uint(s.context_id);
        if (s.stream_id != kNoStream) o.Raw(",\"stream\":").Uint(s.stream_id);
        o.Raw("}}");
        break;
      }
      case Ev::kOverhead: {
        Slice("overhead", OverheadName(p_.overheads[e.index].kind), e);
        o.Char('}');
        break;
      }
      case Ev::kAnnotation: {
        const GpuAnnotation& a = plan_.annotations()[e.index];
        if (a.from_step) {
          Slice("gpu_user_annotation", TracePlan::StepName(p_.steps[a.name_source].number), e);
        } else {
          Slice("gpu_user_annotation", p_.strings.Get(p_.ranges[a.name_source].name), e);
        }
        o.Raw(",\"args\":{\"device\":").Uint(e.pid).Raw("}}");
        break;
      }
      case Ev::kMemory: {
        Begin("C");
        Common("gpu_memory", TracePlan::MemoryCounterName(e.pid), e);
        o.Raw(",\"args\":{\"bytes\":").Uint(plan_.MemoryInUse(e.index)).Raw("}}");
        break;
      }
      case Ev::kFlowStart:
      case Ev::kFlowEnd: {
        WriteFlowFast(e);  // fixed-size: always fits the reserved region
        break;
      }
    }
  }

  // ---- fast paths: same bytes as the checked code above, one reserved region per event ----

  char* BeginAt(char* p, char ph) {
    p = PutRaw(p, count_++ ? ",\n{\"ph\":\"" : "{\"ph\":\"");
    *p++ = ph;
    *p++ = '"';
    return p;
  }

  char* CommonAt(char* p, std::string_view cat_and_name, const EvRef& e) {
    p = PutRaw(p, cat_and_name);
    p = PutRaw(p, ",\"pid\":");
    p = PutUint(p, e.pid);
    p = PutRaw(p, ",\"tid\":");
    p = PutUint(p, e.tid);
    p = PutRaw(p, ",\"ts\":");
    return PutMicros(p, e.ts - base_);
  }

  // ,"cat":"kernel","name":"<escaped name>"
  const std::string& KernelCatName(StringId name) {
    if (name >= kernel_json_.size()) kernel_json_.resize(name + 1u);
    std::string& s = kernel_json_[name];
    if (s.empty()) {
      s = ",\"cat\":\"kernel\",\"name\":";
      AppendJsonString(names_.KernelName(name), &s);
    }
    return s;
  }

  const KernelArgText& KernelArgs(uint32_t config) {
    if (config >= kernel_args_.size()) kernel_args_.resize(config + 1u);
    KernelArgText& t = kernel_args_[config];
    if (!t.tail.empty()) return t;
    static const LaunchConfig kNone{};
    const LaunchConfig& lc = config < p_.launch_configs.size() ? p_.launch_configs[config] : kNone;
    std::string& text = scratch_text_;
    JsonWriter& o = scratch_;
    text.clear();
    o.Raw(",\"device\":").Uint(lc.device_id).Raw(",\"context\":").Uint(lc.context_id);
    o.Flush();
    t.head = text;
    text.clear();
    o.Raw(",\"registers per thread\":").Uint(lc.registers_per_thread);
    o.Raw(",\"shared memory\":").Uint(uint64_t{lc.static_shared_bytes} + lc.dynamic_shared_bytes);
    KernelOccupancy(o, lc);
    o.Raw(",\"grid\":[").Uint(lc.grid[0]).Char(',').Uint(lc.grid[1]).Char(',').Uint(lc.grid[2]);
    o.Raw("],\"block\":[").Uint(lc.block[0]).Char(',').Uint(lc.block[1]).Char(',').Uint(lc.block[2]);
    o.Raw("]}}");
    o.Flush();
    t.tail = text;
    return t;
  }

  bool WriteKernelFast(const EvRef& e) {
    const Kernel& k = p_.kernels[e.index];
    const std::string& cat_name = KernelCatName(k.name);
    // Configs past the table take the checked path (it formats the empty configuration).
    if (k.launch_config >= p_.launch_configs.size()) return false;
    const KernelArgText& args = KernelArgs(k.launch_config);
    const size_t need = kEventSlack + cat_name.size() + args.head.size() + args.tail.size();
    if (need > kFastPathLimit) return false;
    char* p = BeginAt(out_.Reserve(need), 'X');
    p = CommonAt(p, cat_name, e);
    p = PutRaw(p, ",\"dur\":");
    p = PutMicros(p, Dur(e.ts, e.end));
    p = PutRaw(p, ",\"args\":{\"correlation\":");
    p = PutUint(p, k.correlation_id);
    p = PutRaw(p, ",\"External id\":");
    p = PutUint(p, k.correlation_id);
    p = PutRaw(p, args.head);
    p = PutRaw(p, ",\"stream\":");
    p = PutUint(p, k.stream_id);
    p = PutRaw(p, args.tail);
    out_.Commit(p);
    return true;
  }

  // ,"cat":"cuda_runtime","name":"<escaped name>"
  const std::string& ApiCatName(const ApiCall& c) {
    const uint32_t key = static_cast<uint32_t>(c.domain) << 16 | c.cbid;
    if (last_api_ != nullptr && key == last_api_key_) return *last_api_;
    std::string& s = api_json_[key];
    if (s.empty()) {
      s = c.domain == ApiDomain::kDriver ? ",\"cat\":\"cuda_driver\",\"name\":"
                                         : ",\"cat\":\"cuda_runtime\",\"name\":";
      AppendJsonString(names_.ApiCallName(c), &s);
    }
    last_api_key_ = key;
    last_api_ = &s;
    return s;
  }

  bool WriteApiFast(const EvRef& e) {
    const ApiCall& c = p_.api_calls[e.index];
    const std::string& cat_name = ApiCatName(c);
    const size_t need = kEventSlack + cat_name.size();
    if (need > kFastPathLimit) return false;
    char* p = BeginAt(out_.Reserve(need), 'X');
    p = CommonAt(p, cat_name, e);
    p = PutRaw(p, ",\"dur\":");
    p = PutMicros(p, Dur(e.ts, e.end));
    p = PutRaw(p, ",\"args\":{\"correlation\":");
    p = PutUint(p, c.correlation_id);
    p = PutRaw(p, ",\"cbid\":");
    p = PutUint(p, c.cbid);
    p = PutRaw(p, "}}");
    out_.Commit(p);
    return true;
  }

  void WriteFlowFast(const EvRef& e) {
    const bool start = e.kind == Ev::kFlowStart;
    char* p = BeginAt(out_.Reserve(kEventSlack), start ? 's' : 'f');
    p = PutRaw(p, ",\"id\":");
    p = PutUint(p, e.index);
    p = CommonAt(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"", e);
    p = PutRaw(p, start ? "}" : ",\"bp\":\"e\"}");
    out_.Commit(p);
  }

  void RangeArgs(uint16_t domain, uint32_t category, uint16_t flags) {
    const std::string_view dom =
        domain < p_.domains.size() ? p_.strings.Get(p_.domains[domain]) : std::string_view();
    bool any = false;
    const auto key = [&](const char* k) {
      out_.Raw(any ? ",\"" : ",\"args\":{\"").Raw(k).Raw("\":");
      any = true;
    };
    if (!dom.empty()) { key("domain"); out_.String(dom); }
    if (category != 0) { key("category"); out_.Uint(category); }
    if (flags & kRangeStartEnd) { key("start/end range"); out_.Raw("true"); }
    if (flags & kRangeOpenAtEnd) { key("open at end"); out_.Raw("true"); }
    if (any) out_.Char('}');
  }

 private:
  const TracePlan plan_;
  const Profile& p_;
  NameCache names_;
  JsonWriter& out_;
  std::string trace_name_;
  const uint64_t base_;
  uint64_t count_ = 0;
  std::vector<std::string> kernel_json_;      // by StringId
  std::vector<KernelArgText> kernel_args_;    // by launch config
  std::unordered_map<uint32_t, std::string> api_json_;  // (domain << 16 | cbid)
  uint32_t last_api_key_ = 0;
  const std::string* last_api_ = nullptr;
  std::string scratch_text_;  // what scratch_ formats (kernel args, once per configuration)
  JsonWriter scratch_{JsonSink{&scratch_text_, [](void* ctx, const char* data, size_t size) {
                                 static_cast<std::string*>(ctx)->append(data, size);
                               }}};
};

}  // namespace

TraceStats WriteTraceJson(const Profile& profile, const std::string& path) {
  JsonWriter out(path);
  const size_t slash = path.find_last_of('/');
  TraceWriter w(profile, &out, slash == std::string::npos ? path : path.substr(slash + 1));
  return w.Write();
}

TraceStats FormatTraceJson(const Profile& profile, const std::string& trace_name, JsonSink sink) {
  JsonWriter out(sink);
  TraceWriter w(profile, &out, trace_name);
  return w.Write();
}

std::string FormatTraceJson(const Profile& profile, const std::string& trace_name) {
  std::string text;
  FormatTraceJson(profile, trace_name, JsonSink{&text, [](void* ctx, const char* data, size_t size) {
                                                  static_cast<std::string*>(ctx)->append(data, size);
                                                }});
  return text;
}

}  // namespace gprof
