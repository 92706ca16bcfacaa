// The merged trace's events (see merged_stream.h and merged_trace.h): a cursor per input in full
// over its segments, a heap of their next events' aligned times; the earliest writes next.
#include "outputs/trace/merged_stream.h"

#include <memory>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "analysis/timeline/trace_plan.h"
#include "outputs/trace/python_slice_events.h"
#include "outputs/trace/trace_json_events.h"

namespace gprof::merged_trace_detail {
namespace {

uint32_t PidBase(size_t k) { return kMergePidStride * static_cast<uint32_t>(k + 1); }

// One input in full: its current segment, planned, and the writer placing its events.
class Cursor {
 public:
  Cursor(const MergeInput& in, size_t k, uint64_t origin, std::unique_ptr<MergeSegments> segments,
         const MergePythonLoader& python, JsonWriter* out)
      : in_(in), k_(k), segments_(std::move(segments)), python_(python), out_(out),
        placement_{origin - static_cast<uint64_t>(in.clock.offset_ns), PidBase(k),
                   uint64_t{k} << 32} {}

  // The aligned time of the next event (only while !done()).
  uint64_t head() const {
    return AlignedNs(plan_->events()[next_].ts, in_.clock.offset_ns);
  }
  bool done() const { return plan_ == nullptr; }

  // Loads the next segment with events (its new tracks' metadata written); done() after the last.
  void Advance(uint64_t* entries) {
    writer_.reset();
    plan_.reset();
    while (const Profile* p = segments_->Next()) {
      plan_ = std::make_unique<TracePlan>(*p);
      // The survey placed the origin: a dump that changed since would write negative times.
      if (plan_->base_ns() < in_.origin_ns || p->info.pid != in_.info.pid) {
        throw std::runtime_error(in_.file + " changed while it was being merged");
      }
      writer_ = std::make_unique<TraceEventWriter>(*plan_, out_, placement_, *entries);
      if (first_) WriteFirstSegmentParts(*p);
      for (const TraceTrack& track : plan_->Tracks()) {
        if (tracks_.insert({track.pid, track.tid}).second) writer_->WriteTrack(track);
      }
      *entries = writer_->count();
      next_ = 0;
      if (!plan_->events().empty()) return;
      writer_.reset();
      plan_.reset();
    }
  }

  // Writes its events up to aligned time `until` (at least one); advances past its segment's end.
  void WriteUntil(uint64_t until, uint64_t* entries) {
    const std::vector<PlannedEvent>& events = plan_->events();
    const uint64_t own_until = until == UINT64_MAX ? until : until - in_.clock.offset_ns;
    do {
      writer_->Write(events[next_++]);
    } while (next_ < events.size() && events[next_].ts <= own_until);
    *entries = writer_->count();
    if (next_ == events.size()) Advance(entries);
  }

 private:
  void WriteFirstSegmentParts(const Profile& p) {
    first_ = false;
    const std::string label = MergeInputLabel(in_);
    for (TraceProcess proc : plan_->Processes()) {
      if (!proc.host && proc.pid + 1 >= kMergeSummaryPid) {
        throw std::runtime_error(in_.file + ": device " + std::to_string(proc.pid) +
                                 " is beyond what a merged trace numbers (device ids below " +
                                 std::to_string(kMergeSummaryPid - 1) + ")");
      }
      proc.name = proc.host ? label : label + " " + proc.name;
      proc.sort_index += PidBase(k_);
      writer_->WriteProcess(proc);
    }
    const std::unique_ptr<PythonSliceSet> slices = python_ ? python_(k_, p) : nullptr;
    if (!slices) return;
    const uint32_t tid = PythonFirstTid(*plan_);
    WritePythonTracks(*slices, *plan_, tid, writer_.get());
    WritePythonSlices(*slices, *plan_, tid, placement_, writer_.get(), out_);
  }

  const MergeInput& in_;
  const size_t k_;
  std::unique_ptr<MergeSegments> segments_;
  const MergePythonLoader& python_;
  JsonWriter* out_;
  const TracePlacement placement_;
  std::unique_ptr<TracePlan> plan_;
  std::unique_ptr<TraceEventWriter> writer_;
  size_t next_ = 0;
  bool first_ = true;
  std::set<std::pair<uint32_t, uint32_t>> tracks_;  // (pid, tid) whose metadata is written
};

void Entry(uint64_t* entries, JsonWriter* out) { out->Raw((*entries)++ ? ",\n{" : "{"); }

}  // namespace

uint64_t WriteSummaryProcesses(const std::vector<MergeInput>& inputs, uint64_t origin,
                               uint64_t entries, JsonWriter* out) {
  const uint64_t before = entries;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const MergeInput& in = inputs[k];
    const uint32_t pid = PidBase(k) + kMergeSummaryPid;
    Entry(&entries, out);
    out->Raw("\"ph\":\"M\",\"name\":\"process_name\",\"pid\":").Uint(pid);
    out->Raw(",\"args\":{\"name\":").String(MergeInputLabel(in) + " summary").Raw("}}");
    Entry(&entries, out);
    out->Raw("\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":").Uint(pid);
    out->Raw(",\"args\":{\"sort_index\":").Uint(k).Raw("}}");
    Entry(&entries, out);
    out->Raw("\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":").Uint(pid);
    out->Raw(",\"tid\":1,\"args\":{\"name\":\"steps\"}}");
    const auto slice = [&](const std::string& name, uint64_t start, uint64_t dur) {
      Entry(&entries, out);
      out->Raw("\"ph\":\"X\",\"cat\":\"summary\",\"name\":").String(name);
      out->Raw(",\"pid\":").Uint(pid).Raw(",\"tid\":1,\"ts\":");
      const uint64_t at = AlignedNs(start, in.clock.offset_ns);
      out->Micros(at > origin ? at - origin : 0).Raw(",\"dur\":").Micros(dur);
    };
    if (in.dist.steps.empty()) {
      const uint64_t end = std::max(in.info.end_ns, in.origin_ns);
      slice("run", in.origin_ns, end - in.origin_ns);
      out->Raw(",\"args\":{\"events\":").Uint(in.events).Raw("}}");
    }
    for (const MergeStep& s : in.dist.steps) {
      slice("ProfilerStep#" + std::to_string(s.number), s.start_ns, s.wall_ns);
      out->Raw(",\"args\":{\"gpu_busy_us\":").Micros(s.gpu_busy_ns);
      if (s.before_collective_ns) {
        out->Raw(",\"before_collective_us\":").Micros(*s.before_collective_ns);
      }
      out->Raw("}}");
    }
  }
  return entries - before;
}

uint64_t WriteInputsInTimeOrder(const std::vector<MergeInput>& inputs, uint64_t origin,
                                const std::vector<bool>& full, const MergeSource& source,
                                const MergePythonLoader& python, uint64_t entries,
                                JsonWriter* out) {
  const uint64_t before = entries;
  std::vector<std::unique_ptr<Cursor>> cursors;
  using Head = std::pair<uint64_t, size_t>;  // (aligned time, cursor): earliest, then rank order
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!full.empty() && !full[k]) continue;
    cursors.push_back(std::make_unique<Cursor>(inputs[k], k, origin, source(k), python, out));
    cursors.back()->Advance(&entries);
    if (!cursors.back()->done()) heads.push({cursors.back()->head(), cursors.size() - 1});
  }
  while (!heads.empty()) {
    const size_t c = heads.top().second;
    heads.pop();
    cursors[c]->WriteUntil(heads.empty() ? UINT64_MAX : heads.top().first, &entries);
    if (!cursors[c]->done()) heads.push({cursors[c]->head(), c});
  }
  return entries - before;
}

}  // namespace gprof::merged_trace_detail
