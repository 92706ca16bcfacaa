// The merged trace of `gprof-run merge` and of the end of a multi-rank run: step 3 of the merge
// (analysis/ranks/merge.h), an output. Launcher process and benchmarks only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/ranks/merge.h"
#include "analysis/samples/python_slices.h"
#include "model/profile.h"
#include "outputs/trace/trace_json.h"
#include "text/json_writer.h"

namespace gprof {

// Pids in the merged trace: input k (in sorted order) gets host pid kMergePidStride * (k + 1)
// and its device d pid kMergePidStride * (k + 1) + 1 + d (OS pids and device ids repeat across
// processes and hosts; the process names carry the real ones). Its flow ids are its correlation
// ids plus k << 32 (correlation ids are 32-bit).
inline constexpr uint32_t kMergePidStride = 1000;

// What hosts' clocks mean for the merged times (written into the trace's metadata).
extern const char* const kMergeClockNote;

// Fills `profile` with input `inputs[index]`; throws std::runtime_error when it cannot.
using MergeLoader = std::function<void(size_t index, Profile* profile)>;
// The sampled Python stacks of input `index` as slices (PythonSlicesFrom over `profile`'s time
// range), or nullptr when it has none; called right after `load` filled `profile`.
using MergePythonLoader =
    std::function<std::unique_ptr<PythonSliceSet>(size_t index, const Profile& profile)>;

// Writes the merged trace of `inputs` (sorted with SortMergeInputs) into `sink`, loading each
// input through `load` once, in order. The document: baseTimeNanoseconds = the common origin, a
// "gprof" block listing the inputs (label, rank, host, pid, program, file, start and base time,
// trace pid, window, counters) with kMergeClockNote, then every input's process and track
// metadata and events. The host process of input k is named MergeInputLabel, its GPUs
// "<label> GPU d <name>"; process_sort_index keeps each input's processes together in rank
// order. With `python` (may be empty): each input's python_function slices on sampled tracks of
// its own host process, as in its own trace.json. Throws what `load` or the sink throws.
TraceStats WriteMergedTrace(const std::vector<MergeInput>& inputs, const MergeLoader& load,
                            const std::string& trace_name, JsonSink sink,
                            const MergePythonLoader& python = nullptr);

}  // namespace gprof
