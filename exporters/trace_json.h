// In-memory form of the trace writer (exporters.h WriteTraceJson streams to a file, the product
// path). Launcher process and benchmarks only. Same bytes as WriteTraceJson, whose `traceName` is
// the file's base name; here the caller names the trace.
#pragma once

#include <string>

#include "exporters/exporters.h"
#include "exporters/json_writer.h"

namespace gprof {

struct PythonSliceSet;

// Formats the trace into `sink` in chunks of at most 1 MiB (TraceStats::bytes counts them all).
TraceStats FormatTraceJson(const Profile& profile, const std::string& trace_name, JsonSink sink);

// The whole document as one string (tests, small profiles); `python`: sampled Python stacks to
// add (python_slices.h).
std::string FormatTraceJson(const Profile& profile, const std::string& trace_name,
                            const PythonSliceSet* python = nullptr);

}  // namespace gprof
