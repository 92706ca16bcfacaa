// Sampled Python stacks as trace slices (docs/PYTHON_SAMPLING.md): the samples of a .pysamples
// file (python_samples.h) inside a dump's time range become Kineto-style `python_function`
// slices, one track per sampled thread. Launcher process only.
//
// Merging: per thread, in time order, a slice at depth d goes on while each following sample
// has the same functions at depths 0..d (the same function at the same depth under the same
// callers; the current line does not matter). It spans its first sample to its last sample plus
// one period, cut at the next sample that ends it (so siblings never overlap) and at the end of
// the range. Slices on one track therefore nest by construction. Two consecutive calls of one
// function merge into one slice: sampling cannot tell them apart.
//
// Tracks: the samples are not exact like the thread's NVTX ranges and API calls, so they do not
// share the thread's track (the slices would partly overlap): each thread gets its own track
// "<thread>: Python stacks, sampled at HZ Hz" on the process's pid, with a synthetic tid above
// the plan's, sorted next to the thread. The JSON trace (trace_json.cpp), the Perfetto trace
// (perfetto_trace.cpp) and the merged trace (merged_trace.cpp) all take their tracks from
// PythonTraceTracks (outputs/trace/python_slice_events.h), so the three name and order them
// alike.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/samples/python_samples.h"

namespace gprof {

struct PythonSlice {
  uint64_t ts;
  uint64_t end;
  uint32_t track;     // into PythonSliceSet::tracks
  uint32_t depth;     // 0 = the root frame (<module> of the main thread)
  uint32_t name;      // into PythonSliceSet::names
  uint32_t samples;   // samples it spans
  uint32_t id;        // "Python id" (from 1, in slice order)
  uint32_t parent;    // "Python parent id" (0: a root)
};

struct PythonTrack {
  uint32_t os_tid;    // the thread's Linux tid, 0 when the sampler did not know it
  uint64_t ident;     // Python's thread ident (for an unknown tid)
  std::string thread_name;
};

struct PythonSliceSet {
  uint64_t period_ns = 0;
  uint32_t hz = 0;
  uint64_t samples_used = 0;     // samples inside the range
  uint64_t samples_outside = 0;  // samples of the file outside the range
  std::vector<PythonTrack> tracks;
  std::vector<std::string> names;  // Kineto's python_function names: "file(first_line): function"
  std::vector<PythonSlice> slices;  // by track, then start, parents before children
  // Not slices: the Python line python_sync.h attributed to each blocking CUDA call, by
  // Profile::api_calls index ("function (file:line)"), for its API event's args.python_line.
  std::unordered_map<uint32_t, std::string> api_python_lines;
  // And that sample's whole stack of the program's frames (op_stacks.h's rule: torch's and the
  // hook's own frames left out), innermost first, as a JSON array of "function (file:line)":
  // the API event's args.python_stack.
  std::unordered_map<uint32_t, std::string> api_python_stacks;
};

// The slices of the samples with from_ns <= ts <= to_ns.
PythonSliceSet PythonSlicesFrom(const PythonSamples& s, uint64_t from_ns, uint64_t to_ns);

// Slices before the plan's base_ns() are left out (they would have negative times); so are
// slices naming no name. Every writer applies this rule (outputs/trace/python_slice_events.h),
// so that the traces hold the same slices.
inline bool PythonSliceShown(const PythonSliceSet& set, const PythonSlice& s, uint64_t base_ns) {
  return s.ts >= base_ns && s.name < set.names.size();
}

}  // namespace gprof
