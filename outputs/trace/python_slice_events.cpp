// Python slices -> their trace JSON entries (python_slice_events.h). Launcher process only.
#include "outputs/trace/python_slice_events.h"

#include <string>
#include <vector>

#include "analysis/timeline/trace_plan.h"
#include "outputs/trace/trace_json_events.h"
#include "text/json_writer.h"

namespace gprof {

uint32_t PythonFirstTid(const TracePlan& plan) {
  const uint32_t host = plan.profile().info.pid;
  uint32_t next = kFirstSyntheticTid;
  for (const TraceTrack& t : plan.Tracks()) {
    if (t.pid == host && t.tid >= next && t.tid != UINT32_MAX) next = t.tid + 1;
  }
  return next;
}

std::vector<TraceTrack> PythonTraceTracks(const PythonSliceSet& set, const TracePlan& plan,
                                          uint32_t first_tid) {
  const uint32_t host = plan.profile().info.pid;
  std::vector<TraceTrack> out;
  out.reserve(set.tracks.size());
  for (size_t i = 0; i < set.tracks.size(); ++i) {
    const PythonTrack& t = set.tracks[i];
    std::string name = t.os_tid != 0 ? plan.ThreadName(t.os_tid)
                                     : "Python thread " + std::to_string(t.ident);
    if (!t.thread_name.empty() && t.thread_name != name) name = t.thread_name + " (" + name + ")";
    name += ": Python stacks, sampled at " + std::to_string(set.hz) + " Hz";
    const uint32_t sort = t.os_tid != 0 ? std::min<uint32_t>(t.os_tid, 0x7fffffff) : 0x7fffffff;
    out.push_back({host, first_tid + static_cast<uint32_t>(i), std::move(name), sort});
  }
  return out;
}

void WritePythonTracks(const PythonSliceSet& set, const TracePlan& plan, uint32_t first_tid,
                       TraceEventWriter* events) {
  for (const TraceTrack& t : PythonTraceTracks(set, plan, first_tid)) events->WriteTrack(t);
}

void WritePythonSlices(const PythonSliceSet& set, const TracePlan& plan, uint32_t first_tid,
                       TraceEventWriter* events, JsonWriter* out) {
  WritePythonSlices(set, plan, first_tid, TracePlacement{plan.base_ns(), 0, 0}, events, out);
}

void WritePythonSlices(const PythonSliceSet& set, const TracePlan& plan, uint32_t first_tid,
                       const TracePlacement& placement, TraceEventWriter* events,
                       JsonWriter* out) {
  const uint32_t host = placement.pid_base != 0 ? placement.pid_base : plan.profile().info.pid;
  const uint64_t base = plan.base_ns();
  const uint64_t origin = std::min(placement.origin_ns, base);
  for (const PythonSlice& s : set.slices) {
    if (!PythonSliceShown(set, s, base)) continue;
    events->Begin("X");
    out->Raw(",\"cat\":\"python_function\",\"name\":").String(set.names[s.name]);
    out->Raw(",\"pid\":").Uint(host).Raw(",\"tid\":").Uint(first_tid + s.track);
    out->Raw(",\"ts\":").Micros(s.ts - origin).Raw(",\"dur\":").Micros(s.end - s.ts);
    out->Raw(",\"args\":{\"Python id\":").Uint(s.id);
    if (s.parent != 0) out->Raw(",\"Python parent id\":").Uint(s.parent);
    out->Raw(",\"Python thread\":").Uint(s.track).Raw(",\"sampled\":true,\"samples\":");
    out->Uint(s.samples).Raw("}}");
  }
}

}  // namespace gprof
