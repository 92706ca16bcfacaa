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
#include "analysis/timeline/trace_plan.h"
#include "outputs/trace/gzip_file.h"
#include "outputs/trace/python_slice_events.h"
#include "outputs/trace/trace_header.h"
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
    WriteTraceHeader(p_, plan_.base_ns(), /*memory_peaks=*/true, &out_);
    out_.Raw("  \"traceEvents\": [\n");
    WriteMetadata();
    for (const PlannedEvent& e : plan_.events()) events_.Write(e);
    // After the plan's events: Perfetto's importer sorts (REFERENCE.md §4).
    if (python_ != nullptr) WritePythonSlices(*python_, plan_, python_tid_, &events_, &out_);
    if (cpu_ != nullptr) WriteCpuSampleEvents(*cpu_, plan_, plan_.base_ns(), &events_, &out_);
    out_.Raw("\n  ],\n  \"traceName\": ");
    out_.String(trace_name_);
    out_.Raw("\n}\n");
    TraceStats stats;
    stats.events = events_.count();
    stats.bytes = out_.Close();
    return stats;
  }

 private:
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
