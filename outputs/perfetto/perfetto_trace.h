// The Perfetto output: the trace output's trace (its TracePlan) as Perfetto protobuf (.pftrace,
// REFERENCE.md §5). WritePerfettoTrace streams to a file (the product path); FormatPerfettoTrace
// is its in-memory form (tests and benchmarks), same bytes as WritePerfettoTrace. May throw;
// callers (the launcher) catch in main.
#pragma once

#include <string>

#include "model/profile.h"
#include "outputs/trace/trace_json.h"
#include "text/json_writer.h"

namespace gprof {

struct PythonSliceSet;
// The same trace (same plan: tracks, lanes, flows, counters) as a Perfetto protobuf file with
// interned names, about a quarter of the JSON's size; Perfetto opens it natively. Streamed and
// deterministic like WriteTraceJson; TraceStats::events counts TracePackets. Throws
// std::runtime_error on I/O errors.
TraceStats WritePerfettoTrace(const Profile& profile, const std::string& path);
// The same with sampled Python stacks as python_function slices on tracks of their own (the JSON
// trace's, python_slices.h) and, for the API calls with a native stack (--backtrace), the stack
// as the slice's "stack" debug annotation. `python` may be nullptr; `stacks`: the profile's
// stacks symbolized (native_symbols.h SymbolizeStacks) by the caller, or nullptr to symbolize
// them here when the profile has any. `cpu` (may be nullptr): --cpu-sampling's samples named
// (cpu_samples.h NameCpuSamples), written as Perfetto's PerfSample packets with interned
// callstacks, on their threads.
struct SymbolizedStacks;
struct CpuSampleNames;
TraceStats WritePerfettoTrace(const Profile& profile, const std::string& path,
                              const PythonSliceSet* python, const SymbolizedStacks* stacks,
                              const CpuSampleNames* cpu = nullptr);

// Encodes the trace into `sink` in chunks of at most 1 MiB (TraceStats::bytes counts them all).
TraceStats FormatPerfettoTrace(const Profile& profile, JsonSink sink);

// The trace of a dump read segment by segment (launcher/render/segmented_render.h): each
// segment's plan written as WritePerfettoTrace writes a profile, one after another into one file
// (a Perfetto trace is a sequence of packets; every segment starts by clearing the incremental
// state and interns its names again; a track has the same uuid in every segment, and its
// descriptor comes again with it). Only one segment's plan is in memory. Throws
// std::runtime_error on I/O errors.
class SegmentedPerfettoTrace {
 public:
  explicit SegmentedPerfettoTrace(const std::string& path) : out_(path) {}
  // `cpu`: the segment's --cpu-sampling samples named, or nullptr. `python`: the run's sampled
  // Python stacks, given with the first segment only (on tids from kSegmentedPythonFirstTid).
  void Add(const Profile& segment, const CpuSampleNames* cpu = nullptr,
           const PythonSliceSet* python = nullptr);
  TraceStats Close();

 private:
  JsonWriter out_;
  uint64_t packets_ = 0;
};

// The whole trace as one byte string (tests, small profiles).
std::string FormatPerfettoTrace(const Profile& profile);
// With sampled Python stacks and symbolized native stacks (WritePerfettoTrace).
std::string FormatPerfettoTrace(const Profile& profile, const PythonSliceSet* python,
                                const SymbolizedStacks* stacks = nullptr,
                                const CpuSampleNames* cpu = nullptr);

}  // namespace gprof
