// The merged trace (see merged_trace.h): its document and metadata; the events are
// merged_stream.cpp's (trace_json_events' TraceEventWriter, the same formatting as a one-profile
// trace.json, placed with TracePlacement).
#include "outputs/trace/merged_trace.h"

#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "outputs/trace/merged_stream.h"

namespace gprof {
namespace {

void WriteInputMetadata(JsonWriter& o, const MergeInput& in, uint64_t origin, size_t k) {
  const ProfileInfo& i = in.info;
  o.Raw("\n    {\"label\": ").String(MergeInputLabel(in));
  o.Raw(", \"rank\": ").Int(i.rank).Raw(", \"world_size\": ").Int(i.world_size);
  o.Raw(", \"hostname\": ").String(i.hostname).Raw(", \"pid\": ").Uint(i.pid);
  o.Raw(", \"program\": ").String(i.program).Raw(", \"file\": ").String(in.file);
  o.Raw(", \"start_ns\": ").Uint(i.start_ns).Raw(", \"base_ns\": ").Uint(in.origin_ns);
  o.Raw(", \"offset_ns\": ").Uint(AlignedNs(in.origin_ns, in.clock.offset_ns) - origin);
  o.Raw(", \"clock\": {\"method\": ").String(ClockMethodName(in.clock.method));
  o.Raw(", \"offset_ns\": ").Int(in.clock.offset_ns);
  if (in.clock.instances > 0) {
    o.Raw(", \"collectives\": ").Uint(in.clock.instances);
    o.Raw(", \"residual_ns\": ").Uint(in.clock.residual_ns);
  }
  if (in.clock.method == ClockMethod::kClockPairs && in.clock.instances > 0) {
    o.Raw(", \"collectives_offset_ns\": ").Int(in.clock.collectives_offset_ns);
  }
  o.Raw(", \"boot_id\": ").String(i.placement.boot_id);
  if (i.placement.ntp.known) {
    o.Raw(", \"ntp_synchronized\": ").Raw((i.placement.ntp.status & 0x40) ? "false" : "true");
    o.Raw(", \"ntp_maxerror_us\": ").Int(i.placement.ntp.maxerror_us);
  }
  o.Raw("}");
  if (i.placement.local_rank >= 0) o.Raw(", \"local_rank\": ").Int(i.placement.local_rank);
  if (i.placement.node_rank >= 0) o.Raw(", \"node_rank\": ").Int(i.placement.node_rank);
  o.Raw(", \"trace_pid\": ").Uint(kMergePidStride * (k + 1));
  o.Raw(", \"cycle\": ").Uint(i.cycle).Raw(", \"first_step\": ").Uint(i.first_step);
  o.Raw(", \"last_step\": ").Uint(i.last_step);
  o.Raw(", \"partial\": ").Raw(i.partial_window ? "true" : "false");
  o.Raw(", \"python_samples\": ").Uint(in.python_samples);
  if (in.python_samples > 0) o.Raw(", \"python_hz\": ").Uint(in.python_hz);
  o.Raw(", \"counters\": {");
  const char* sep = "";
  ForEachCounter(in.counters, [&](const char* name, uint64_t value, const char*) {
    o.Raw(sep).Raw("\"").Raw(name).Raw("\": ").Uint(value);
    sep = ", ";
  });
  o.Raw("}}");
}

void WriteHeader(JsonWriter& o, const std::vector<MergeInput>& inputs, uint64_t origin,
                 const std::string& left_out) {
  o.Raw("{\n  \"schemaVersion\": 1,\n  \"displayTimeUnit\": \"ms\",\n");
  o.Raw("  \"baseTimeNanoseconds\": ").Uint(origin).Raw(",\n");
  o.Raw("  \"gprof\": {\"merged\": true, \"clock\": ").String(kMergeClockNote);
  const ClockSpread spread = MergeClockSpread(inputs);
  o.Raw(", \"clock_spread\": {\"collective\": ").String(spread.name);
  o.Raw(", \"instances\": ").Uint(spread.instances);
  o.Raw(", \"median_ns\": ").Uint(spread.median_ns).Raw(", \"max_ns\": ").Uint(spread.max_ns);
  o.Raw("}");
  if (!left_out.empty()) o.Raw(", \"left_out\": ").String(left_out);
  std::set<std::string> hosts;
  for (const MergeInput& in : inputs) hosts.insert(in.info.hostname);
  o.Raw(", \"hosts\": [");
  const char* sep = "";
  for (const std::string& h : hosts) {
    o.Raw(sep).String(h);
    sep = ", ";
  }
  o.Raw("],\n   \"inputs\": [");
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (k) o.Char(',');
    WriteInputMetadata(o, inputs[k], origin, k);
  }
  o.Raw("]},\n");
}

}  // namespace

const char* const kMergeClockNote =
    "Each input's times are its host's CLOCK_REALTIME plus its clock.offset_ns, the offset that "
    "lines its clock up with the first input's: the median difference of the ends of the "
    "collectives both took part in (the k-th instance of each), or, on the same host and boot, "
    "the CLOCK_REALTIME - CLOCK_MONOTONIC pairs recorded at start (method clock_pairs), or none "
    "(method none: as recorded, only as aligned as the hosts' NTP/PTP synchronization). Times "
    "start at the earliest aligned start (baseTimeNanoseconds); clock_spread is how far apart "
    "the aligned ends of one collective still are.";

namespace {

TraceStats Finish(JsonWriter* out, const std::string& trace_name, uint64_t entries) {
  out->Raw("\n  ],\n  \"traceName\": ");
  out->String(trace_name);
  out->Raw("\n}\n");
  TraceStats stats;
  stats.events = entries;
  stats.bytes = out->Close();
  return stats;
}

// One whole profile, loaded on the first Next.
class WholeProfile : public MergeSegments {
 public:
  WholeProfile(const MergeLoader& load, size_t k) : load_(load), k_(k) {}
  const Profile* Next() override {
    if (loaded_) return nullptr;
    loaded_ = true;
    load_(k_, &profile_);
    return &profile_;
  }

 private:
  const MergeLoader& load_;
  const size_t k_;
  bool loaded_ = false;
  Profile profile_;
};

}  // namespace

TraceStats WriteMergedTrace(const std::vector<MergeInput>& inputs, const MergeSource& source,
                            const std::string& trace_name, JsonSink sink,
                            const MergePythonLoader& python, const MergedTraceContent& content) {
  JsonWriter out(sink);
  const uint64_t origin = MergedOriginNs(inputs);
  WriteHeader(out, inputs, origin, content.left_out);
  out.Raw("  \"traceEvents\": [\n");
  uint64_t entries = 0;
  if (content.summary) {
    entries += merged_trace_detail::WriteSummaryProcesses(inputs, origin, entries, &out);
  }
  entries += merged_trace_detail::WriteInputsInTimeOrder(inputs, origin, content.full, source,
                                                         python, entries, &out);
  return Finish(&out, trace_name, entries);
}

TraceStats WriteMergedTrace(const std::vector<MergeInput>& inputs, const MergeLoader& load,
                            const std::string& trace_name, JsonSink sink,
                            const MergePythonLoader& python) {
  const MergeSource whole = [&load](size_t k) -> std::unique_ptr<MergeSegments> {
    return std::make_unique<WholeProfile>(load, k);
  };
  JsonWriter out(sink);
  const uint64_t origin = MergedOriginNs(inputs);
  WriteHeader(out, inputs, origin, "");
  out.Raw("  \"traceEvents\": [\n");
  uint64_t entries = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {  // one input in memory at a time
    std::vector<bool> only(inputs.size(), false);
    only[k] = true;
    entries += merged_trace_detail::WriteInputsInTimeOrder(inputs, origin, only, whole, python,
                                                           entries, &out);
  }
  return Finish(&out, trace_name, entries);
}

}  // namespace gprof
