// The Perfetto trace's events (see perfetto_writer.h): slices, their args, flows and ends.
#include "outputs/perfetto/perfetto_writer.h"

namespace gprof::perfetto {

size_t PerfettoWriter::BeginEventPacket(uint64_t ts) {
  const size_t packet = packets_.Begin(kNeedsIncrementalState);
  enc_.AddVarint(f::kTimestamp, ts);
  if (!new_names_.empty()) {
    const size_t interned = enc_.BeginNested(f::kInternedData);
    for (size_t i = 0; i < new_names_.size(); ++i) {
      packets_.InternedEntry(f::kEventNames, new_names_[i], new_name_text_[i]);
    }
    enc_.EndNested(interned);
    new_names_.clear();
    new_name_text_.clear();
  }
  return packet;
}

void PerfettoWriter::UintArg(ArgName name, uint64_t v) {
  const size_t m = enc_.BeginNested(f::kDebugAnnotations);
  enc_.AddVarint(f::kAnnotationNameIid, Iid(name));
  enc_.AddVarint(f::kUintValue, v);
  enc_.EndNested(m);
}

void PerfettoWriter::StringArg(ArgName name, std::string_view v) {
  const size_t m = enc_.BeginNested(f::kDebugAnnotations);
  enc_.AddVarint(f::kAnnotationNameIid, Iid(name));
  enc_.AddBytes(f::kStringValue, RepairUtf8(v));
  enc_.EndNested(m);
}

void PerfettoWriter::BoolArg(ArgName name, bool v) {
  const size_t m = enc_.BeginNested(f::kDebugAnnotations);
  enc_.AddVarint(f::kAnnotationNameIid, Iid(name));
  enc_.AddBool(f::kBoolValue, v);
  enc_.EndNested(m);
}

const std::string& PerfettoWriter::LaunchArgs(uint32_t config) {
  static const LaunchConfig kNone{};
  const bool known = config < p_.launch_configs.size();
  std::string& s = launch_args_[known ? config : p_.launch_configs.size()];
  if (!s.empty()) return s;
  const LaunchConfig& lc = known ? p_.launch_configs[config] : kNone;
  ProtoEncoder e;
  for (const auto& [name, xyz] : {std::pair{kArgGrid, lc.grid}, std::pair{kArgBlock, lc.block}}) {
    const size_t a = e.BeginNested(f::kDebugAnnotations);
    e.AddVarint(f::kAnnotationNameIid, Iid(name));
    const size_t n = e.BeginNested(f::kNestedValue);
    e.AddVarint(f::kNestedType, kNestedArray);
    for (int i = 0; i < 3; ++i) {
      const size_t v = e.BeginNested(f::kArrayValues);
      e.AddInt(f::kNestedIntValue, xyz[i]);
      e.EndNested(v);
    }
    e.EndNested(n);
    e.EndNested(a);
  }
  s = std::string(e.view());
  return s;
}

void PerfettoWriter::RangeArgs(uint16_t domain, uint32_t category, uint16_t flags) {
  const std::string_view dom =
      domain < p_.domains.size() ? p_.strings.Get(p_.domains[domain]) : std::string_view();
  if (!dom.empty()) StringArg(kArgDomain, dom);
  if (category != 0) UintArg(kArgCategory, category);
  if (flags & kRangeOpenAtEnd) BoolArg(kArgOpenAtEnd, true);
  if (flags & kRangeCutAtWindowEnd) BoolArg(kArgCutAtWindowEnd, true);
}

void PerfettoWriter::TorchArgs(const HostRange& r) {
  if (!(r.flags & kRangeTorch)) return;
  if (r.op_id != 0) UintArg(kArgRecordFunctionId, r.op_id);
  if (r.seq >= 0) UintArg(kArgSequenceNumber, static_cast<uint64_t>(r.seq));
  if (r.shapes != kNoString) StringArg(kArgInputDims, p_.strings.Get(r.shapes));
}

void PerfettoWriter::CloseSlicesUpTo(uint64_t ts) {
  while (!open_.empty() && open_.top().end <= ts) {
    const OpenSlice s = open_.top();
    open_.pop();
    const size_t packet = BeginEventPacket(s.end);
    const size_t ev = enc_.BeginNested(f::kTrackEvent);
    enc_.AddVarint(f::kType, kSliceEnd);
    enc_.AddVarint(f::kTrackUuid, s.track);
    enc_.EndNested(ev);
    packets_.End(packet);
  }
}

PerfettoWriter::Open PerfettoWriter::BeginEvent(const PlannedEvent& e, EventType type, Category cat,
                                                uint64_t name_iid) {
  Open o;
  o.track = tracks_.TrackUuid(e);
  o.packet = BeginEventPacket(e.ts);
  o.event = enc_.BeginNested(f::kTrackEvent);
  enc_.AddVarint(f::kType, type);
  enc_.AddVarint(f::kTrackUuid, o.track);
  enc_.AddVarint(f::kCategoryIids, Iid(cat));
  enc_.AddVarint(f::kNameIid, name_iid);
  return o;
}

void PerfettoWriter::EndEvent(const Open& o, const PlannedEvent& e, EventType type) {
  enc_.EndNested(o.event);
  packets_.End(o.packet);
  if (type == kSliceBegin) open_.push({std::max(e.ts, e.end), seq_++, o.track});
}

void PerfettoWriter::WriteEvent(const PlannedEvent& e) {
  using K = TraceEventKind;
  CloseSlicesUpTo(e.ts);
  switch (e.kind) {
    case K::kStep: {
      const Open o = BeginEvent(e, kSliceBegin, kCatUserAnnotation,
                                NameIid(TracePlan::StepName(p_.steps[e.index].number)));
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kRange: {
      const HostRange& r = p_.ranges[e.index];
      const Open o = BeginEvent(e, kSliceBegin,
                                (r.flags & kRangeCpuOp) ? kCatCpuOp : kCatUserAnnotation,
                                RangeIid(r.name));
      RangeArgs(r.domain, r.category, r.flags);
      TorchArgs(r);
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kMark: {
      const HostMark& m = p_.marks[e.index];
      const Open o = BeginEvent(e, kInstant, kCatUserAnnotation, RangeIid(m.name));
      RangeArgs(m.domain, m.category, 0);
      EndEvent(o, e, kInstant);
      break;
    }
    case K::kApi: {
      const ApiCall& c = p_.api_calls[e.index];
      const Open o = BeginEvent(e, kSliceBegin,
                                c.domain == ApiDomain::kDriver ? kCatCudaDriver : kCatCudaRuntime,
                                ApiIid(c));
      UintArg(kArgCorrelation, c.correlation_id);
      if (!stack_args_.empty()) {
        const uint32_t stack = stack_index_.StackOf(c.correlation_id);
        if (stack < stack_args_.size()) enc_.AppendRaw(StackArg(stack));
      }
      if (api_flow_[e.index]) enc_.AddFixed64(f::kFlowIds, c.correlation_id);
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kKernel: {
      const Kernel& k = p_.kernels[e.index];
      const Open o = BeginEvent(e, kSliceBegin, kCatKernel, KernelIid(k.name));
      UintArg(kArgCorrelation, k.correlation_id);
      UintArg(kArgStream, k.stream_id);
      enc_.AppendRaw(LaunchArgs(k.launch_config));
      if (gpu_flow_[0][e.index]) enc_.AddFixed64(f::kTerminatingFlowIds, k.correlation_id);
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kMemcpy: {
      const Memcpy& m = p_.memcpys[e.index];
      const Open o = BeginEvent(e, kSliceBegin, kCatMemcpy, NameIid(MemcpyName(m)));
      UintArg(kArgCorrelation, m.correlation_id);
      UintArg(kArgStream, m.stream_id);
      UintArg(kArgBytes, m.bytes);
      if (gpu_flow_[1][e.index]) enc_.AddFixed64(f::kTerminatingFlowIds, m.correlation_id);
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kMemset: {
      const Memset& m = p_.memsets[e.index];
      const Open o = BeginEvent(e, kSliceBegin, kCatMemset, NameIid(MemsetName(m)));
      UintArg(kArgCorrelation, m.correlation_id);
      UintArg(kArgStream, m.stream_id);
      UintArg(kArgBytes, m.bytes);
      if (gpu_flow_[2][e.index]) enc_.AddFixed64(f::kTerminatingFlowIds, m.correlation_id);
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kSync: {
      const Sync& s = p_.syncs[e.index];
      const Open o = BeginEvent(e, kSliceBegin, kCatSync, NameIid(SyncName(s.kind)));
      UintArg(kArgCorrelation, s.correlation_id);
      if (s.stream_id != kNoStream) UintArg(kArgStream, s.stream_id);
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kOverhead: {
      const Open o = BeginEvent(e, kSliceBegin, kCatOverhead,
                                NameIid(OverheadName(p_.overheads[e.index].kind)));
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kAnnotation: {
      const GpuAnnotation& a = plan_.annotations()[e.index];
      const uint64_t iid = a.from_step ? NameIid(plan_.AnnotationName(a))
                                       : RangeIid(p_.ranges[a.name_source].name);
      const Open o = BeginEvent(e, kSliceBegin, kCatGpuUserAnnotation, iid);
      EndEvent(o, e, kSliceBegin);
      break;
    }
    case K::kMemory: {
      const size_t packet = BeginEventPacket(e.ts);
      const size_t ev = enc_.BeginNested(f::kTrackEvent);
      enc_.AddVarint(f::kType, kCounterEvent);
      enc_.AddVarint(f::kTrackUuid, tracks_.CounterUuid(e.pid, plan_.MemoryIsTorch(e.index)));
      enc_.AddInt(f::kCounterValue, static_cast<int64_t>(plan_.MemoryInUse(e.index)));
      enc_.EndNested(ev);
      packets_.End(packet);
      break;
    }
    case K::kMemoryPeak: {
      const uint64_t bytes = plan_.MemoryInUse(e.index);
      const Open o = BeginEvent(e, kInstant, kCatGpuMemory, NameIid(plan_.MemoryPeakName(e.index)));
      UintArg(kArgBytes, bytes);
      EndEvent(o, e, kInstant);
      break;
    }
  }
}

}  // namespace gprof::perfetto
