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

// One input's profile, segment by segment (model/dump_segment_reader.h): Next gives the next
// segment (its records, the run's tables), valid until the next call, nullptr after the last;
// throws std::runtime_error when it cannot.
class MergeSegments {
 public:
  virtual ~MergeSegments() = default;
  virtual const Profile* Next() = 0;
};
// The segments of input `index`, opened when the trace needs them.
using MergeSource = std::function<std::unique_ptr<MergeSegments>(size_t index)>;
// Fills `profile` with input `inputs[index]` whole (one segment); throws std::runtime_error when
// it cannot.
using MergeLoader = std::function<void(size_t index, Profile* profile)>;
// The sampled Python stacks of input `index` as slices (PythonSlicesFrom over `profile`'s time
// range), or nullptr when it has none; called with the input's first segment.
using MergePythonLoader =
    std::function<std::unique_ptr<PythonSliceSet>(size_t index, const Profile& profile)>;

// What the merged trace holds of each input (launcher/merged_view.h chooses: the trace's size
// policy, docs/LAUNCHER.md).
struct MergedTraceContent {
  // By input: its events in full. Empty: every input in full.
  std::vector<bool> full;
  // A summary process per input, "<label> summary" (pid kMergePidStride * (k + 1) +
  // kMergeSummaryPid), listed first: one slice per step (ProfilerStep#N, on the aligned clock,
  // args gpu_busy_us and before_collective_us), or one "run" slice without steps.
  bool summary = false;
  // Written in the "gprof" block as "left_out" (what is not in full, and how to get it).
  std::string left_out;
};
inline constexpr uint32_t kMergeSummaryPid = kMergePidStride - 1;

// Writes the merged trace of `inputs` (sorted with SortMergeInputs) into `sink`. The document:
// baseTimeNanoseconds = the common origin, a "gprof" block listing the inputs (label, rank,
// host, pid, program, file, start and base time, trace pid, window, counters) with
// kMergeClockNote, then the summary processes, then the events of the inputs in full in time
// order across inputs: every input's segments are read at once, one segment each at a time (the
// memory: inputs x one segment), and the input whose next event is earliest (on the aligned
// clock) writes next. Within a segment events are in TracePlan's order; a record that a later
// segment holds but that started before an earlier segment's last event (a GPU record that
// completed late) is written with its segment. A launch and its GPU work in different segments
// get no flow arrow. Each input's process metadata comes with its first segment, a track's with
// the first segment that uses it. The host process of input k is named MergeInputLabel, its
// GPUs "<label> GPU d <name>"; process_sort_index keeps each input's processes together in rank
// order. With `python` (may be empty): each input's python_function slices on sampled tracks of
// its own host process, written with its first segment. Throws what `source` or the sink throws.
TraceStats WriteMergedTrace(const std::vector<MergeInput>& inputs, const MergeSource& source,
                            const std::string& trace_name, JsonSink sink,
                            const MergePythonLoader& python = nullptr,
                            const MergedTraceContent& content = {});
// The same with each input loaded whole through `load`, one input at a time in input order (one
// profile in memory; the events of one input after the other's, not interleaved), without
// summary processes.
TraceStats WriteMergedTrace(const std::vector<MergeInput>& inputs, const MergeLoader& load,
                            const std::string& trace_name, JsonSink sink,
                            const MergePythonLoader& python = nullptr);

}  // namespace gprof
