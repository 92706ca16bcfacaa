// TracePlan (see trace_plan.h): events, lanes, flows and counters of a trace, launcher process
// only. Moved out of trace_json.cpp so that the JSON and Perfetto writers show the same trace.
//
// Speed and memory (bench/trace_export_bench.cpp, figure 20): each source list is in time order,
// so the sort merges natural runs (of indices); consecutive events nearly always share a lane
// group, so the lane map is looked up only when the group changes.
#include "analysis/timeline/trace_plan.h"

#include <algorithm>
#include <set>
#include <span>
#include <unordered_map>

#include "analysis/attribution/gpu_attribution.h"
#include "analysis/samples/native_symbols.h"
#include "analysis/timeline/lane_packer.h"
#include "analysis/timeline/memory_timeline.h"
#include "text/format.h"
#include "text/json_writer.h"

namespace gprof {
namespace {

// Stable merge sort that exploits already-sorted runs (each record list is in time order, so a
// trace has a handful of runs): O(n log runs). `less` must be a strict weak order. It merges
// 4-byte indices, not the elements, and then moves each element once along the permutation's
// cycles: 8 bytes of scratch per element instead of a second copy of the vector (32 bytes per
// event, the largest transient of a trace's planning).
template <typename T, typename Less>
void NaturalMergeSort(std::vector<T>* v, Less less) {
  const size_t n = v->size();
  std::vector<size_t> runs{0};
  for (size_t i = 1; i < n; ++i) {
    if (less((*v)[i], (*v)[i - 1])) runs.push_back(i);
  }
  runs.push_back(n);
  if (runs.size() <= 2) return;
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::vector<uint32_t> tmp(n);
  std::vector<uint32_t>* src = &order;
  std::vector<uint32_t>* dst = &tmp;
  const auto by_element = [&](uint32_t a, uint32_t b) { return less((*v)[a], (*v)[b]); };
  while (runs.size() > 2) {
    std::vector<size_t> next{0};
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      const size_t b = runs[r];
      const size_t m = runs[r + 1];
      const size_t e = r + 2 < runs.size() ? runs[r + 2] : m;
      std::merge(src->begin() + b, src->begin() + m, src->begin() + m, src->begin() + e,
                 dst->begin() + b, by_element);
      next.push_back(e);
    }
    runs.swap(next);
    std::swap(src, dst);
  }
  std::vector<uint32_t>& perm = *src;  // perm[j]: the element that belongs at position j
  std::vector<uint32_t>().swap(*dst);   // the other buffer is no longer needed
  for (size_t i = 0; i < n; ++i) {
    if (perm[i] == i) continue;
    T held = std::move((*v)[i]);
    size_t j = i;
    for (;;) {
      const size_t k = perm[j];
      perm[j] = static_cast<uint32_t>(j);  // placed
      if (k == i) {
        (*v)[j] = std::move(held);
        break;
      }
      (*v)[j] = std::move((*v)[k]);
      j = k;
    }
  }
}

// Event order: by ts, longer first (parents before children), then kind, pid, tid, index.
bool EventBefore(const PlannedEvent& a, const PlannedEvent& b) {
  if (a.ts != b.ts) return a.ts < b.ts;
  if (a.end != b.end) return a.end > b.end;
  if (a.kind != b.kind) return a.kind < b.kind;
  if (a.pid != b.pid) return a.pid < b.pid;
  if (a.tid != b.tid) return a.tid < b.tid;
  return a.index < b.index;
}

}  // namespace

TracePlan::TracePlan(const Profile& profile) : p_(profile), corr_(profile) {
  ComputeBase();
  Plan();
}

const std::string* TracePlan::ApiStackJson(uint32_t correlation_id) const {
  if (p_.api_stacks.empty()) return nullptr;
  if (!stacks_ready_) {
    stacks_ready_ = true;
    stack_refs_ = p_.api_stacks;
    std::sort(stack_refs_.begin(), stack_refs_.end(),
              [](const ApiStackRef& a, const ApiStackRef& b) {
                return a.correlation_id < b.correlation_id;
              });
    const SymbolizedStacks sym = SymbolizeStacks(p_);
    stack_json_.resize(sym.frames.size());
    for (size_t i = 0; i < sym.frames.size(); ++i) {
      std::string& out = stack_json_[i];
      out = "[";
      for (size_t f = 0; f < sym.frames[i].size(); ++f) {
        if (f != 0) out += ',';
        AppendJsonString(sym.frames[i][f], &out);
      }
      out += ']';
    }
  }
  auto it = std::lower_bound(stack_refs_.begin(), stack_refs_.end(), correlation_id,
                             [](const ApiStackRef& a, uint32_t c) { return a.correlation_id < c; });
  if (it == stack_refs_.end() || it->correlation_id != correlation_id ||
      it->stack >= stack_json_.size()) {
    return nullptr;
  }
  return &stack_json_[it->stack];
}

uint32_t TracePlan::DeviceOfContext(uint32_t context) const {
  for (const LaunchConfig& c : p_.launch_configs) {
    if (c.context_id == context) return c.device_id;
  }
  for (const Memcpy& m : p_.memcpys) {
    if (m.context_id == context) return m.device_id;
  }
  return 0;
}

uint32_t TracePlan::KernelDevice(const Kernel& k) const { return KernelDeviceId(p_, k); }

void TracePlan::Add(TraceEventKind kind, uint64_t ts, uint64_t end, uint32_t pid, uint32_t tid,
                    uint32_t index, uint8_t group) {
  events_.push_back({ts, end, pid, tid, index, kind});
  if (kind == TraceEventKind::kMark || kind == TraceEventKind::kMemory) return;
  const LaneKey key{pid, tid, group};
  // Consecutive events nearly always share a track: skip the map lookup then.
  if (last_lane_ == nullptr || key != last_lane_key_) {
    last_lane_key_ = key;
    last_lane_ = &lanes_[key];
  }
  last_lane_->push_back(static_cast<uint32_t>(events_.size() - 1));
}

void TracePlan::Plan() {
  using K = TraceEventKind;
  const uint32_t pid = p_.info.pid;
  // Worked out first, so that events_ is reserved once at its final size: a vector that grows
  // holds its old and its new buffer at once.
  const std::vector<AnnotationSpan> spans = AnnotationSpans();
  const std::vector<MemoryEvent> memory = MemoryTimeline(p_);
  const std::vector<TorchMemoryPoint> torch_memory = TorchAllocatedTimeline(p_);
  std::set<std::pair<uint32_t, bool>> counters;  // (device, torch): at most one peak marker each
  for (const MemoryEvent& m : memory) counters.insert({p_.memory_ops[m.op].device_id, false});
  for (const TorchMemoryPoint& m : torch_memory) {
    counters.insert({p_.torch_memory[m.event].device, true});
  }
  events_.reserve(p_.steps.size() + p_.ranges.size() + p_.api_calls.size() + p_.marks.size() +
                  p_.overheads.size() + p_.kernels.size() + p_.memcpys.size() +
                  p_.memsets.size() + p_.syncs.size() + spans.size() + memory.size() +
                  torch_memory.size() + counters.size());
  for (uint32_t i = 0; i < p_.steps.size(); ++i) {
    const Step& s = p_.steps[i];
    Add(K::kStep, s.start_ns, s.end_ns, pid, s.tid, i, 0);
  }
  for (uint32_t i = 0; i < p_.ranges.size(); ++i) {
    const HostRange& r = p_.ranges[i];
    Add(K::kRange, r.start_ns, r.end_ns, pid, r.tid, i, (r.flags & kRangeStartEnd) ? 1 : 0);
  }
  for (uint32_t i = 0; i < p_.api_calls.size(); ++i) {
    const ApiCall& c = p_.api_calls[i];
    Add(K::kApi, c.start_ns, c.end_ns, pid, c.tid, i, 0);
  }
  for (uint32_t i = 0; i < p_.marks.size(); ++i) {
    Add(K::kMark, p_.marks[i].ts_ns, p_.marks[i].ts_ns, pid, p_.marks[i].tid, i, 0);
  }
  for (uint32_t i = 0; i < p_.overheads.size(); ++i) {
    const Overhead& o = p_.overheads[i];
    Add(K::kOverhead, o.start_ns, o.end_ns, pid, o.tid, i, 2);
  }
  for (uint32_t i = 0; i < p_.kernels.size(); ++i) {
    const Kernel& k = p_.kernels[i];
    Add(K::kKernel, k.start_ns, k.end_ns, KernelDevice(k), k.stream_id, i, 0);
  }
  for (uint32_t i = 0; i < p_.memcpys.size(); ++i) {
    const Memcpy& m = p_.memcpys[i];
    Add(K::kMemcpy, m.start_ns, m.end_ns, m.device_id, m.stream_id, i, 0);
  }
  for (uint32_t i = 0; i < p_.memsets.size(); ++i) {
    const Memset& m = p_.memsets[i];
    Add(K::kMemset, m.start_ns, m.end_ns, m.device_id, m.stream_id, i, 0);
  }
  for (uint32_t i = 0; i < p_.syncs.size(); ++i) {
    const Sync& s = p_.syncs[i];
    Add(K::kSync, s.start_ns, s.end_ns, DeviceOfContext(s.context_id), s.stream_id, i, 0);
  }
  PlanAnnotations(spans);
  PlanMemory(memory, torch_memory);
  AssignLanes();
  lanes_.clear();  // only lane packing needs them
  last_lane_ = nullptr;
  PlanFlows();
  NaturalMergeSort(&events_, EventBefore);
}

// gpu_user_annotation: per NVTX range / step, one span per (device, stream) from the first
// start to the last end of the GPU work it owns. Which work a range or a step owns is
// gpu_attribution.h's rule, the same as the table's CUDA totals: ranges by correlation (the
// launching call on the range's own thread started inside it), steps by step time (a launch from
// any thread that started during the step).
std::vector<TracePlan::AnnotationSpan> TracePlan::AnnotationSpans() const {
  std::vector<AnnotationSpan> all;
  if (p_.steps.empty() && p_.ranges.empty()) return all;
  const GpuAttribution owners(p_, corr_);
  std::vector<AnnotationSpan> spans;  // one range's or step's
  const auto span_for = [&](std::span<const uint32_t> launches, GpuAnnotation a) {
    spans.clear();
    for (const uint32_t launch : launches) {
      for (const GpuRef& g : owners.Records(launch)) {
        auto s = std::find_if(spans.begin(), spans.end(), [&](const AnnotationSpan& x) {
          return x.device == g.device_id && x.stream == g.stream_id;
        });
        if (s == spans.end()) {
          spans.push_back({a, g.device_id, g.stream_id, g.start_ns, g.end_ns});
        } else {
          s->start = std::min(s->start, g.start_ns);
          s->end = std::max(s->end, g.end_ns);
        }
      }
    }
    std::sort(spans.begin(), spans.end(), [](const AnnotationSpan& x, const AnnotationSpan& y) {
      return std::tie(x.device, x.stream) < std::tie(y.device, y.stream);
    });
    all.insert(all.end(), spans.begin(), spans.end());
  };
  for (uint32_t i = 0; i < p_.steps.size(); ++i) span_for(owners.StepLaunches(i), {i, true});
  for (uint32_t i = 0; i < p_.ranges.size(); ++i) span_for(owners.RangeLaunches(i), {i, false});
  return all;
}

void TracePlan::PlanAnnotations(const std::vector<AnnotationSpan>& spans) {
  annotations_.reserve(spans.size());
  for (const AnnotationSpan& s : spans) {
    annotations_.push_back(s.annotation);
    Add(TraceEventKind::kAnnotation, s.start, s.end, s.device, s.stream,
        static_cast<uint32_t>(annotations_.size() - 1), 0);
  }
}

// Memory: a counter track of bytes in use per device, one point per allocation or free. A
// counter shows what users ask about allocations (how much memory, when) as one line per
// device, stays readable with millions of operations, and never breaks slice nesting; the
// per-allocation details are in the table's source data, not worth an event each.
// With torch's caching allocator events attached (--profile-memory in a torch program), a second
// counter per device holds the bytes its blocks hold (torch's "allocated", the tensors), beside
// CUDA's view (the allocator's segments, torch's "reserved"), each with its own peak marker.
void TracePlan::PlanMemory(const std::vector<MemoryEvent>& memory,
                           const std::vector<TorchMemoryPoint>& torch_memory) {
  // (device, torch) -> (bytes, its event)
  std::map<std::pair<uint32_t, bool>, std::pair<uint64_t, size_t>> peak;
  const auto point = [&](uint64_t ts, uint32_t device, uint64_t bytes, bool torch) {
    memory_.push_back(bytes);
    memory_torch_.push_back(torch);
    events_.push_back({ts, ts, device, torch ? 1u : 0u, static_cast<uint32_t>(memory_.size() - 1),
                       TraceEventKind::kMemory});
    auto [it, fresh] = peak.try_emplace({device, torch}, bytes, events_.size() - 1);
    if (!fresh && bytes > it->second.first) it->second = {bytes, events_.size() - 1};
  };
  for (const MemoryEvent& m : memory) {
    const MemoryOp& op = p_.memory_ops[m.op];
    point(op.ts_ns, op.device_id, m.on_device, false);
  }
  for (const TorchMemoryPoint& m : torch_memory) {
    const TorchMemoryEvent& e = p_.torch_memory[m.event];
    point(e.ts_ns, e.device, m.on_device, true);
  }
  // The peak marker: the first time each device reached its highest bytes in use.
  for (const auto& [key, at] : peak) {
    if (at.first == 0) continue;
    const uint32_t device = key.first;
    const PlannedEvent point = events_[at.second];
    events_.push_back({point.ts, point.ts, device, kMemoryPeakTid, point.index,
                       TraceEventKind::kMemoryPeak});
    extra_tracks_[{device, kMemoryPeakTid}] = {device, kMemoryPeakTid, "memory peak",
                                               kMemoryPeakTid};
  }
}

std::string TracePlan::MemoryPeakName(uint32_t index) const {
  return std::string(MemoryIsTorch(index) ? "peak memory allocated by torch: "
                                          : "peak memory in use: ") +
         FormatMemory(static_cast<int64_t>(MemoryInUse(index)));
}

void TracePlan::AssignLanes() {
  std::vector<LaneInterval> iv;
  for (const auto& [key, members] : lanes_) {
    const auto [pid, tid, group] = key;
    iv.clear();
    for (size_t m : members) {
      const PlannedEvent& e = events_[m];
      iv.push_back({e.ts, e.end, static_cast<uint8_t>(e.kind), static_cast<uint32_t>(m)});
    }
    const std::vector<uint32_t> lanes = PackNestedLanes(iv);
    constexpr uint32_t kUnset = 0xffffffffu;  // no real tid: synthetic ones start at 0x80000000
    std::vector<uint32_t> tid_of_lane;        // lane -> tid, assigned in first-use order
    for (size_t j = 0; j < members.size(); ++j) {
      const uint32_t lane = lanes[j];
      if (lane >= tid_of_lane.size()) tid_of_lane.resize(lane + 1, kUnset);
      if (tid_of_lane[lane] == kUnset) {
        uint32_t t = tid;
        if (group != 0 || lane != 0) t = next_synthetic_tid_++;
        tid_of_lane[lane] = t;
        extra_tracks_[{pid, t}] = ExtraTrack(pid, tid, t, group, lane);
      }
      events_[members[j]].tid = tid_of_lane[lane];
    }
  }
}

TraceTrack TracePlan::ExtraTrack(uint32_t pid, uint32_t tid, uint32_t lane_tid, uint8_t group,
                                 uint32_t lane) const {
  const uint32_t sort = std::min<uint32_t>(tid, 0x7fffffff);
  const std::string base = pid == p_.info.pid ? ThreadName(tid) : StreamName(tid);
  std::string n;
  if (lane > 0) n.append(" ").append(std::to_string(lane + (group == 0 ? 0 : 1)));
  std::string name;
  if (group == 1) {
    name = base + " (NVTX start/end ranges" + n + ")";
  } else if (group == 2) {
    name = tid == 0 ? "CUPTI overhead" + n : "CUPTI overhead (" + base + ")" + n;
  } else if (lane == 0) {
    name = base;
  } else {
    name = base + " (overlapping work" + n + ")";
  }
  return {pid, lane_tid, std::move(name), sort};
}

std::string TracePlan::ThreadName(uint32_t tid) const {
  for (const ThreadInfo& t : p_.threads) {
    if (t.tid == tid && t.name != kNoString) return std::string(p_.strings.Get(t.name));
  }
  return "thread " + std::to_string(tid);
}

std::string TracePlan::StreamName(uint32_t stream) {
  return stream == kNoStream ? std::string("synchronization") : "stream " + std::to_string(stream);
}

std::string TracePlan::AnnotationName(const GpuAnnotation& a) const {
  if (a.from_step) return StepName(p_.steps[a.name_source].number);
  return std::string(p_.strings.Get(p_.ranges[a.name_source].name));
}

// One ac2g flow per correlation id: from the first API call with that id to the earliest GPU
// record (later ones, graph launches, get none), put by the writers on its two slices.
void TracePlan::PlanFlows() {
  const size_t n = p_.api_calls.size();
  // When ids strictly increase (the usual case), every call is the first with its id.
  bool increasing = true;
  for (size_t i = 1; i < n && increasing; ++i) {
    increasing = p_.api_calls[i - 1].correlation_id < p_.api_calls[i].correlation_id;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const ApiCall& c = p_.api_calls[i];
    if (c.correlation_id == 0) continue;
    if (!increasing && corr_.ApiCall(c.correlation_id) != static_cast<int64_t>(i)) continue;
    const auto gpu = corr_.Gpu(c.correlation_id);
    // None to a record that starts before its call (clocks apart): viewers drop such a flow.
    if (gpu.empty() || gpu.front().start_ns < c.start_ns) continue;
    flows_.push_back({c.correlation_id, i, gpu.front().kind, gpu.front().index});
  }
}

uint64_t TraceOriginNs(const Profile& p) {
  uint64_t b = p.info.start_ns ? p.info.start_ns : UINT64_MAX;
  const auto at = [&](uint64_t t) { b = std::min(b, t); };
  for (const auto& r : p.ranges) at(r.start_ns);
  for (const auto& m : p.marks) at(m.ts_ns);
  for (const auto& c : p.api_calls) at(c.start_ns);
  ForEachGpuKind(p, [&](GpuKind, const auto& records) {
    for (const auto& r : records) at(GpuRecordStartNs(r));
  });
  for (const auto& s : p.steps) at(s.start_ns);
  return b == UINT64_MAX ? 0 : b;
}

void TracePlan::ComputeBase() { base_ = TraceOriginNs(p_); }

std::vector<TraceProcess> TracePlan::Processes() const {
  std::map<uint32_t, int> pids;  // pid -> -1 host, else device id
  pids[p_.info.pid] = -1;
  for (const DeviceInfo& d : p_.devices) pids.emplace(d.id, static_cast<int>(d.id));
  uint32_t last_pid = 0;
  bool have_last = false;
  for (const PlannedEvent& e : events_) {
    if (have_last && e.pid == last_pid) continue;
    pids.emplace(e.pid, static_cast<int>(e.pid));
    last_pid = e.pid;
    have_last = true;
  }
  std::vector<TraceProcess> out;
  for (const auto& [pid, device] : pids) {
    TraceProcess t;
    t.pid = pid;
    t.host = device < 0;
    if (t.host) {
      t.name = p_.info.program + " (pid " + std::to_string(pid) + ")";
      t.labels = p_.info.rank >= 0 ? "CPU, rank " + std::to_string(p_.info.rank) : "CPU";
      t.sort_index = 0;
    } else {
      t.labels.append("GPU ").append(std::to_string(pid));
      t.name = t.labels;
      for (const DeviceInfo& d : p_.devices) {
        if (d.id == pid) t.name.append(" ").append(p_.strings.Get(d.name));
      }
      t.sort_index = 1 + pid;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<TraceTrack> TracePlan::Tracks() const {
  // Lanes got their names while packing; marks may sit on tracks with no slices.
  std::map<std::pair<uint32_t, uint32_t>, TraceTrack> tracks = extra_tracks_;
  std::pair<uint32_t, uint32_t> last_track{0, 0};
  bool have_track = false;
  for (const PlannedEvent& e : events_) {
    if (e.kind == TraceEventKind::kMemory) continue;
    if (have_track && last_track == std::make_pair(e.pid, e.tid)) continue;
    last_track = {e.pid, e.tid};
    have_track = true;
    if (!tracks.count({e.pid, e.tid})) {
      const bool host = e.pid == p_.info.pid;
      tracks[{e.pid, e.tid}] = {e.pid, e.tid, host ? ThreadName(e.tid) : StreamName(e.tid),
                                std::min<uint32_t>(e.tid, 0x7fffffff)};
    }
  }
  std::vector<TraceTrack> out;
  out.reserve(tracks.size());
  for (auto& [key, track] : tracks) out.push_back(std::move(track));
  return out;
}

}  // namespace gprof
