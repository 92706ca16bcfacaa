// TracePlan: what a trace shows, derived once from a Profile and shared by both trace writers
// (trace_json.cpp: Kineto-flavoured JSON; perfetto_trace.cpp: Perfetto protobuf). Launcher process
// and benchmarks only.
//
// The plan lists every event as a small fixed-size reference (no text), places slices on lanes so
// that slices on one (pid, tid) nest, pairs each launching API call with its first GPU record
// (ac2g flows), turns allocations into a bytes-in-use counter per device, and sorts everything by
// (ts, longest first, kind, pid, tid, index). Names are left to the writers (names.h).
//
// Tracks: host events use pid = OS pid, tid = OS tid; push/pop ranges, steps and API calls share
// the thread's track (they nest by construction). Start/end ranges (which may cross threads and
// push/pop ranges) and CUPTI overhead get their own tracks per thread. GPU work uses pid = device,
// tid = stream (as Kineto); work that does not nest on its stream (concurrent records,
// gpu_user_annotation spans of two threads) moves to an overflow track. Overflow and extra tracks
// get synthetic tids from kFirstSyntheticTid up (above any OS tid), named after their track.
//
// gpu_user_annotation: each NVTX range and step is projected onto the GPU lanes as one span per
// (device, stream) covering the GPU work it owns; ownership is gpu_attribution.h's rule (ranges by
// correlation to the launching call on their own thread, steps by step time from any thread),
// the same rule as the table's CUDA totals.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/attribution/correlation_index.h"
#include "analysis/timeline/memory_timeline.h"
#include "model/profile.h"

namespace gprof {

enum class TraceEventKind : uint8_t {
  // Order matters: at equal times, parents are listed first.
  kStep, kRange, kAnnotation, kApi, kSync, kKernel, kMemcpy, kMemset, kOverhead, kMark,
  kMemory, kMemoryPeak,
};

struct PlannedEvent {
  uint64_t ts;
  uint64_t end;
  uint32_t pid;
  uint32_t tid;    // after lane packing: the OS tid / stream, or a synthetic lane tid
  uint32_t index;  // into the profile vector of its kind, annotations(), memory points; flows:
                   // the correlation id
  TraceEventKind kind;
};
static_assert(sizeof(PlannedEvent) == 32);

// A gpu_user_annotation span: named after an NVTX range or a step.
struct GpuAnnotation {
  uint32_t name_source;  // range index, or step index when from_step
  bool from_step;
};

// One ac2g flow: the first API call with a correlation id and the earliest GPU record it launched.
struct PlannedFlow {
  uint32_t correlation_id;
  uint32_t api_index;  // into Profile::api_calls
  GpuKind gpu_kind;
  uint32_t gpu_index;  // into Profile::kernels / memcpys / memsets
};

struct TraceProcess {
  uint32_t pid;
  bool host;            // the profiled process (else a GPU, pid = device id)
  std::string name;     // "train (pid 1234)", "GPU 0 NVIDIA H200"
  std::string labels;   // "CPU, rank 0", "GPU 0"
  uint32_t sort_index;  // host 0, GPU d: 1 + d
};

struct TraceTrack {
  uint32_t pid;
  uint32_t tid;
  std::string name;     // thread name, "stream 7", "stream 7 (overlapping work 1)", ...
  uint32_t sort_index;
};

inline constexpr uint32_t kFirstSyntheticTid = 0x80000000u;
// The track of a GPU's memory peak marker (an instant event "peak memory in use: 2.00 GB" where
// the device's bytes in use were highest), below the synthetic lanes.
inline constexpr uint32_t kMemoryPeakTid = 0x7ffffff0u;
inline constexpr uint32_t kNoStream = 0xffffffffu;

// The trace's time origin (baseTimeNanoseconds): the profile's start or its earliest event,
// whichever is first. Every "ts" in the traces, and the findings' places, are relative to it.
uint64_t TraceOriginNs(const Profile& profile);

class TracePlan {
 public:
  explicit TracePlan(const Profile& profile);
  TracePlan(const TracePlan&) = delete;
  TracePlan& operator=(const TracePlan&) = delete;

  const Profile& profile() const { return p_; }
  // Sorted by (ts, longest first, kind, pid, tid, index).
  const std::vector<PlannedEvent>& events() const { return events_; }
  const std::vector<GpuAnnotation>& annotations() const { return annotations_; }
  const std::vector<PlannedFlow>& flows() const { return flows_; }
  // Bytes in use on the event's device after a kMemory event (index = its memory point).
  uint64_t MemoryInUse(uint32_t index) const { return memory_[index]; }
  // Whether memory point `index` is of torch's caching allocator (Profile::torch_memory: bytes
  // its blocks hold) rather than CUDA's records (bytes the program holds from CUDA).
  bool MemoryIsTorch(uint32_t index) const { return memory_torch_[index]; }
  // Earliest timestamp of the profile (collection start or first event); 0 when empty.
  uint64_t base_ns() const { return base_; }

  // Every pid that carries events, plus the host and every device, by pid.
  std::vector<TraceProcess> Processes() const;
  // Every (pid, tid) that carries events other than counters, by (pid, tid).
  std::vector<TraceTrack> Tracks() const;

  // The native stack of an API call (GPROF_BACKTRACE) as a JSON array of frame strings,
  // innermost first (`["middle() (prog.cu:12)","outer()",...]`), or nullptr when it has none.
  // Symbolized once per plan (native_symbols.h), on the first call.
  const std::string* ApiStackJson(uint32_t correlation_id) const;

  std::string ThreadName(uint32_t tid) const;
  static std::string StreamName(uint32_t stream);
  static std::string StepName(uint32_t number) { return "ProfilerStep#" + std::to_string(number); }
  // Name of a gpu_user_annotation span.
  std::string AnnotationName(const GpuAnnotation& a) const;
  // Name of the bytes-in-use counter of a device: CUDA's view, or torch's allocated blocks.
  static std::string MemoryCounterName(uint32_t device, bool torch = false) {
    return "GPU " + std::to_string(device) + (torch ? " memory allocated by torch" : " memory in use");
  }
  // Name of the peak marker at memory point `index`.
  std::string MemoryPeakName(uint32_t index) const;

 private:
  // Which lane group an event is packed in: (pid, tid, group). Group 0 is the thread / stream
  // itself, 1 = start/end ranges of a thread, 2 = CUPTI overhead of a thread.
  using LaneKey = std::tuple<uint32_t, uint32_t, uint8_t>;

  uint32_t DeviceOfContext(uint32_t context) const;
  uint32_t KernelDevice(const Kernel& k) const;
  void Add(TraceEventKind kind, uint64_t ts, uint64_t end, uint32_t pid, uint32_t tid,
           uint32_t index, uint8_t group);
  void Plan();
  // A gpu_user_annotation span: one per (device, stream) a range or step owns GPU work on.
  struct AnnotationSpan {
    GpuAnnotation annotation;
    uint32_t device, stream;
    uint64_t start, end;
  };
  std::vector<AnnotationSpan> AnnotationSpans() const;
  void PlanAnnotations(const std::vector<AnnotationSpan>& spans);
  void PlanMemory(const std::vector<MemoryEvent>& memory,
                  const std::vector<TorchMemoryPoint>& torch_memory);
  void AssignLanes();
  TraceTrack ExtraTrack(uint32_t pid, uint32_t tid, uint32_t lane_tid, uint8_t group,
                        uint32_t lane) const;
  void PlanFlows();
  void ComputeBase();

  const Profile& p_;
  CorrelationIndex corr_;
  uint64_t base_ = 0;
  std::vector<PlannedEvent> events_;
  std::map<LaneKey, std::vector<uint32_t>> lanes_;  // event indices per lane group
  LaneKey last_lane_key_{};
  std::vector<uint32_t>* last_lane_ = nullptr;  // lanes_[last_lane_key_] (map nodes do not move)
  std::vector<GpuAnnotation> annotations_;
  std::vector<uint64_t> memory_;
  std::vector<bool> memory_torch_;  // per memory point: MemoryIsTorch
  std::vector<PlannedFlow> flows_;
  std::map<std::pair<uint32_t, uint32_t>, TraceTrack> extra_tracks_;
  uint32_t next_synthetic_tid_ = kFirstSyntheticTid;
  // ApiStackJson's lazily built tables: the stack index, and each stack's JSON text.
  mutable bool stacks_ready_ = false;
  mutable std::vector<ApiStackRef> stack_refs_;  // sorted by correlation id
  mutable std::vector<std::string> stack_json_;
};

}  // namespace gprof
