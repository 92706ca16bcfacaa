// The trace output: a Profile as Kineto-flavoured Chrome trace JSON (REFERENCE.md §3, §4),
// from its TracePlan (analysis/timeline/trace_plan.h). WriteTraceJson streams to a file (the
// product path); FormatTraceJson is its in-memory form (launcher process and benchmarks only),
// same bytes as WriteTraceJson, whose `traceName` is the file's base name; there the caller names
// the trace. May throw; callers (the launcher) catch in main.
#pragma once

#include <cstdint>
#include <string>

#include "model/profile.h"
#include "text/json_writer.h"

namespace gprof {

struct TraceStats {
  uint64_t events = 0;
  uint64_t bytes = 0;
};

// Streams the trace to `path` (never builds the whole document in memory), gzip-compressed when
// `path` ends in .gz (TraceStats::bytes is then the compressed size). Deterministic: same
// profile, same bytes. Throws std::runtime_error on I/O errors.
TraceStats WriteTraceJson(const Profile& profile, const std::string& path);
// The same, with sampled Python stacks as python_function slices on tracks of their own
// (analysis/samples/python_slices.h); `python` may be nullptr.
struct PythonSliceSet;
TraceStats WriteTraceJson(const Profile& profile, const std::string& path,
                          const PythonSliceSet* python);
// The same, with --cpu-sampling's samples as cpu_sample instants on their threads
// (cpu_sample_events.h); `cpu` may be nullptr.
struct CpuSampleNames;
TraceStats WriteTraceJson(const Profile& profile, const std::string& path,
                          const PythonSliceSet* python, const CpuSampleNames* cpu);

// Formats the trace into `sink` in chunks of at most 1 MiB (TraceStats::bytes counts them all);
// `cpu`: --cpu-sampling's samples named, or nullptr.
TraceStats FormatTraceJson(const Profile& profile, const std::string& trace_name, JsonSink sink,
                           const CpuSampleNames* cpu = nullptr);

// The whole document as one string (tests, small profiles); `python`: sampled Python stacks to
// add (python_slices.h).
std::string FormatTraceJson(const Profile& profile, const std::string& trace_name,
                            const PythonSliceSet* python = nullptr,
                            const CpuSampleNames* cpu = nullptr);

}  // namespace gprof
