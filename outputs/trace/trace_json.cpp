// WriteTraceJson: the Kineto-flavoured Chrome trace (REFERENCE.md §3, §4), launcher process only.
// This file writes the document: the header (deviceProperties, distributedInfo,
// baseTimeNanoseconds, the "gprof" block with the loss counters), the process and thread
// metadata events, the traceEvents array and the trace name. The entries of the array come from
// TraceEventWriter (trace_json_events.h).
//
// Plan, then stream: the TracePlan (trace_plan.h, shared with the Perfetto writer) lists events as
// small fixed-size references placed on lanes and sorted; they are then formatted one by one with
// hand-written code into a buffered file (or a caller's memory sink). The document itself is never
// held in memory.
//
// Tracks are the plan's: host events on pid = OS pid, tid = OS tid; GPU work on pid = device,
// tid = stream (as Kineto, so HTA finds args.stream > 0); overflow and extra tracks on synthetic
// tids from 0x80000000 up, named after the track they belong to.
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/samples/python_slices.h"
#include "analysis/tables/stats.h"
#include "analysis/tables/stats_memory.h"
#include "analysis/timeline/trace_plan.h"
#include "outputs/trace/gzip_file.h"
#include "outputs/trace/python_slice_events.h"
#include "outputs/trace/trace_json.h"
#include "outputs/trace/cpu_sample_events.h"
#include "outputs/trace/trace_json_events.h"
#include "text/json_writer.h"

namespace gprof {
namespace {

class TraceWriter {
 public:
  // `python`: sampled Python stacks to add (python_slices.h), or nullptr.
  TraceWriter(const Profile& p, JsonWriter* out, std::string trace_name,
              const PythonSliceSet* python = nullptr, const CpuSampleNames* cpu = nullptr)
      : plan_(p), p_(p), out_(*out), events_(plan_, out), trace_name_(std::move(trace_name)),
        python_(python), cpu_(cpu), python_tid_(python != nullptr ? PythonFirstTid(plan_) : 0) {
    if (python != nullptr && !python->api_python_lines.empty()) {
      events_.SetApiPythonLines(&python->api_python_lines, &python->api_python_stacks);
    }
  }

  TraceStats Write() {
    WriteHeader();
    out_.Raw("  \"traceEvents\": [\n");
    WriteMetadata();
    for (const PlannedEvent& e : plan_.events()) events_.Write(e);
    // After the plan's events: Perfetto's importer sorts (REFERENCE.md §4).
    if (python_ != nullptr) WritePythonSlices(*python_, plan_, python_tid_, &events_, &out_);
    if (cpu_ != nullptr) WriteCpuSampleEvents(*cpu_, plan_, &events_, &out_);
    out_.Raw("\n  ],\n  \"traceName\": ");
    out_.String(trace_name_);
    out_.Raw("\n}\n");
    TraceStats stats;
    stats.events = events_.count();
    stats.bytes = out_.Close();
    return stats;
  }

 private:
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
    o.Raw("  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ").Uint(plan_.base_ns());
    o.Raw(",\n");
    const ProfileInfo& i = p_.info;
    const Counters& c = p_.counters;
    o.Raw("  \"gprof\": {\"program\": ").String(i.program);
    o.Raw(", \"command_line\": ").String(i.command_line);
    o.Raw(", \"pid\": ").Uint(i.pid).Raw(", \"parent_pid\": ").Uint(i.parent_pid);
    o.Raw(", \"hostname\": ").String(i.hostname);
    o.Raw(", \"rank\": ").Int(i.rank).Raw(", \"world_size\": ").Int(i.world_size);
    o.Raw(", \"start_ns\": ").Uint(i.start_ns).Raw(", \"end_ns\": ").Uint(i.end_ns);
    o.Raw(", \"cycle\": ").Uint(i.cycle).Raw(", \"first_step\": ").Uint(i.first_step);
    o.Raw(", \"last_step\": ").Uint(i.last_step);
    o.Raw(", \"partial\": ").Raw(i.partial_window ? "true" : "false");
    o.Raw(", \"gpu_status\": ").String(i.gpu_status);
    o.Raw(", \"cupti_library\": ").String(i.cupti_library);
    // The clock check at GPU start (ProfileInfo): CUPTI's clock against the host's.
    o.Raw(", \"cupti_clock\": {\"check\": \"")
        .Raw(i.cupti_clock_window_ns == 0 ? "not checked"
             : CuptiClockAgrees(i)        ? "agrees"
                                          : "differs")
        .Raw("\", \"offset_ns\": ")
        .Int(i.cupti_clock_offset_ns)
        .Raw(", \"window_ns\": ")
        .Uint(i.cupti_clock_window_ns)
        .Raw("}");
    if (!p_.memory_ops.empty()) WriteMemoryPeaks();
    o.Raw(",\n    \"counters\": {");
    const char* sep = "";
    ForEachCounter(c, [&](const char* name, uint64_t value, const char*) {
      o.Raw(sep).Raw("\"").Raw(name).Raw("\": ").Uint(value);
      sep = ", ";
    });
    o.Raw("}},\n");
  }

  // "memory": the device-memory peak of the profile and of each step (stats_memory.h), times
  // relative to the trace origin as the events'.
  void WriteMemoryPeaks() {
    JsonWriter& o = out_;
    std::vector<Step> found = ProfileSteps(p_);
    std::sort(found.begin(), found.end(), [](const Step& a, const Step& b) {
      return std::make_pair(a.number, a.start_ns) < std::make_pair(b.number, b.start_ns);
    });
    std::vector<std::tuple<uint32_t, uint64_t, uint64_t>> steps;
    for (const Step& s : found) steps.emplace_back(s.number, s.start_ns, s.end_ns);
    const MemoryPeaks m = DeviceMemoryPeaks(p_, steps);
    o.Raw(",\n    \"memory\": {\"peak_bytes\": ").Uint(m.peak_bytes);
    o.Raw(", \"peak_ts\": ").Micros(m.peak_ns > plan_.base_ns() ? m.peak_ns - plan_.base_ns() : 0);
    o.Raw(", \"steps\": [");
    for (size_t k = 0; k < m.steps.size(); ++k) {
      o.Raw(k ? ", " : "").Raw("{\"step\": ").Uint(m.steps[k].step);
      o.Raw(", \"peak_bytes\": ").Uint(m.steps[k].peak_bytes).Char('}');
    }
    o.Raw("]}");
  }

  void WriteMetadata() {
    for (const TraceProcess& proc : plan_.Processes()) events_.WriteProcess(proc);
    // Every (pid, tid) that carries events gets a name.
    for (const TraceTrack& track : plan_.Tracks()) events_.WriteTrack(track);
    if (python_ != nullptr) WritePythonTracks(*python_, plan_, python_tid_, &events_);
  }

  const TracePlan plan_;
  const Profile& p_;
  JsonWriter& out_;
  TraceEventWriter events_;  // after plan_: formats the planned events into out_
  std::string trace_name_;
  const PythonSliceSet* python_;
  const CpuSampleNames* cpu_;
  uint32_t python_tid_;  // the first python track's tid
};

}  // namespace

TraceStats WriteTraceJson(const Profile& profile, const std::string& path) {
  return WriteTraceJson(profile, path, nullptr);
}

TraceStats WriteTraceJson(const Profile& profile, const std::string& path,
                          const PythonSliceSet* python) {
  return WriteTraceJson(profile, path, python, nullptr);
}

TraceStats WriteTraceJson(const Profile& profile, const std::string& path,
                          const PythonSliceSet* python, const CpuSampleNames* cpu) {
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (IsGzipPath(path)) {
    GzipFile gz(path);
    JsonWriter out(gz.Sink());
    TraceWriter w(profile, &out, name, python, cpu);
    TraceStats stats = w.Write();
    stats.bytes = gz.Close();
    return stats;
  }
  JsonWriter out(path);
  TraceWriter w(profile, &out, name, python, cpu);
  return w.Write();
}

TraceStats FormatTraceJson(const Profile& profile, const std::string& trace_name, JsonSink sink,
                           const CpuSampleNames* cpu) {
  JsonWriter out(sink);
  TraceWriter w(profile, &out, trace_name, nullptr, cpu);
  return w.Write();
}

std::string FormatTraceJson(const Profile& profile, const std::string& trace_name,
                            const PythonSliceSet* python, const CpuSampleNames* cpu) {
  std::string text;
  JsonWriter out(JsonSink{&text, [](void* ctx, const char* data, size_t size) {
                            static_cast<std::string*>(ctx)->append(data, size);
                          }});
  TraceWriter w(profile, &out, trace_name, python, cpu);
  w.Write();
  return text;
}

}  // namespace gprof
