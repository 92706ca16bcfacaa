// WriteTraceJson: the Kineto-flavoured Chrome trace (REFERENCE.md §3, §4), launcher process only.
//
// Plan, then stream: events are first listed as small fixed-size references (32 bytes each, no
// text), placed on lanes so that slices on one (pid, tid) nest, sorted by (ts, longest first,
// kind, pid, tid, index), and then formatted one by one with hand-written code into a buffered
// file (or a caller's memory sink). The document itself is never held in memory.
//
// Speed (bench/trace_export_bench.cpp, 1 M launches): each source list is already in time order,
// so the sort merges natural runs; names, API names and the launch-configuration part of kernel
// args are escaped/formatted once per distinct value and copied; kernels, API calls and flows
// (4 of every 4 events per launch) are formatted into one reserved region without per-field
// bounds checks.
//
// Tracks: host events use pid = OS pid, tid = OS tid; push/pop ranges, steps and API calls share
// the thread's track (they nest by construction). Start/end ranges (which may cross threads and
// push/pop ranges) and CUPTI overhead get their own tracks per thread. GPU work uses pid = device,
// tid = stream (as Kineto, so HTA finds args.stream > 0); work that does not nest on its stream
// (concurrent records, gpu_user_annotation spans of two threads) moves to an overflow track.
// Overflow and extra tracks get synthetic tids from 0x80000000 up (above any OS tid), named after
// the track they belong to.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "exporters/correlation_index.h"
#include "exporters/exporters.h"
#include "exporters/json_writer.h"
#include "exporters/lane_packer.h"
#include "exporters/trace_json.h"
#include "exporters/names.h"

namespace gprof {
namespace {

enum class Ev : uint8_t {
  // Order matters: at equal times, parents are listed first.
  kStep, kRange, kAnnotation, kApi, kSync, kKernel, kMemcpy, kMemset, kOverhead, kMark,
  kMemory, kFlowStart, kFlowEnd,
};

struct EvRef {
  uint64_t ts;
  uint64_t end;
  uint32_t pid;
  uint32_t tid;
  uint32_t index;  // into the profile vector of its kind, or a side table
  Ev kind;
};
static_assert(sizeof(EvRef) == 32);

// Which lane group an event is packed in: (pid, tid, group). Group 0 is the thread / stream
// itself, 1 = start/end ranges of a thread, 2 = CUPTI overhead of a thread.
using LaneKey = std::tuple<uint32_t, uint32_t, uint8_t>;

struct Annotation {
  uint32_t name_source;  // range index, or step index when from_step
  bool from_step;
};

struct MemoryPoint {
  uint64_t bytes_in_use;
};

struct TrackName {
  std::string name;
  uint32_t sort_index;
};

constexpr uint32_t kNoStream = 0xffffffffu;

uint64_t Dur(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

// Stable merge sort that exploits already-sorted runs (each record list is in time order, so a
// trace has a handful of runs): O(n log runs). `less` must be a strict weak order.
template <typename T, typename Less>
void NaturalMergeSort(std::vector<T>* v, Less less) {
  std::vector<size_t> runs{0};
  for (size_t i = 1; i < v->size(); ++i) {
    if (less((*v)[i], (*v)[i - 1])) runs.push_back(i);
  }
  runs.push_back(v->size());
  if (runs.size() <= 2) return;
  std::vector<T> tmp(v->size());
  std::vector<T>* src = v;
  std::vector<T>* dst = &tmp;
  while (runs.size() > 2) {
    std::vector<size_t> next{0};
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      const size_t b = runs[r];
      const size_t m = runs[r + 1];
      const size_t e = r + 2 < runs.size() ? runs[r + 2] : m;
      std::merge(src->begin() + b, src->begin() + m, src->begin() + m, src->begin() + e,
                 dst->begin() + b, less);
      next.push_back(e);
    }
    runs.swap(next);
    std::swap(src, dst);
  }
  if (src != v) v->swap(tmp);
}

// Event order: by ts, longer first (parents before children), then kind, pid, tid, index.
bool EventBefore(const EvRef& a, const EvRef& b) {
  if (a.ts != b.ts) return a.ts < b.ts;
  if (a.end != b.end) return a.end > b.end;
  if (a.kind != b.kind) return a.kind < b.kind;
  if (a.pid != b.pid) return a.pid < b.pid;
  if (a.tid != b.tid) return a.tid < b.tid;
  return a.index < b.index;
}

// The launch-configuration part of a kernel's args, formatted once per configuration.
struct KernelArgText {
  std::string head;  // ,"device":D,"context":C
  std::string tail;  // ,"registers per thread":...,"block":[x,y,z]}}
};

// Upper bound of the fixed text (keys, punctuation, numbers) of one fast-path event.
constexpr size_t kEventSlack = 512;
constexpr size_t kFastPathLimit = 60000;  // larger events (huge names) take the checked path

class TraceWriter {
 public:
  TraceWriter(const Profile& p, JsonWriter* out, std::string trace_name)
      : p_(p), corr_(p), names_(p), out_(*out), trace_name_(std::move(trace_name)) {}

  TraceStats Write() {
    Plan();
    WriteHeader();
    out_.Raw("  \"traceEvents\": [\n");
    WriteMetadata();
    for (const EvRef& e : events_) WriteEvent(e);
    out_.Raw("\n  ],\n  \"traceName\": ");
    out_.String(trace_name_);
    out_.Raw("\n}\n");
    TraceStats stats;
    stats.events = count_;
    stats.bytes = out_.Close();
    return stats;
  }

 private:
  // ---- planning ---------------------------------------------------------------------------

  uint32_t DeviceOfContext(uint32_t context) const {
    for (const LaunchConfig& c : p_.launch_configs) {
      if (c.context_id == context) return c.device_id;
    }
    for (const Memcpy& m : p_.memcpys) {
      if (m.context_id == context) return m.device_id;
    }
    return 0;
  }

  void Add(Ev kind, uint64_t ts, uint64_t end, uint32_t pid, uint32_t tid, uint32_t index,
           uint8_t group) {
    events_.push_back({ts, end, pid, tid, index, kind});
    if (kind == Ev::kMark || kind == Ev::kMemory) return;
    const LaneKey key{pid, tid, group};
    // Consecutive events nearly always share a track: skip the map lookup then.
    if (last_lane_ == nullptr || key != last_lane_key_) {
      last_lane_key_ = key;
      last_lane_ = &lanes_[key];
    }
    last_lane_->push_back(static_cast<uint32_t>(events_.size() - 1));
  }

  void Plan() {
    const uint32_t pid = p_.info.pid;
    events_.reserve(p_.ranges.size() + p_.steps.size() + p_.api_calls.size() * 3 +
                    p_.kernels.size() * 2 + p_.memcpys.size() * 2 + p_.memsets.size() * 2);
    for (uint32_t i = 0; i < p_.steps.size(); ++i) {
      const Step& s = p_.steps[i];
      Add(Ev::kStep, s.start_ns, s.end_ns, pid, s.tid, i, 0);
    }
    for (uint32_t i = 0; i < p_.ranges.size(); ++i) {
      const HostRange& r = p_.ranges[i];
      Add(Ev::kRange, r.start_ns, r.end_ns, pid, r.tid, i, (r.flags & kRangeStartEnd) ? 1 : 0);
    }
    api_ev_.resize(p_.api_calls.size());
    for (uint32_t i = 0; i < p_.api_calls.size(); ++i) {
      const ApiCall& c = p_.api_calls[i];
      api_ev_[i] = events_.size();
      Add(Ev::kApi, c.start_ns, c.end_ns, pid, c.tid, i, 0);
    }
    for (uint32_t i = 0; i < p_.marks.size(); ++i) {
      Add(Ev::kMark, p_.marks[i].ts_ns, p_.marks[i].ts_ns, pid, p_.marks[i].tid, i, 0);
    }
    for (uint32_t i = 0; i < p_.overheads.size(); ++i) {
      const Overhead& o = p_.overheads[i];
      Add(Ev::kOverhead, o.start_ns, o.end_ns, pid, o.tid, i, 2);
    }
    gpu_ev_[0].resize(p_.kernels.size());
    for (uint32_t i = 0; i < p_.kernels.size(); ++i) {
      const Kernel& k = p_.kernels[i];
      gpu_ev_[0][i] = events_.size();
      Add(Ev::kKernel, k.start_ns, k.end_ns, KernelDevice(k), k.stream_id, i, 0);
    }
    gpu_ev_[1].resize(p_.memcpys.size());
    for (uint32_t i = 0; i < p_.memcpys.size(); ++i) {
      const Memcpy& m = p_.memcpys[i];
      gpu_ev_[1][i] = events_.size();
      Add(Ev::kMemcpy, m.start_ns, m.end_ns, m.device_id, m.stream_id, i, 0);
    }
    gpu_ev_[2].resize(p_.memsets.size());
    for (uint32_t i = 0; i < p_.memsets.size(); ++i) {
      const Memset& m = p_.memsets[i];
      gpu_ev_[2][i] = events_.size();
      Add(Ev::kMemset, m.start_ns, m.end_ns, m.device_id, m.stream_id, i, 0);
    }
    for (uint32_t i = 0; i < p_.syncs.size(); ++i) {
      const Sync& s = p_.syncs[i];
      Add(Ev::kSync, s.start_ns, s.end_ns, DeviceOfContext(s.context_id), s.stream_id, i, 0);
    }
    PlanAnnotations();
    PlanMemory();
    AssignLanes();
    PlanFlows();
    NaturalMergeSort(&events_, EventBefore);
  }

  uint32_t KernelDevice(const Kernel& k) const {
    return k.launch_config < p_.launch_configs.size() ? p_.launch_configs[k.launch_config].device_id
                                                      : 0;
  }

  // gpu_user_annotation: per NVTX range / step, one span per (device, stream) from the first
  // start to the last end of the work launched by API calls inside it on its thread.
  void PlanAnnotations() {
    if (p_.steps.empty() && p_.ranges.empty()) return;
    std::unordered_map<uint32_t, std::vector<uint32_t>> calls;  // tid -> api indices by start
    for (uint32_t i = 0; i < p_.api_calls.size(); ++i) calls[p_.api_calls[i].tid].push_back(i);
    for (auto& [tid, v] : calls) {
      const auto by_start = [&](uint32_t a, uint32_t b) {
        return p_.api_calls[a].start_ns < p_.api_calls[b].start_ns;
      };
      if (!std::is_sorted(v.begin(), v.end(), by_start)) std::stable_sort(v.begin(), v.end(), by_start);
    }
    struct Span {
      uint32_t device, stream;
      uint64_t start, end;
    };
    std::vector<Span> spans;
    const auto span_for = [&](uint32_t tid, uint64_t start, uint64_t end, Annotation a) {
      const auto it = calls.find(tid);
      if (it == calls.end()) return;
      const auto& v = it->second;
      auto c = std::lower_bound(v.begin(), v.end(), start, [&](uint32_t i, uint64_t t) {
        return p_.api_calls[i].start_ns < t;
      });
      spans.clear();
      for (; c != v.end() && p_.api_calls[*c].start_ns < end; ++c) {
        const ApiCall& call = p_.api_calls[*c];
        if (call.end_ns > end) continue;
        for (const GpuRef& g : corr_.Gpu(call.correlation_id)) {
          auto s = std::find_if(spans.begin(), spans.end(), [&](const Span& x) {
            return x.device == g.device_id && x.stream == g.stream_id;
          });
          if (s == spans.end()) {
            spans.push_back({g.device_id, g.stream_id, g.start_ns, g.end_ns});
          } else {
            s->start = std::min(s->start, g.start_ns);
            s->end = std::max(s->end, g.end_ns);
          }
        }
      }
      std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) {
        return std::tie(x.device, x.stream) < std::tie(y.device, y.stream);
      });
      for (const Span& s : spans) {
        annotations_.push_back(a);
        Add(Ev::kAnnotation, s.start, s.end, s.device, s.stream,
            static_cast<uint32_t>(annotations_.size() - 1), 0);
      }
    };
    for (uint32_t i = 0; i < p_.steps.size(); ++i) {
      span_for(p_.steps[i].tid, p_.steps[i].start_ns, p_.steps[i].end_ns, {i, true});
    }
    for (uint32_t i = 0; i < p_.ranges.size(); ++i) {
      span_for(p_.ranges[i].tid, p_.ranges[i].start_ns, p_.ranges[i].end_ns, {i, false});
    }
  }

  // Memory: a counter track of bytes in use per device, one point per allocation or free. A
  // counter shows what users ask about allocations (how much memory, when) as one line per
  // device, stays readable with millions of operations, and never breaks slice nesting; the
  // per-allocation details are in the table's source data, not worth an event each.
  void PlanMemory() {
    std::vector<uint32_t> order(p_.memory_ops.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return p_.memory_ops[a].ts_ns < p_.memory_ops[b].ts_ns;
    });
    std::map<uint32_t, uint64_t> in_use;  // device -> bytes
    std::unordered_map<uint64_t, uint64_t> live;  // (device << 56 ^ address) -> bytes
    for (uint32_t i : order) {
      const MemoryOp& m = p_.memory_ops[i];
      const uint64_t key = static_cast<uint64_t>(m.device_id) << 56 ^ m.address;
      uint64_t& total = in_use[m.device_id];
      if (m.op == MemoryOpKind::kAlloc) {
        total += m.bytes;
        live[key] = m.bytes;
      } else {
        uint64_t bytes = m.bytes;
        if (auto it = live.find(key); it != live.end()) {
          if (bytes == 0) bytes = it->second;
          live.erase(it);
        }
        total -= std::min(total, bytes);
      }
      memory_.push_back({total});
      events_.push_back({m.ts_ns, m.ts_ns, m.device_id, 0,
                         static_cast<uint32_t>(memory_.size() - 1), Ev::kMemory});
    }
  }

  void AssignLanes() {
    std::vector<LaneInterval> iv;
    for (const auto& [key, members] : lanes_) {
      const auto [pid, tid, group] = key;
      iv.clear();
      for (size_t m : members) {
        const EvRef& e = events_[m];
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
          extra_tracks_[{pid, t}] = ExtraTrackName(pid, tid, group, lane);
        }
        events_[members[j]].tid = tid_of_lane[lane];
      }
    }
  }

  TrackName ExtraTrackName(uint32_t pid, uint32_t tid, uint8_t group, uint32_t lane) const {
    const uint32_t sort = std::min<uint32_t>(tid, 0x7fffffff);
    const std::string base = pid == p_.info.pid ? ThreadName(tid) : StreamName(tid);
    const std::string n = lane > 0 ? " " + std::to_string(lane + (group == 0 ? 0 : 1)) : "";
    if (group == 1) return {base + " (NVTX start/end ranges" + n + ")", sort};
    if (group == 2) return {tid == 0 ? "CUPTI overhead" + n : "CUPTI overhead (" + base + ")" + n, sort};
    if (lane == 0) return {base, sort};
    return {base + " (overlapping work" + n + ")", sort};
  }

  std::string ThreadName(uint32_t tid) const {
    for (const ThreadInfo& t : p_.threads) {
      if (t.tid == tid && t.name != kNoString) return std::string(p_.strings.Get(t.name));
    }
    return "thread " + std::to_string(tid);
  }

  static std::string StreamName(uint32_t stream) {
    return stream == kNoStream ? std::string("synchronization") : "stream " + std::to_string(stream);
  }

  // One ac2g pair per correlation id: `s` at the first API call with that id, `f` at the earliest
  // GPU record; later records with the same id (graph launches) get no flow, so ids are unique.
  void PlanFlows() {
    const size_t n = p_.api_calls.size();
    // When ids strictly increase (the usual case), every call is the first with its id.
    bool increasing = true;
    for (size_t i = 1; i < n && increasing; ++i) {
      increasing = p_.api_calls[i - 1].correlation_id < p_.api_calls[i].correlation_id;
    }
    std::vector<EvRef> ends;
    ends.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      const ApiCall& c = p_.api_calls[i];
      if (c.correlation_id == 0) continue;
      if (!increasing && corr_.ApiCall(c.correlation_id) != static_cast<int64_t>(i)) continue;
      const auto gpu = corr_.Gpu(c.correlation_id);
      if (gpu.empty()) continue;
      const EvRef api = events_[api_ev_[i]];
      const GpuRef& g = gpu.front();
      const EvRef target = events_[gpu_ev_[static_cast<int>(g.kind)][g.index]];
      events_.push_back({api.ts, api.ts, api.pid, api.tid, c.correlation_id, Ev::kFlowStart});
      ends.push_back({target.ts, target.ts, target.pid, target.tid, c.correlation_id, Ev::kFlowEnd});
    }
    // Starts and ends as two time-ordered runs (interleaved they would make one run per flow).
    events_.insert(events_.end(), ends.begin(), ends.end());
  }

  // ---- writing ----------------------------------------------------------------------------

  void WriteHeader() {
    JsonWriter& o = out_;
    o.Raw("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
    for (size_t i = 0; i < p_.devices.size(); ++i) {
      const DeviceInfo& d = p_.devices[i];
      o.Raw(i ? ",\n    {" : "\n    {");
      o.Raw("\"id\": ").Uint(d.id).Raw(", \"name\": ").String(p_.strings.Get(d.name));
      o.Raw(", \"totalGlobalMem\": ").Uint(d.total_global_mem);
      o.Raw(", \"computeMajor\": ").Uint(d.compute_major);
      o.Raw(", \"computeMinor\": ").Uint(d.compute_minor);
      o.Raw(", \"maxThreadsPerBlock\": ").Uint(d.max_threads_per_block);
      o.Raw(", \"maxThreadsPerMultiprocessor\": ").Uint(d.max_threads_per_sm);
      o.Raw(", \"regsPerBlock\": ").Uint(d.max_registers_per_block);
      o.Raw(", \"regsPerMultiprocessor\": ").Uint(d.max_registers_per_sm);
      o.Raw(", \"warpSize\": ").Uint(d.warp_size);
      o.Raw(", \"sharedMemPerBlock\": ").Uint(d.max_shared_memory_per_block);
      o.Raw(", \"sharedMemPerMultiprocessor\": ").Uint(d.max_shared_memory_per_sm);
      o.Raw(", \"numSms\": ").Uint(d.num_sms).Char('}');
    }
    o.Raw(p_.devices.empty() ? "],\n" : "\n  ],\n");
    if (p_.info.rank >= 0) {
      // HTA finds the rank with the regex "rank":\s+(\d+): keep the space after the colon.
      o.Raw("  \"distributedInfo\": {\"backend\": \"unknown\", \"rank\": ").Int(p_.info.rank);
      o.Raw(", \"world_size\": ").Int(p_.info.world_size).Raw("},\n");
    }
    o.Raw("  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ").Uint(base_).Raw(",\n");
    const ProfileInfo& i = p_.info;
    const Counters& c = p_.counters;
    o.Raw("  \"gprof\": {\"program\": ").String(i.program);
    o.Raw(", \"command_line\": ").String(i.command_line);
    o.Raw(", \"pid\": ").Uint(i.pid).Raw(", \"parent_pid\": ").Uint(i.parent_pid);
    o.Raw(", \"hostname\": ").String(i.hostname);
    o.Raw(", \"start_ns\": ").Uint(i.start_ns).Raw(", \"end_ns\": ").Uint(i.end_ns);
    o.Raw(", \"cycle\": ").Uint(i.cycle).Raw(", \"first_step\": ").Uint(i.first_step);
    o.Raw(", \"last_step\": ").Uint(i.last_step);
    o.Raw(", \"partial\": ").Raw(i.partial_window ? "true" : "false");
    o.Raw(", \"gpu_status\": ").String(i.gpu_status);
    o.Raw(", \"cupti_library\": ").String(i.cupti_library);
    o.Raw(",\n    \"counters\": {\"cupti_dropped_records\": ").Uint(c.cupti_dropped_records);
    o.Raw(", \"cupti_buffers_refused\": ").Uint(c.cupti_buffers_refused);
    o.Raw(", \"host_events_dropped\": ").Uint(c.host_events_dropped);
    o.Raw(", \"nvtx_unmatched_pops\": ").Uint(c.nvtx_unmatched_pops);
    o.Raw(", \"nvtx_ranges_open_at_end\": ").Uint(c.nvtx_ranges_open_at_end);
    o.Raw(", \"records_unknown_kind\": ").Uint(c.records_unknown_kind);
    o.Raw(", \"gpu_records_uncorrelated\": ").Uint(c.gpu_records_uncorrelated);
    o.Raw(", \"cupti_errors\": ").Uint(c.cupti_errors).Raw("}},\n");
  }

  void Begin(const char* ph) {
    out_.Raw(count_++ ? ",\n{\"ph\":\"" : "{\"ph\":\"").Raw(ph).Raw("\"");
  }

  void Meta(const char* name, uint32_t pid, const uint32_t* tid, const char* arg,
            const std::string* text, uint64_t number) {
    Begin("M");
    out_.Raw(",\"name\":\"").Raw(name).Raw("\",\"pid\":").Uint(pid);
    if (tid) out_.Raw(",\"tid\":").Uint(*tid);
    out_.Raw(",\"args\":{\"").Raw(arg).Raw("\":");
    if (text) out_.String(*text);
    else out_.Uint(number);
    out_.Raw("}}");
  }

  void WriteMetadata() {
    std::map<uint32_t, int> pids;  // pid -> -1 host, else device id
    pids[p_.info.pid] = -1;
    for (const DeviceInfo& d : p_.devices) pids.emplace(d.id, static_cast<int>(d.id));
    uint32_t last_pid = 0;
    bool have_last = false;
    for (const EvRef& e : events_) {
      if (have_last && e.pid == last_pid) continue;
      pids.emplace(e.pid, static_cast<int>(e.pid));
      last_pid = e.pid;
      have_last = true;
    }
    for (const auto& [pid, device] : pids) {
      std::string name, labels;
      uint64_t sort;
      if (device < 0) {
        name = p_.info.program + " (pid " + std::to_string(pid) + ")";
        labels = p_.info.rank >= 0 ? "CPU, rank " + std::to_string(p_.info.rank) : "CPU";
        sort = 0;
      } else {
        name = "GPU " + std::to_string(pid);
        for (const DeviceInfo& d : p_.devices) {
          if (d.id == pid) name += " " + std::string(p_.strings.Get(d.name));
        }
        labels = "GPU " + std::to_string(pid);
        sort = 1 + static_cast<uint64_t>(pid);
      }
      Meta("process_name", pid, nullptr, "name", &name, 0);
      Meta("process_labels", pid, nullptr, "labels", &labels, 0);
      Meta("process_sort_index", pid, nullptr, "sort_index", nullptr, sort);
    }
    // Every (pid, tid) that carries events gets a name: lanes got theirs while packing; marks
    // and counters may sit on tracks with no slices.
    std::map<std::pair<uint32_t, uint32_t>, TrackName> tracks = extra_tracks_;
    std::pair<uint32_t, uint32_t> last_track{0, 0};
    bool have_track = false;
    for (const EvRef& e : events_) {
      if (e.kind == Ev::kMemory) continue;
      if (have_track && last_track == std::make_pair(e.pid, e.tid)) continue;
      last_track = {e.pid, e.tid};
      have_track = true;
      if (!tracks.count({e.pid, e.tid})) {
        const bool host = e.pid == p_.info.pid;
        tracks[{e.pid, e.tid}] = {host ? ThreadName(e.tid) : StreamName(e.tid),
                                  std::min<uint32_t>(e.tid, 0x7fffffff)};
      }
    }
    for (const auto& [key, track] : tracks) {
      Meta("thread_name", key.first, &key.second, "name", &track.name, 0);
      Meta("thread_sort_index", key.first, &key.second, "sort_index", nullptr, track.sort_index);
    }
  }

  void Common(const char* cat, std::string_view name, const EvRef& e) {
    out_.Raw(",\"cat\":\"").Raw(cat).Raw("\",\"name\":").String(name);
    out_.Raw(",\"pid\":").Uint(e.pid).Raw(",\"tid\":").Uint(e.tid);
    out_.Raw(",\"ts\":").Micros(e.ts - base_);
  }

  void Slice(const char* cat, std::string_view name, const EvRef& e) {
    Begin("X");
    Common(cat, name, e);
    out_.Raw(",\"dur\":").Micros(Dur(e.ts, e.end));
  }

  // Kineto's occupancy estimates from the launch configuration and the device limits.
  void KernelOccupancy(JsonWriter& o, const LaunchConfig& lc) {
    const DeviceInfo* dev = nullptr;
    for (const DeviceInfo& d : p_.devices) {
      if (d.id == lc.device_id) dev = &d;
    }
    if (dev == nullptr || dev->num_sms == 0 || dev->warp_size == 0) return;
    const uint64_t blocks = uint64_t{lc.grid[0]} * lc.grid[1] * lc.grid[2];
    const uint64_t threads = uint64_t{lc.block[0]} * lc.block[1] * lc.block[2];
    const double blocks_per_sm = static_cast<double>(blocks) / dev->num_sms;
    const uint64_t warps_per_block = (threads + dev->warp_size - 1) / dev->warp_size;
    o.Raw(",\"blocks per SM\":").Fixed(blocks_per_sm, 2);
    o.Raw(",\"warps per SM\":").Fixed(blocks_per_sm * static_cast<double>(warps_per_block), 2);
    if (threads == 0 || dev->max_threads_per_sm == 0) return;
    // Resident blocks per SM: limited by threads, registers and shared memory.
    uint64_t limit = dev->max_threads_per_sm / threads;
    const uint64_t regs = uint64_t{lc.registers_per_thread} * warps_per_block * dev->warp_size;
    if (regs > 0 && dev->max_registers_per_sm > 0) limit = std::min(limit, dev->max_registers_per_sm / regs);
    const uint64_t shared = uint64_t{lc.static_shared_bytes} + lc.dynamic_shared_bytes;
    if (shared > 0 && dev->max_shared_memory_per_sm > 0) {
      limit = std::min(limit, dev->max_shared_memory_per_sm / shared);
    }
    const double active_blocks = std::min(static_cast<double>(limit), std::ceil(blocks_per_sm));
    const double max_warps = static_cast<double>(dev->max_threads_per_sm) / dev->warp_size;
    const double occupancy = active_blocks * static_cast<double>(warps_per_block) / max_warps * 100.0;
    o.Raw(",\"est. achieved occupancy %\":").Uint(static_cast<uint64_t>(std::min(occupancy, 100.0)));
  }

  void WriteEvent(const EvRef& e) {
    JsonWriter& o = out_;
    switch (e.kind) {
      case Ev::kStep: {
        const std::string name = "ProfilerStep#" + std::to_string(p_.steps[e.index].number);
        Slice("user_annotation", name, e);
        o.Char('}');
        break;
      }
      case Ev::kRange: {
        const HostRange& r = p_.ranges[e.index];
        Slice("user_annotation", p_.strings.Get(r.name), e);
        RangeArgs(r.domain, r.category, r.flags);
        o.Char('}');
        break;
      }
      case Ev::kMark: {
        const HostMark& m = p_.marks[e.index];
        Begin("i");
        Common("user_annotation", p_.strings.Get(m.name), e);
        o.Raw(",\"s\":\"t\"");
        RangeArgs(m.domain, m.category, 0);
        o.Char('}');
        break;
      }
      case Ev::kApi: {
        if (WriteApiFast(e)) break;
        const ApiCall& c = p_.api_calls[e.index];
        Slice(c.domain == ApiDomain::kDriver ? "cuda_driver" : "cuda_runtime", names_.ApiCallName(c), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(c.correlation_id);
        o.Raw(",\"cbid\":").Uint(c.cbid).Raw("}}");
        break;
      }
      case Ev::kKernel: {
        if (WriteKernelFast(e)) break;
        const Kernel& k = p_.kernels[e.index];
        static const LaunchConfig kNone{};
        const LaunchConfig& lc =
            k.launch_config < p_.launch_configs.size() ? p_.launch_configs[k.launch_config] : kNone;
        Slice("kernel", names_.KernelName(k.name), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(k.correlation_id);
        o.Raw(",\"External id\":").Uint(k.correlation_id);
        o.Raw(",\"device\":").Uint(lc.device_id).Raw(",\"context\":").Uint(lc.context_id);
        o.Raw(",\"stream\":").Uint(k.stream_id);
        o.Raw(",\"registers per thread\":").Uint(lc.registers_per_thread);
        o.Raw(",\"shared memory\":").Uint(uint64_t{lc.static_shared_bytes} + lc.dynamic_shared_bytes);
        KernelOccupancy(o, lc);
        o.Raw(",\"grid\":[").Uint(lc.grid[0]).Char(',').Uint(lc.grid[1]).Char(',').Uint(lc.grid[2]);
        o.Raw("],\"block\":[").Uint(lc.block[0]).Char(',').Uint(lc.block[1]).Char(',').Uint(lc.block[2]);
        o.Raw("]}}");
        break;
      }
      case Ev::kMemcpy: {
        const Memcpy& m = p_.memcpys[e.index];
        Slice("gpu_memcpy", MemcpyName(m), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(m.correlation_id);
        o.Raw(",\"External id\":").Uint(m.correlation_id);
        o.Raw(",\"device\":").Uint(m.device_id).Raw(",\"context\":").Uint(m.context_id);
        o.Raw(",\"stream\":").Uint(m.stream_id).Raw(",\"bytes\":").Uint(m.bytes);
        const uint64_t d = Dur(m.start_ns, m.end_ns);
        // bytes per ns == GB/s
        o.Raw(",\"memory bandwidth (GB/s)\":").Fixed(d ? static_cast<double>(m.bytes) / d : 0, 3);
        o.Raw("}}");
        break;
      }
      case Ev::kMemset: {
        const Memset& m = p_.memsets[e.index];
        Slice("gpu_memset", MemsetName(m), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(m.correlation_id);
        o.Raw(",\"External id\":").Uint(m.correlation_id);
        o.Raw(",\"device\":").Uint(m.device_id).Raw(",\"stream\":").Uint(m.stream_id);
        o.Raw(",\"bytes\":").Uint(m.bytes);
        const uint64_t d = Dur(m.start_ns, m.end_ns);
        o.Raw(",\"memory bandwidth (GB/s)\":").Fixed(d ? static_cast<double>(m.bytes) / d : 0, 3);
        o.Raw("}}");
        break;
      }
      case Ev::kSync: {
        const Sync& s = p_.syncs[e.index];
        Slice("cuda_sync", SyncName(s.kind), e);
        o.Raw(",\"args\":{\"correlation\":").Uint(s.correlation_id);
        o.Raw(",\"context\":").Uint(s.context_id);
        if (s.stream_id != kNoStream) o.Raw(",\"stream\":").Uint(s.stream_id);
        o.Raw("}}");
        break;
      }
      case Ev::kOverhead: {
        Slice("overhead", OverheadName(p_.overheads[e.index].kind), e);
        o.Char('}');
        break;
      }
      case Ev::kAnnotation: {
        const Annotation& a = annotations_[e.index];
        if (a.from_step) {
          Slice("gpu_user_annotation", "ProfilerStep#" + std::to_string(p_.steps[a.name_source].number), e);
        } else {
          Slice("gpu_user_annotation", p_.strings.Get(p_.ranges[a.name_source].name), e);
        }
        o.Raw(",\"args\":{\"device\":").Uint(e.pid).Raw("}}");
        break;
      }
      case Ev::kMemory: {
        Begin("C");
        Common("gpu_memory", "GPU " + std::to_string(e.pid) + " memory in use", e);
        o.Raw(",\"args\":{\"bytes\":").Uint(memory_[e.index].bytes_in_use).Raw("}}");
        break;
      }
      case Ev::kFlowStart:
      case Ev::kFlowEnd: {
        if (WriteFlowFast(e)) break;
        Begin(e.kind == Ev::kFlowStart ? "s" : "f");
        o.Raw(",\"id\":").Uint(e.index);
        Common("ac2g", "ac2g", e);
        if (e.kind == Ev::kFlowEnd) o.Raw(",\"bp\":\"e\"");
        o.Char('}');
        break;
      }
    }
  }

  // ---- fast paths: same bytes as the checked code above, one reserved region per event ----

  char* BeginAt(char* p, char ph) {
    p = PutRaw(p, count_++ ? ",\n{\"ph\":\"" : "{\"ph\":\"");
    *p++ = ph;
    *p++ = '"';
    return p;
  }

  char* CommonAt(char* p, std::string_view cat_and_name, const EvRef& e) {
    p = PutRaw(p, cat_and_name);
    p = PutRaw(p, ",\"pid\":");
    p = PutUint(p, e.pid);
    p = PutRaw(p, ",\"tid\":");
    p = PutUint(p, e.tid);
    p = PutRaw(p, ",\"ts\":");
    return PutMicros(p, e.ts - base_);
  }

  // ,"cat":"kernel","name":"<escaped name>"
  const std::string& KernelCatName(StringId name) {
    if (name >= kernel_json_.size()) kernel_json_.resize(name + 1u);
    std::string& s = kernel_json_[name];
    if (s.empty()) {
      s = ",\"cat\":\"kernel\",\"name\":";
      AppendJsonString(names_.KernelName(name), &s);
    }
    return s;
  }

  const KernelArgText& KernelArgs(uint32_t config) {
    if (config >= kernel_args_.size()) kernel_args_.resize(config + 1u);
    KernelArgText& t = kernel_args_[config];
    if (!t.tail.empty()) return t;
    static const LaunchConfig kNone{};
    const LaunchConfig& lc = config < p_.launch_configs.size() ? p_.launch_configs[config] : kNone;
    std::string& text = scratch_text_;
    JsonWriter& o = scratch_;
    text.clear();
    o.Raw(",\"device\":").Uint(lc.device_id).Raw(",\"context\":").Uint(lc.context_id);
    o.Flush();
    t.head = text;
    text.clear();
    o.Raw(",\"registers per thread\":").Uint(lc.registers_per_thread);
    o.Raw(",\"shared memory\":").Uint(uint64_t{lc.static_shared_bytes} + lc.dynamic_shared_bytes);
    KernelOccupancy(o, lc);
    o.Raw(",\"grid\":[").Uint(lc.grid[0]).Char(',').Uint(lc.grid[1]).Char(',').Uint(lc.grid[2]);
    o.Raw("],\"block\":[").Uint(lc.block[0]).Char(',').Uint(lc.block[1]).Char(',').Uint(lc.block[2]);
    o.Raw("]}}");
    o.Flush();
    t.tail = text;
    return t;
  }

  bool WriteKernelFast(const EvRef& e) {
    const Kernel& k = p_.kernels[e.index];
    const std::string& cat_name = KernelCatName(k.name);
    // Configs past the table take the checked path (it formats the empty configuration).
    if (k.launch_config >= p_.launch_configs.size()) return false;
    const KernelArgText& args = KernelArgs(k.launch_config);
    const size_t need = kEventSlack + cat_name.size() + args.head.size() + args.tail.size();
    if (need > kFastPathLimit) return false;
    char* p = BeginAt(out_.Reserve(need), 'X');
    p = CommonAt(p, cat_name, e);
    p = PutRaw(p, ",\"dur\":");
    p = PutMicros(p, Dur(e.ts, e.end));
    p = PutRaw(p, ",\"args\":{\"correlation\":");
    p = PutUint(p, k.correlation_id);
    p = PutRaw(p, ",\"External id\":");
    p = PutUint(p, k.correlation_id);
    p = PutRaw(p, args.head);
    p = PutRaw(p, ",\"stream\":");
    p = PutUint(p, k.stream_id);
    p = PutRaw(p, args.tail);
    out_.Commit(p);
    return true;
  }

  // ,"cat":"cuda_runtime","name":"<escaped name>"
  const std::string& ApiCatName(const ApiCall& c) {
    const uint32_t key = static_cast<uint32_t>(c.domain) << 16 | c.cbid;
    if (last_api_ != nullptr && key == last_api_key_) return *last_api_;
    std::string& s = api_json_[key];
    if (s.empty()) {
      s = c.domain == ApiDomain::kDriver ? ",\"cat\":\"cuda_driver\",\"name\":"
                                         : ",\"cat\":\"cuda_runtime\",\"name\":";
      AppendJsonString(names_.ApiCallName(c), &s);
    }
    last_api_key_ = key;
    last_api_ = &s;
    return s;
  }

  bool WriteApiFast(const EvRef& e) {
    const ApiCall& c = p_.api_calls[e.index];
    const std::string& cat_name = ApiCatName(c);
    const size_t need = kEventSlack + cat_name.size();
    if (need > kFastPathLimit) return false;
    char* p = BeginAt(out_.Reserve(need), 'X');
    p = CommonAt(p, cat_name, e);
    p = PutRaw(p, ",\"dur\":");
    p = PutMicros(p, Dur(e.ts, e.end));
    p = PutRaw(p, ",\"args\":{\"correlation\":");
    p = PutUint(p, c.correlation_id);
    p = PutRaw(p, ",\"cbid\":");
    p = PutUint(p, c.cbid);
    p = PutRaw(p, "}}");
    out_.Commit(p);
    return true;
  }

  bool WriteFlowFast(const EvRef& e) {
    const bool start = e.kind == Ev::kFlowStart;
    char* p = BeginAt(out_.Reserve(kEventSlack), start ? 's' : 'f');
    p = PutRaw(p, ",\"id\":");
    p = PutUint(p, e.index);
    p = CommonAt(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"", e);
    p = PutRaw(p, start ? "}" : ",\"bp\":\"e\"}");
    out_.Commit(p);
    return true;
  }

  void RangeArgs(uint16_t domain, uint32_t category, uint16_t flags) {
    const std::string_view dom =
        domain < p_.domains.size() ? p_.strings.Get(p_.domains[domain]) : std::string_view();
    bool any = false;
    const auto key = [&](const char* k) {
      out_.Raw(any ? ",\"" : ",\"args\":{\"").Raw(k).Raw("\":");
      any = true;
    };
    if (!dom.empty()) { key("domain"); out_.String(dom); }
    if (category != 0) { key("category"); out_.Uint(category); }
    if (flags & kRangeStartEnd) { key("start/end range"); out_.Raw("true"); }
    if (flags & kRangeOpenAtEnd) { key("open at end"); out_.Raw("true"); }
    if (any) out_.Char('}');
  }

 public:
  void ComputeBase() {
    uint64_t b = p_.info.start_ns ? p_.info.start_ns : UINT64_MAX;
    const auto at = [&](uint64_t t) { b = std::min(b, t); };
    for (const auto& r : p_.ranges) at(r.start_ns);
    for (const auto& m : p_.marks) at(m.ts_ns);
    for (const auto& c : p_.api_calls) at(c.start_ns);
    for (const auto& k : p_.kernels) at(k.start_ns);
    for (const auto& m : p_.memcpys) at(m.start_ns);
    for (const auto& m : p_.memsets) at(m.start_ns);
    for (const auto& s : p_.syncs) at(s.start_ns);
    for (const auto& m : p_.memory_ops) at(m.ts_ns);
    for (const auto& o : p_.overheads) at(o.start_ns);
    for (const auto& s : p_.steps) at(s.start_ns);
    base_ = b == UINT64_MAX ? 0 : b;
  }

 private:
  const Profile& p_;
  CorrelationIndex corr_;
  NameCache names_;
  JsonWriter& out_;
  std::string trace_name_;
  uint64_t base_ = 0;
  uint64_t count_ = 0;
  std::vector<EvRef> events_;
  std::map<LaneKey, std::vector<uint32_t>> lanes_;  // event indices per lane group
  LaneKey last_lane_key_{};
  std::vector<uint32_t>* last_lane_ = nullptr;  // lanes_[last_lane_key_] (map nodes do not move)
  std::vector<std::string> kernel_json_;      // by StringId
  std::vector<KernelArgText> kernel_args_;    // by launch config
  std::unordered_map<uint32_t, std::string> api_json_;  // (domain << 16 | cbid)
  uint32_t last_api_key_ = 0;
  const std::string* last_api_ = nullptr;
  std::string scratch_text_;  // what scratch_ formats (kernel args, once per configuration)
  JsonWriter scratch_{JsonSink{&scratch_text_, [](void* ctx, const char* data, size_t size) {
                                 static_cast<std::string*>(ctx)->append(data, size);
                               }}};
  std::vector<size_t> api_ev_;
  std::vector<size_t> gpu_ev_[3];
  std::vector<Annotation> annotations_;
  std::vector<MemoryPoint> memory_;
  std::map<std::pair<uint32_t, uint32_t>, TrackName> extra_tracks_;
  uint32_t next_synthetic_tid_ = 0x80000000u;
};

}  // namespace

TraceStats WriteTraceJson(const Profile& profile, const std::string& path) {
  JsonWriter out(path);
  const size_t slash = path.find_last_of('/');
  TraceWriter w(profile, &out, slash == std::string::npos ? path : path.substr(slash + 1));
  w.ComputeBase();
  return w.Write();
}

TraceStats FormatTraceJson(const Profile& profile, const std::string& trace_name, JsonSink sink) {
  JsonWriter out(sink);
  TraceWriter w(profile, &out, trace_name);
  w.ComputeBase();
  return w.Write();
}

std::string FormatTraceJson(const Profile& profile, const std::string& trace_name) {
  std::string text;
  FormatTraceJson(profile, trace_name, JsonSink{&text, [](void* ctx, const char* data, size_t size) {
                                                  static_cast<std::string*>(ctx)->append(data, size);
                                                }});
  return text;
}

}  // namespace gprof
