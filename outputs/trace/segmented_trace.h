// The JSON trace of a dump read segment by segment (launcher/render/segmented_render.h): the
// document WriteTraceJson writes, one segment's TracePlan at a time, so that only one segment's
// plan is ever in memory. The header comes from the run's tables and counters (the reader's
// profile after the last segment) and one time origin for all segments; each process and track
// gets its metadata where it first appears.
//
// What differs from a trace written whole: lanes are packed per segment (an overlapping range
// that crosses a segment's edge may share a lane with work of the other segment); no memory peaks
// in the header. With a cap (--max-trace-mb) the
// document is cut into parts when the next event could pass it (a part holds at least one
// event; an event with a name longer than the reserve may pass it), each a complete trace with
// the header and the metadata of every track so far; a launch and its kernel may fall into two
// parts. Throws std::runtime_error on I/O errors. Launcher process only.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/timeline/trace_plan.h"
#include "model/profile.h"
#include "text/json_writer.h"

namespace gprof {

class GzipFile;
struct CpuSampleNames;
struct PythonSliceSet;

class SegmentedTraceJson {
 public:
  // `path`: gzip when it ends in .gz. `max_bytes`: the cap on uncompressed bytes per part (0: one
  // file).
  SegmentedTraceJson(std::string path, uint64_t max_bytes);
  ~SegmentedTraceJson();
  // Starts the document (before the first Add): `run` for the header, `origin_ns` the time
  // origin (at most every segment's TraceOriginNs).
  // `python`: the run's sampled Python stacks (python_slices.h), written with the first segment
  // on tracks from kSegmentedPythonFirstTid; left out of a trace cut into parts (as a whole
  // trace's parts leave them out). May be nullptr; must outlive the writer.
  void Begin(const Profile& run, uint64_t origin_ns, const PythonSliceSet* python = nullptr);
  // `cpu`: the segment's --cpu-sampling samples named (cpu_sample_events.h), or nullptr; they
  // follow the segment's events in the part its events end in (and count towards its cap only
  // after it: a part may pass the cap by one segment's samples). `lines`: the Python lines of the
  // segment's blocking calls (PythonSliceSet::api_python_lines and api_python_stacks, by the
  // segment's api_calls indices: their events' args.python_line), or nullptr.
  void Add(const TracePlan& segment, const CpuSampleNames* cpu = nullptr,
           const PythonSliceSet* lines = nullptr);
  // Ends the document; the files written, in time order.
  std::vector<std::string> Close();

 private:
  void Open();
  void End();

  std::string path_;
  uint64_t max_bytes_;
  const Profile* run_ = nullptr;
  uint64_t origin_ = 0;
  const PythonSliceSet* python_ = nullptr;  // until written with the first segment
  std::unique_ptr<GzipFile> gz_;
  std::unique_ptr<JsonWriter> out_;
  uint64_t entries_ = 0;          // in the open part's traceEvents
  uint64_t part_events_ = 0;      // events (not metadata) in the open part
  std::vector<std::string> files_;
  std::vector<TraceProcess> processes_;  // written so far (each part repeats them)
  std::vector<TraceTrack> tracks_;
  std::set<uint32_t> process_pids_;
  std::set<std::pair<uint32_t, uint32_t>> track_keys_;
};

}  // namespace gprof
