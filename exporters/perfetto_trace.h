// In-memory form of the Perfetto protobuf trace writer (exporters.h WritePerfettoTrace streams to
// a file, the product path). Tests and benchmarks. Same bytes as WritePerfettoTrace.
#pragma once

#include <string>

#include "exporters/exporters.h"
#include "exporters/json_writer.h"

namespace gprof {

// Encodes the trace into `sink` in chunks of at most 1 MiB (TraceStats::bytes counts them all).
TraceStats FormatPerfettoTrace(const Profile& profile, JsonSink sink);

// The whole trace as one byte string (tests, small profiles).
std::string FormatPerfettoTrace(const Profile& profile);
// With sampled Python stacks and symbolized native stacks (exporters.h WritePerfettoTrace).
std::string FormatPerfettoTrace(const Profile& profile, const PythonSliceSet* python,
                                const SymbolizedStacks* stacks = nullptr);

}  // namespace gprof
