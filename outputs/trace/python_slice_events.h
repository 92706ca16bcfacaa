// Sampled Python stacks' slices (analysis/samples/python_slices.h) as trace events: their tracks
// and slices in the trace JSON, and the track layout the Perfetto and merged traces share.
// Launcher process only.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/samples/python_slices.h"

namespace gprof {

class JsonWriter;
class TraceEventWriter;
class TracePlan;
struct TracePlacement;
struct TraceTrack;

// The trace JSON part (trace_json.cpp calls these when a trace has samples): the tracks'
// thread_name / thread_sort_index entries, then every slice, on the plan's host pid.
// `first_tid`: the first synthetic tid free in the plan (PythonFirstTid).
uint32_t PythonFirstTid(const TracePlan& plan);
// The Python tracks' first tid in a trace written segment by segment (segmented_trace.h), where
// each segment's plan has lanes of its own: far above the synthetic lanes (0x80000000 up).
inline constexpr uint32_t kSegmentedPythonFirstTid = 0xC0000000u;
// The tracks of `set`, one per PythonSliceSet::tracks entry in its order, on the plan's host pid
// with tids first_tid, first_tid + 1, ...: name "<thread>: Python stacks, sampled at HZ Hz" and
// the sort index of the sampled thread (so that a stable sort puts each beside its thread).
std::vector<TraceTrack> PythonTraceTracks(const PythonSliceSet& set, const TracePlan& plan,
                                          uint32_t first_tid);
void WritePythonTracks(const PythonSliceSet& set, const TracePlan& plan, uint32_t first_tid,
                       TraceEventWriter* events);
void WritePythonSlices(const PythonSliceSet& set, const TracePlan& plan, uint32_t first_tid,
                       TraceEventWriter* events, JsonWriter* out);
// The same, placed like the TraceEventWriter's events (a merged trace: merged_trace.h): pid
// placement.pid_base for the host when set, times relative to placement.origin_ns.
void WritePythonSlices(const PythonSliceSet& set, const TracePlan& plan, uint32_t first_tid,
                       const TracePlacement& placement, TraceEventWriter* events,
                       JsonWriter* out);

}  // namespace gprof
