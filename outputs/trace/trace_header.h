// The trace JSON's header, the part before "traceEvents": deviceProperties, distributedInfo,
// baseTimeNanoseconds and the "gprof" block (identity, clock check, loss counters, and with
// `memory_peaks` the device-memory peaks of the profile's steps). Written for the whole profile
// by trace_json.cpp and, from the run's tables and counters, by the trace of a dump read segment
// by segment (segmented_trace.cpp), which has no memory peaks (they need every allocation).
// Launcher process only.
#pragma once

#include <cstdint>

#include "model/profile.h"
#include "text/json_writer.h"

namespace gprof {

void WriteTraceHeader(const Profile& profile, uint64_t base_ns, bool memory_peaks,
                      JsonWriter* out);

}  // namespace gprof
