// The JSON trace written segment by segment (see segmented_trace.h).
#include "outputs/trace/segmented_trace.h"

#include <algorithm>
#include <filesystem>

#include "outputs/trace/cpu_sample_events.h"
#include "outputs/trace/gzip_file.h"
#include "outputs/trace/python_slice_events.h"
#include "outputs/trace/trace_header.h"
#include "outputs/trace/trace_json_events.h"
#include "outputs/trace/trace_split.h"

namespace gprof {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

SegmentedTraceJson::SegmentedTraceJson(std::string path, uint64_t max_bytes)
    : path_(std::move(path)), max_bytes_(max_bytes) {}

SegmentedTraceJson::~SegmentedTraceJson() = default;

void SegmentedTraceJson::Begin(const Profile& run, uint64_t origin_ns,
                               const PythonSliceSet* python) {
  run_ = &run;
  origin_ = origin_ns;
  python_ = max_bytes_ == 0 ? python : nullptr;
  Open();
}

void SegmentedTraceJson::Open() {
  // The first part is written under the trace's own name; a second part renames it part 1.
  const std::string path = files_.empty() ? path_ : TracePartPath(path_, files_.size() + 1);
  if (IsGzipPath(path)) {
    gz_ = std::make_unique<GzipFile>(path);
    out_ = std::make_unique<JsonWriter>(gz_->Sink());
  } else {
    out_ = std::make_unique<JsonWriter>(path);
  }
  files_.push_back(path);
  WriteTraceHeader(*run_, origin_, /*memory_peaks=*/false, out_.get());
  out_->Raw("  \"traceEvents\": [\n");
  entries_ = 0;
  part_events_ = 0;
}

void SegmentedTraceJson::End() {
  out_->Raw("\n  ],\n  \"traceName\": ").String(BaseName(files_.back())).Raw("\n}\n");
  out_->Close();
  out_.reset();
  if (gz_ != nullptr) gz_->Close();
  gz_.reset();
}

void SegmentedTraceJson::Add(const TracePlan& plan, const CpuSampleNames* cpu,
                             const PythonSliceSet* lines) {
  const TracePlacement placement{origin_, 0, 0};
  auto writer = std::make_unique<TraceEventWriter>(plan, out_.get(), placement, entries_);
  const auto with_lines = [lines](TraceEventWriter* w) {
    if (lines != nullptr) w->SetApiPythonLines(&lines->api_python_lines, &lines->api_python_stacks);
  };
  with_lines(writer.get());
  for (const TraceProcess& proc : plan.Processes()) {
    if (!process_pids_.insert(proc.pid).second) continue;
    processes_.push_back(proc);
    writer->WriteProcess(proc);
  }
  for (const TraceTrack& track : plan.Tracks()) {
    if (!track_keys_.insert({track.pid, track.tid}).second) continue;
    tracks_.push_back(track);
    writer->WriteTrack(track);
  }
  if (python_ != nullptr) {  // the run's Python slices, with the first segment
    const uint32_t tid = kSegmentedPythonFirstTid;
    for (const TraceTrack& track : PythonTraceTracks(*python_, plan, tid)) {
      tracks_.push_back(track);
      writer->WriteTrack(track);
    }
    WritePythonSlices(*python_, plan, tid, placement, writer.get(), out_.get());
    python_ = nullptr;
  }
  // Room kept for the next event and the document's end: an event is a few hundred bytes.
  const uint64_t reserve = std::min<uint64_t>(64 << 10, max_bytes_ / 8);
  const std::vector<PlannedEvent>& events = plan.events();
  for (size_t i = 0; i < events.size(); ++i) {
    const PlannedEvent& e = events[i];
    if (max_bytes_ != 0 && part_events_ > 0 && out_->bytes() + reserve > max_bytes_) {
      if (files_.size() == 1) {  // the first part gets its part name before it is ended
        files_[0] = TracePartPath(path_, 1);
        End();  // names itself part 1, and is closed under the trace's name
        std::filesystem::rename(path_, files_[0]);
      } else {
        End();
      }
      Open();
      writer = std::make_unique<TraceEventWriter>(plan, out_.get(), placement, 0);
      with_lines(writer.get());
      writer->DropFlowsOfCallsIn(i);
      for (const TraceProcess& proc : processes_) writer->WriteProcess(proc);
      for (const TraceTrack& track : tracks_) writer->WriteTrack(track);
    }
    writer->Write(e);
    ++part_events_;
  }
  if (cpu != nullptr) WriteCpuSampleEvents(*cpu, plan, origin_, writer.get(), out_.get());
  entries_ = writer->count();
}

std::vector<std::string> SegmentedTraceJson::Close() {
  End();
  return files_;
}

}  // namespace gprof
