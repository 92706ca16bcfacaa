// WritePerfettoTrace (see perfetto_writer.h): the first packet, flows, sampled Python stacks,
// native stacks and interned names; the events are perfetto_events.cpp, the CPU samples
// perfetto_cpu_samples.cpp.
#include "outputs/perfetto/perfetto_trace.h"
#include "outputs/perfetto/perfetto_writer.h"

namespace gprof::perfetto {

void PerfettoWriter::WriteFirstPacket() {
  const size_t packet = packets_.Begin(kIncrementalStateCleared);
  const size_t interned = enc_.BeginNested(f::kInternedData);
  for (uint8_t c = 0; c < kCategoryCount; ++c) {
    packets_.InternedEntry(f::kEventCategories, Iid(static_cast<Category>(c)), kCategoryNames[c]);
  }
  for (uint8_t a = 0; a < kArgCount; ++a) {
    packets_.InternedEntry(f::kDebugAnnotationNames, Iid(static_cast<ArgName>(a)), kArgNames[a]);
  }
  enc_.EndNested(interned);
  packets_.End(packet);
}

void PerfettoWriter::MarkFlows() {
  api_flow_.assign(p_.api_calls.size(), false);
  for (auto& v : gpu_flow_) v.clear();
  gpu_flow_[0].assign(p_.kernels.size(), false);
  gpu_flow_[1].assign(p_.memcpys.size(), false);
  gpu_flow_[2].assign(p_.memsets.size(), false);
  for (const PlannedFlow& fl : plan_.flows()) {
    api_flow_[fl.api_index] = true;
    gpu_flow_[static_cast<int>(fl.gpu_kind)][fl.gpu_index] = true;
  }
}

void PerfettoWriter::OrderPythonSlices() {
  const uint64_t base = plan_.base_ns();
  for (uint32_t i = 0; i < python_->slices.size(); ++i) {
    if (PythonSliceShown(*python_, python_->slices[i], base)) python_order_.push_back(i);
  }
  std::stable_sort(python_order_.begin(), python_order_.end(), [&](uint32_t a, uint32_t b) {
    return python_->slices[a].ts < python_->slices[b].ts;
  });
}

void PerfettoWriter::WritePythonSlicesUpTo(uint64_t ts) {
  if (python_ == nullptr) return;
  const uint32_t host = p_.info.pid;
  while (next_python_ < python_order_.size() &&
         python_->slices[python_order_[next_python_]].ts <= ts) {
    const PythonSlice& s = python_->slices[python_order_[next_python_++]];
    CloseSlicesUpTo(s.ts);
    const uint64_t track = tracks_.TrackUuid(host, python_tid_ + s.track);
    const uint64_t name = NameIid(python_->names[s.name]);
    const size_t packet = BeginEventPacket(s.ts);
    const size_t ev = enc_.BeginNested(f::kTrackEvent);
    enc_.AddVarint(f::kType, kSliceBegin);
    enc_.AddVarint(f::kTrackUuid, track);
    enc_.AddVarint(f::kCategoryIids, Iid(kCatPythonFunction));
    enc_.AddVarint(f::kNameIid, name);
    UintArg(kArgPythonId, s.id);
    if (s.parent != 0) UintArg(kArgPythonParentId, s.parent);
    UintArg(kArgPythonThread, s.track);
    BoolArg(kArgSampled, true);
    UintArg(kArgSamples, s.samples);
    enc_.EndNested(ev);
    packets_.End(packet);
    open_.push({std::max(s.ts, s.end), seq_++, track});
  }
}

void PerfettoWriter::PrepareStacks() {
  if (p_.api_stacks.empty()) return;
  if (stacks_ == nullptr) {
    own_stacks_ = SymbolizeStacks(p_);
    stacks_ = &own_stacks_;
  }
  stack_args_.resize(stacks_->frames.size());
}

const std::string& PerfettoWriter::StackArg(uint32_t index) {
  std::string& s = stack_args_[index];
  if (!s.empty()) return s;
  ProtoEncoder e;
  const size_t a = e.BeginNested(f::kDebugAnnotations);
  e.AddVarint(f::kAnnotationNameIid, Iid(kArgStack));
  const size_t n = e.BeginNested(f::kNestedValue);
  e.AddVarint(f::kNestedType, kNestedArray);
  for (const std::string& frame : stacks_->frames[index]) {
    const size_t v = e.BeginNested(f::kArrayValues);
    e.AddBytes(f::kNestedStringValue, RepairUtf8(frame));
    e.EndNested(v);
  }
  e.EndNested(n);
  e.EndNested(a);
  s = std::string(e.view());
  return s;
}

uint64_t PerfettoWriter::NameIid(std::string_view name) {
  auto [it, added] = name_iids_.try_emplace(std::string(name), 0);
  if (added) {
    it->second = next_name_iid_++;
    new_names_.push_back(it->second);
    new_name_text_.push_back(RepairUtf8(name));
  }
  return it->second;
}

uint64_t PerfettoWriter::KernelIid(StringId name) {
  if (name >= kernel_iid_.size()) kernel_iid_.resize(name + 1u, 0);
  uint64_t& iid = kernel_iid_[name];
  if (iid == 0) iid = NameIid(names_.KernelName(name));
  return iid;
}

uint64_t PerfettoWriter::RangeIid(StringId name) {
  if (name >= range_iid_.size()) range_iid_.resize(name + 1u, 0);
  uint64_t& iid = range_iid_[name];
  if (iid == 0) iid = NameIid(p_.strings.Get(name));
  return iid;
}

uint64_t PerfettoWriter::ApiIid(const ApiCall& c) {
  const uint32_t key = static_cast<uint32_t>(c.domain) << 16 | c.cbid;
  if (key == last_api_key_ && last_api_iid_ != 0) return last_api_iid_;
  uint64_t& iid = api_iid_[key];
  if (iid == 0) iid = NameIid(names_.ApiCallName(c));
  last_api_key_ = key;
  last_api_iid_ = iid;
  return iid;
}

}  // namespace gprof::perfetto


namespace gprof {

TraceStats WritePerfettoTrace(const Profile& profile, const std::string& path) {
  return WritePerfettoTrace(profile, path, nullptr, nullptr);
}

TraceStats WritePerfettoTrace(const Profile& profile, const std::string& path,
                              const PythonSliceSet* python, const SymbolizedStacks* stacks,
                              const CpuSampleNames* cpu) {
  JsonWriter out(path);
  perfetto::PerfettoWriter w(profile, &out, python, stacks, cpu);
  return w.Write();
}

void SegmentedPerfettoTrace::Add(const Profile& segment, const CpuSampleNames* cpu,
                                 const PythonSliceSet* python) {
  perfetto::PerfettoWriter w(segment, &out_, python, nullptr, cpu);
  w.SetPythonFirstTid(kSegmentedPythonFirstTid);
  packets_ += w.Write(/*close=*/false).events;
}

TraceStats SegmentedPerfettoTrace::Close() {
  TraceStats stats;
  stats.events = packets_;
  stats.bytes = out_.Close();
  return stats;
}

TraceStats FormatPerfettoTrace(const Profile& profile, JsonSink sink) {
  JsonWriter out(sink);
  perfetto::PerfettoWriter w(profile, &out, nullptr, nullptr);
  return w.Write();
}

std::string FormatPerfettoTrace(const Profile& profile) {
  return FormatPerfettoTrace(profile, nullptr, nullptr);
}

std::string FormatPerfettoTrace(const Profile& profile, const PythonSliceSet* python,
                                const SymbolizedStacks* stacks, const CpuSampleNames* cpu) {
  std::string bytes;
  {
    JsonWriter out(JsonSink{&bytes, [](void* ctx, const char* data, size_t size) {
                              static_cast<std::string*>(ctx)->append(data, size);
                            }});
    perfetto::PerfettoWriter w(profile, &out, python, stacks, cpu);
    w.Write();
  }
  return bytes;
}

}  // namespace gprof
