// Traces that still open (--max-trace-mb): a JSON trace larger than a cap is written as parts cut
// by time, each a complete trace of its own (same process, threads, devices and names), named
// trace.part1.json, trace.part2.json, ... (the ".partN" goes before ".json"). Every event is in
// exactly one part: host ranges, marks, API calls, steps and --cpu-sampling's samples in the part
// where they start (are taken), GPU records
// in the part of the API call that launched them (so a launch and its kernel, and the flow arrow
// between them, stay together), records without a call where they start. A range that starts in
// one part keeps its whole duration there. The cap counts uncompressed JSON bytes (what a viewer
// loads), for .json.gz parts too. Launcher process only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gprof {

struct PythonSliceSet;

// `p` cut into `parts` profiles of about equal event counts (at least one event each where
// there are enough events).
std::vector<Profile> SliceProfileByTime(const Profile& p, size_t parts);

// "trace.json" -> "trace.part3.json", "x.trace.json.gz" -> "x.trace.part3.json.gz".
std::string TracePartPath(const std::string& path, size_t part);

// Writes the JSON trace of `p` to `path` (gzip when it ends in .gz) or, when it would exceed
// `max_bytes` (0: no cap), as parts of at most `max_bytes` each (a single event larger than the
// cap gets a part of its own). Returns the files written, in time order. Throws
// std::runtime_error on I/O errors. `python` (sampled Python stacks, python_slices.h) goes into
// a trace written whole; parts cut by time do not have them yet. `cpu` (--cpu-sampling's samples
// named, cpu_sample_events.h; may be nullptr) goes into both: each part has the samples taken in
// its time, and they count towards the cap.
struct CpuSampleNames;
std::vector<std::string> WriteTraceJsonCapped(const Profile& p, const std::string& path,
                                              uint64_t max_bytes,
                                              const PythonSliceSet* python = nullptr,
                                              const CpuSampleNames* cpu = nullptr);

}  // namespace gprof
