// The merged trace's event part (merged_stream.cpp; see merged_trace.h): the summary processes
// and the inputs in full in time order. Used by merged_trace.cpp only.
#pragma once

#include <cstdint>
#include <vector>

#include "outputs/trace/merged_trace.h"

namespace gprof::merged_trace_detail {

// Each writes after `entries` entries of the traceEvents array and returns the entries written.
uint64_t WriteSummaryProcesses(const std::vector<MergeInput>& inputs, uint64_t origin,
                               uint64_t entries, JsonWriter* out);
uint64_t WriteInputsInTimeOrder(const std::vector<MergeInput>& inputs, uint64_t origin,
                                const std::vector<bool>& full, const MergeSource& source,
                                const MergePythonLoader& python, uint64_t entries,
                                JsonWriter* out);

}  // namespace gprof::merged_trace_detail
