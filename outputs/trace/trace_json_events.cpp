// TraceEventWriter (see trace_json_events.h): the traceEvents entries of the trace JSON, in
// Kineto's shapes (REFERENCE.md §3, §4).
//
// Speed (bench/trace_export_bench.cpp, 1 M launches): names, API names and the
// launch-configuration part of kernel args are escaped/formatted once per distinct value and
// copied; the numbers of kernels, API calls and flows go into one reserved region per event
// without per-field bounds checks.
#include "outputs/trace/trace_json_events.h"

#include "analysis/attribution/occupancy.h"
#include "text/format.h"

namespace gprof {
namespace {

using Ev = TraceEventKind;

uint64_t Dur(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

// Upper bound of the fixed text of one reserved region: keys, punctuation and a few numbers of
// at most 24 characters each (a kernel's region adds its KernelArgText sizes).
constexpr size_t kEventSlack = 512;

void AppendToString(void* ctx, const char* data, size_t size) {
  static_cast<std::string*>(ctx)->append(data, size);
}

}  // namespace

TraceEventWriter::TraceEventWriter(const TracePlan& plan, JsonWriter* out)
    : TraceEventWriter(plan, out, TracePlacement{plan.base_ns(), 0, 0}, 0) {}

TraceEventWriter::TraceEventWriter(const TracePlan& plan, JsonWriter* out,
                                   const TracePlacement& placement, uint64_t entries_before)
    : plan_(plan), p_(plan.profile()), names_(plan.profile()), out_(*out), placement_(placement),
      host_pid_(plan.profile().info.pid), base_(placement.origin_ns), count_(entries_before),
      kernel_args_(plan.profile().launch_configs.size() + 1),
      scratch_(JsonSink{&scratch_text_, AppendToString}),
      fwdbwd_(FwdBwdLinks(plan.profile())) {
  api_flow_.assign(p_.api_calls.size(), 0);
  gpu_flow_[0].assign(p_.kernels.size(), 0);
  gpu_flow_[1].assign(p_.memcpys.size(), 0);
  gpu_flow_[2].assign(p_.memsets.size(), 0);
  for (const PlannedFlow& fl : plan.flows()) {
    api_flow_[fl.api_index] = fl.correlation_id;
    const auto kind = static_cast<size_t>(fl.gpu_kind);
    if (kind < gpu_flow_.size()) gpu_flow_[kind][fl.gpu_index] = fl.correlation_id;
  }
}

void TraceEventWriter::DropFlowsOfCallsIn(size_t written) {
  std::vector<bool> call_written(p_.api_calls.size(), false);
  const std::vector<PlannedEvent>& events = plan_.events();
  for (size_t i = 0; i < written && i < events.size(); ++i) {
    if (events[i].kind == TraceEventKind::kApi) call_written[events[i].index] = true;
  }
  for (const PlannedFlow& fl : plan_.flows()) {
    const auto kind = static_cast<size_t>(fl.gpu_kind);
    if (call_written[fl.api_index] && kind < gpu_flow_.size()) gpu_flow_[kind][fl.gpu_index] = 0;
  }
}

uint32_t TraceEventWriter::GpuFlow(GpuKind kind, uint32_t index) const {
  return gpu_flow_[static_cast<size_t>(kind)][index];
}

// ---- shared pieces, through the JsonWriter -------------------------------------------------

void TraceEventWriter::Begin(const char* ph) {
  out_.Raw(count_++ ? ",\n{\"ph\":\"" : "{\"ph\":\"").Raw(ph).Raw("\"");
}

void TraceEventWriter::Meta(const char* name, uint32_t pid, const uint32_t* tid, const char* arg,
                            const std::string* text, uint64_t number) {
  Begin("M");
  out_.Raw(",\"name\":\"").Raw(name).Raw("\",\"pid\":").Uint(Pid(pid));
  if (tid) out_.Raw(",\"tid\":").Uint(*tid);
  out_.Raw(",\"args\":{\"").Raw(arg).Raw("\":");
  if (text) out_.String(*text);
  else out_.Uint(number);
  out_.Raw("}}");
}

void TraceEventWriter::WriteProcess(const TraceProcess& proc) {
  Meta("process_name", proc.pid, nullptr, "name", &proc.name, 0);
  Meta("process_labels", proc.pid, nullptr, "labels", &proc.labels, 0);
  Meta("process_sort_index", proc.pid, nullptr, "sort_index", nullptr, proc.sort_index);
}

void TraceEventWriter::WriteTrack(const TraceTrack& track) {
  Meta("thread_name", track.pid, &track.tid, "name", &track.name, 0);
  Meta("thread_sort_index", track.pid, &track.tid, "sort_index", nullptr, track.sort_index);
}

void TraceEventWriter::Common(const char* cat, std::string_view name, const PlannedEvent& e) {
  out_.Raw(",\"cat\":\"").Raw(cat).Raw("\",\"name\":").String(name);
  out_.Raw(",\"pid\":").Uint(Pid(e.pid)).Raw(",\"tid\":").Uint(e.tid);
  out_.Raw(",\"ts\":").Micros(e.ts - base_);
}

void TraceEventWriter::Slice(const char* cat, std::string_view name, const PlannedEvent& e) {
  Begin("X");
  Common(cat, name, e);
  out_.Raw(",\"dur\":").Micros(Dur(e.ts, e.end));
}

// True for torch's printed shapes ("[[2, 3], []]"): digits, brackets, commas and spaces only,
// which is a JSON array as it stands. Anything else is written as a string.
static bool IsShapeList(std::string_view s) {
  if (s.empty() || s.front() != '[') return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '[' || c == ']' || c == ',' || c == ' ' || c == '-'))
      return false;
  }
  return true;
}

void TraceEventWriter::RangeArgs(uint16_t domain, uint32_t category, uint16_t flags,
                                 const HostRange* torch, const FwdBwdEnd* link) {
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
  if (flags & kRangeCutAtWindowEnd) { key("cut at window end"); out_.Raw("true"); }
  if (torch != nullptr && (torch->flags & kRangeTorch)) {
    // Kineto's arg names for a cpu_op / user_annotation from RecordFunction.
    if (torch->op_id != 0) { key("Record function id"); out_.Uint(torch->op_id); }
    if (torch->seq >= 0) { key("Sequence number"); out_.Uint(static_cast<uint64_t>(torch->seq)); }
    if (link != nullptr) { key("Fwd thread id"); out_.Uint(link->fwd_tid); }
    if (torch->shapes != kNoString) {
      const std::string_view shapes = p_.strings.Get(torch->shapes);
      key("Input Dims");
      if (IsShapeList(shapes)) out_.Raw(shapes);
      else out_.String(shapes);
    }
  }
  if (any) out_.Char('}');
}

// ---- hot pieces: reserved regions and once-per-value text ------------------------------------

char* TraceEventWriter::BeginAt(char* p, char ph) {
  p = PutRaw(p, count_++ ? ",\n{\"ph\":\"" : "{\"ph\":\"");
  *p++ = ph;
  *p++ = '"';
  return p;
}

char* TraceEventWriter::PidTidTsAt(char* p, const PlannedEvent& e) {
  p = PutRaw(p, ",\"pid\":");
  p = PutUint(p, Pid(e.pid));
  p = PutRaw(p, ",\"tid\":");
  p = PutUint(p, e.tid);
  p = PutRaw(p, ",\"ts\":");
  return PutMicros(p, e.ts - base_);
}

// {"ph":"<ph>" and the pre-escaped ,"cat":...,"name":... (any size), then `room` bytes for the
// rest of the event; the caller fills them and commits.
char* TraceEventWriter::BeginNamed(char ph, std::string_view cat_and_name, size_t room) {
  out_.Commit(BeginAt(out_.Reserve(kEventSlack), ph));
  out_.Raw(cat_and_name);
  return out_.Reserve(room);
}

// ,"cat":"cuda_runtime","name":"<escaped name>"
const std::string& TraceEventWriter::ApiCatName(const ApiCall& c) {
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

// ,"cat":"kernel","name":"<escaped name>"
const std::string& TraceEventWriter::KernelCatName(StringId name) {
  if (name >= kernel_json_.size()) kernel_json_.resize(name + 1u);
  std::string& s = kernel_json_[name];
  if (s.empty()) {
    s = ",\"cat\":\"kernel\",\"name\":";
    AppendJsonString(names_.KernelName(name), &s);
  }
  return s;
}

// Kineto's occupancy args (occupancy.h) for the device of the launch; none for an unknown device.
void TraceEventWriter::AppendOccupancy(JsonWriter& o, const LaunchConfig& lc) {
  const DeviceInfo* dev = nullptr;
  for (const DeviceInfo& d : p_.devices) {
    if (d.id == lc.device_id) dev = &d;
  }
  if (dev == nullptr) return;
  const std::optional<OccupancyEstimate> est = EstimateOccupancy(*dev, lc);
  if (!est) return;
  o.Raw(",\"blocks per SM\":").Decimal(est->blocks_per_sm, 2);
  if (est->achieved_percent) {
    o.Raw(",\"est. achieved occupancy %\":").Uint(*est->achieved_percent);
  }
}

const TraceEventWriter::KernelArgText& TraceEventWriter::KernelArgs(uint32_t config) {
  static const LaunchConfig kNone{};
  const bool known = config < p_.launch_configs.size();
  // A configuration past the table (a damaged dump) is formatted as the empty one.
  KernelArgText& t = kernel_args_[known ? config : p_.launch_configs.size()];
  if (!t.tail.empty()) return t;
  const LaunchConfig& lc = known ? p_.launch_configs[config] : kNone;
  std::string& text = scratch_text_;
  JsonWriter& o = scratch_;
  text.clear();
  o.Raw(",\"device\":").Uint(lc.device_id);
  o.Flush();
  t.head = text;
  text.clear();
  o.Raw(",\"registers per thread\":").Uint(lc.registers_per_thread);
  o.Raw(",\"shared memory\":").Uint(uint64_t{lc.static_shared_bytes} + lc.dynamic_shared_bytes);
  AppendOccupancy(o, lc);
  o.Raw(",\"grid\":[").Uint(lc.grid[0]).Char(',').Uint(lc.grid[1]).Char(',').Uint(lc.grid[2]);
  o.Raw("],\"block\":[").Uint(lc.block[0]).Char(',').Uint(lc.block[1]).Char(',').Uint(lc.block[2]);
  o.Raw("]}}");
  o.Flush();
  t.tail = text;
  return t;
}

void TraceEventWriter::WriteApi(const PlannedEvent& e) {
  const ApiCall& c = p_.api_calls[e.index];
  char* p = BeginNamed('X', ApiCatName(c), kEventSlack);
  p = PidTidTsAt(p, e);
  p = PutRaw(p, ",\"dur\":");
  p = PutMicros(p, Dur(e.ts, e.end));
  p = BindAt(p, api_flow_[e.index], true);
  p = PutRaw(p, ",\"args\":{\"correlation\":");
  p = PutUint(p, c.correlation_id);
  const std::string* stack = plan_.ApiStackJson(c.correlation_id);
  const std::string* python_line = nullptr;
  if (api_python_lines_ != nullptr) {
    if (auto it = api_python_lines_->find(e.index); it != api_python_lines_->end()) {
      python_line = &it->second;
    }
  }
  if (stack == nullptr && python_line == nullptr) {
    p = PutRaw(p, "}}");
    out_.Commit(p);
    return;
  }
  out_.Commit(p);
  // Unbounded text, so after the reserved region. The sampled Python line (python_sync.h):
  if (python_line != nullptr) {
    out_.Raw(",\"python_line\":").String(*python_line);
    out_.Raw(",\"python_line_source\":\"sampled\"");
    if (api_python_stacks_ != nullptr) {
      if (auto it = api_python_stacks_->find(e.index); it != api_python_stacks_->end()) {
        out_.Raw(",\"python_stack\":").Raw(it->second);
      }
    }
  }
  // GPROF_BACKTRACE: the call's native stack.
  if (stack != nullptr) out_.Raw(",\"stack\":").Raw(*stack);
  out_.Raw("}}");
}

void TraceEventWriter::WriteKernel(const PlannedEvent& e) {
  const Kernel& k = p_.kernels[e.index];
  const KernelArgText& args = KernelArgs(k.launch_config);
  char* p = BeginNamed('X', KernelCatName(k.name),
                       kEventSlack + args.head.size() + args.tail.size());
  p = PidTidTsAt(p, e);
  p = PutRaw(p, ",\"dur\":");
  p = PutMicros(p, Dur(e.ts, e.end));
  p = BindAt(p, GpuFlow(GpuKind::kKernel, e.index), false);
  p = PutRaw(p, ",\"args\":{\"correlation\":");
  p = PutUint(p, k.correlation_id);
  p = PutRaw(p, ",\"External id\":");
  p = PutUint(p, k.correlation_id);
  p = PutRaw(p, args.head);
  p = PutRaw(p, ",\"stream\":");
  p = PutUint(p, k.stream_id);
  p = PutRaw(p, args.tail);
  out_.Commit(p);
}

// ac2g flows are written on their two slices (flow v2): Perfetto's JSON importer binds a
// flow_out to the slice itself and a flow_in to it too (json_trace_parser.cc MaybeAddFlow), the
// trace viewer likewise for 'X' events with bind_id (processCompleteEvent, createFlowSlices_).
char* TraceEventWriter::BindAt(char* p, uint32_t correlation, bool out) {
  if (correlation == 0) return p;
  p = PutRaw(p, ",\"bind_id\":");
  p = PutUint(p, kAc2gBindIdBase + placement_.flow_id_base + correlation);
  return PutRaw(p, out ? ",\"flow_out\":true" : ",\"flow_in\":true");
}

void TraceEventWriter::WriteBind(uint32_t correlation, bool out) {
  if (correlation == 0) return;
  out_.Raw(",\"bind_id\":").Uint(kAc2gBindIdBase + placement_.flow_id_base + correlation);
  out_.Raw(out ? ",\"flow_out\":true" : ",\"flow_in\":true");
}

// Kineto's fwdbwd flow end on a torch op, at the op's start (fwdbwd_links.h). Its ids are apart
// from the ac2g flows' (correlation ids), which trace checkers match by id alone.
void TraceEventWriter::WriteFwdBwdFlow(const PlannedEvent& e, const FwdBwdEnd& end) {
  Begin(end.forward ? "s" : "f");
  out_.Raw(",\"id\":").Uint(kFwdBwdFlowIdBase + placement_.flow_id_base + end.flow);
  Common("fwdbwd", "fwdbwd", e);
  out_.Raw(end.forward ? "}" : ",\"bp\":\"e\"}");
}

// ---- one entry per planned event ------------------------------------------------------------

void TraceEventWriter::Write(const PlannedEvent& e) {
  JsonWriter& o = out_;
  switch (e.kind) {
    case Ev::kStep: {
      Slice("user_annotation", TracePlan::StepName(p_.steps[e.index].number), e);
      o.Char('}');
      break;
    }
    case Ev::kRange: {
      const HostRange& r = p_.ranges[e.index];
      Slice((r.flags & kRangeCpuOp) ? "cpu_op" : "user_annotation", p_.strings.Get(r.name), e);
      const auto link = fwdbwd_.empty() ? fwdbwd_.end() : fwdbwd_.find(e.index);
      const FwdBwdEnd* end = link == fwdbwd_.end() ? nullptr : &link->second;
      RangeArgs(r.domain, r.category, r.flags, &r, end);
      o.Char('}');
      if (end != nullptr) WriteFwdBwdFlow(e, *end);
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
    case Ev::kApi:
      WriteApi(e);
      break;
    case Ev::kKernel:
      WriteKernel(e);
      break;
    case Ev::kMemcpy: {
      const Memcpy& m = p_.memcpys[e.index];
      Slice("gpu_memcpy", MemcpyName(m), e);
      WriteBind(GpuFlow(GpuKind::kMemcpy, e.index), false);
      o.Raw(",\"args\":{\"correlation\":").Uint(m.correlation_id);
      o.Raw(",\"External id\":").Uint(m.correlation_id);
      o.Raw(",\"device\":").Uint(m.device_id).Raw(",\"stream\":").Uint(m.stream_id);
      o.Raw(",\"bytes\":").Uint(m.bytes);
      const uint64_t d = Dur(m.start_ns, m.end_ns);
      // bytes per ns == GB/s
      o.Raw(",\"memory bandwidth (GB/s)\":").Decimal(d ? static_cast<double>(m.bytes) / d : 0, 3);
      o.Raw("}}");
      break;
    }
    case Ev::kMemset: {
      const Memset& m = p_.memsets[e.index];
      Slice("gpu_memset", MemsetName(m), e);
      WriteBind(GpuFlow(GpuKind::kMemset, e.index), false);
      o.Raw(",\"args\":{\"correlation\":").Uint(m.correlation_id);
      o.Raw(",\"External id\":").Uint(m.correlation_id);
      o.Raw(",\"device\":").Uint(m.device_id).Raw(",\"stream\":").Uint(m.stream_id);
      o.Raw(",\"bytes\":").Uint(m.bytes);
      const uint64_t d = Dur(m.start_ns, m.end_ns);
      o.Raw(",\"memory bandwidth (GB/s)\":").Decimal(d ? static_cast<double>(m.bytes) / d : 0, 3);
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
      Common("gpu_memory", TracePlan::MemoryCounterName(e.pid, plan_.MemoryIsTorch(e.index)), e);
      o.Raw(",\"args\":{\"bytes\":").Uint(plan_.MemoryInUse(e.index)).Raw("}}");
      break;
    }
    case Ev::kMemoryPeak: {
      Begin("i");
      Common("gpu_memory", plan_.MemoryPeakName(e.index), e);
      o.Raw(",\"s\":\"t\",\"args\":{\"bytes\":").Uint(plan_.MemoryInUse(e.index)).Raw("}}");
      break;
    }
  }
}

}  // namespace gprof
