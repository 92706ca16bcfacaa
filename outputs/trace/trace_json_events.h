// TraceEventWriter: the entries of the trace JSON's "traceEvents" array, one planned event
// (trace_plan.h) at a time, launcher process only. trace_json.cpp writes the document around them
// (header, process and thread metadata, trace name).
//
// One formatting path per event kind. API calls and kernels (the two events of a launch; the
// ac2g flow between them rides on both as bind_id, flow v2) are the hot ones: their variable
// text (the escaped "cat"/"name" pair, the launch-configuration part of a kernel's args) is
// formatted once per distinct value and copied,
// and their numbers are written with the Put* helpers into a bounded region of the JsonWriter
// (json_writer.h Reserve/Commit). A name has no size bound, so it always goes through
// JsonWriter::Raw, never into a region.
//
// Args are Kineto's names, limited to those a consumer reads (docs/TRACE_JSON.md has the table
// with the lines of HTA, TensorBoard's plugin and Perfetto that read them): Kineto's "context"
// and "warps per SM" on kernels, "context" on copies and "cbid" on API calls are left out (read
// only by HTA's opt-in ARGS_COMPLETE, which fills its defaults for absent args); times are exact
// microseconds without trailing zeros (text/format.h FormatMicros).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/attribution/names.h"
#include "analysis/timeline/trace_plan.h"
#include "outputs/trace/fwdbwd_links.h"
#include "text/json_writer.h"

namespace gprof {

// Where the writer puts a profile's events. A trace of one profile (the default) keeps the plan's
// origin, pids and correlation ids. A trace of several profiles (merge.h) gives every profile its
// own pids and flow ids (OS pids, device ids and correlation ids repeat across processes) and one
// time origin for all of them.
struct TracePlacement {
  uint64_t origin_ns = 0;     // "ts" = time - origin_ns; at most the plan's base_ns()
  uint32_t pid_base = 0;      // 0: the plan's pids; else host -> pid_base, device d -> pid_base+1+d
  uint64_t flow_id_base = 0;  // added to every flow id (from the correlation id)
};

class TraceEventWriter {
 public:
  // Writes to `out`; `plan` and `out` must outlive the writer. One profile's trace.
  TraceEventWriter(const TracePlan& plan, JsonWriter* out);
  // `entries_before`: entries already in the array (another profile's), so that the first entry
  // of this writer is preceded by a comma.
  TraceEventWriter(const TracePlan& plan, JsonWriter* out, const TracePlacement& placement,
                   uint64_t entries_before);
  TraceEventWriter(const TraceEventWriter&) = delete;
  TraceEventWriter& operator=(const TraceEventWriter&) = delete;

  // Starts the next entry: {"ph":"<ph>", after ",\n" unless it is the first one.
  void Begin(const char* ph);
  // Writes one planned event as one entry.
  void Write(const PlannedEvent& e);
  // The metadata entries of a process (process_name, process_labels, process_sort_index) and of
  // a track (thread_name, thread_sort_index), at their placed pid.
  void WriteProcess(const TraceProcess& process);
  void WriteTrack(const TraceTrack& track);
  // For a document cut into parts after the plan's first `written` events (segmented_trace.h):
  // the GPU records whose launching call was among them lose their flow end (its start is in
  // the part before, and a flow end without its start is one Perfetto's importer drops).
  void DropFlowsOfCallsIn(size_t written);
  // Entries started so far (metadata included).
  uint64_t count() const { return count_; }
  // The Python line python_sync.h attributed to blocking calls, by Profile::api_calls index
  // ("function (file:line)"): each such call's event gets args python_line and
  // python_line_source "sampled", and with `stacks` (by the same index: a JSON array of frames,
  // innermost first) args python_stack. Both must outlive the writer; nullptr: none.
  void SetApiPythonLines(const std::unordered_map<uint32_t, std::string>* lines,
                         const std::unordered_map<uint32_t, std::string>* stacks = nullptr) {
    api_python_lines_ = lines;
    api_python_stacks_ = stacks;
  }

 private:
  // The launch-configuration part of a kernel's args, formatted once per configuration.
  struct KernelArgText {
    std::string head;  // ,"device":D
    std::string tail;  // ,"registers per thread":...,"block":[x,y,z]}}
  };

  // The pid an event or track of the plan has in the trace.
  uint32_t Pid(uint32_t pid) const {
    if (placement_.pid_base == 0) return pid;
    return pid == host_pid_ ? placement_.pid_base : placement_.pid_base + 1 + pid;
  }
  // {"ph":"M","name":...,"pid":P[,"tid":T],"args":{"<arg>":<text or number>}}.
  void Meta(const char* name, uint32_t pid, const uint32_t* tid, const char* arg,
            const std::string* text, uint64_t number);
  void Common(const char* cat, std::string_view name, const PlannedEvent& e);
  void Slice(const char* cat, std::string_view name, const PlannedEvent& e);
  // `torch`: the range whose torch op details (kRangeTorch) to add, or nullptr; `link`: its
  // end of a fwdbwd flow, or nullptr.
  void RangeArgs(uint16_t domain, uint32_t category, uint16_t flags,
                 const HostRange* torch = nullptr, const FwdBwdEnd* link = nullptr);
  void WriteFwdBwdFlow(const PlannedEvent& e, const FwdBwdEnd& end);

  char* BeginAt(char* p, char ph);
  char* PidTidTsAt(char* p, const PlannedEvent& e);
  char* BeginNamed(char ph, std::string_view cat_and_name, size_t room);
  const std::string& ApiCatName(const ApiCall& c);
  const std::string& KernelCatName(StringId name);
  const KernelArgText& KernelArgs(uint32_t config);
  void AppendOccupancy(JsonWriter& o, const LaunchConfig& lc);
  void WriteApi(const PlannedEvent& e);
  void WriteKernel(const PlannedEvent& e);
  // The ac2g flow the call / GPU record is an end of: ,"bind_id":N,"flow_out":true on the
  // launching call, ,"flow_in":true on the GPU record (flow v2); nothing when it has none.
  char* BindAt(char* p, uint32_t correlation, bool out);
  void WriteBind(uint32_t correlation, bool out);
  uint32_t GpuFlow(GpuKind kind, uint32_t index) const;

  const TracePlan& plan_;
  const Profile& p_;
  NameCache names_;
  JsonWriter& out_;
  const TracePlacement placement_;
  const uint32_t host_pid_;
  const uint64_t base_;  // placement_.origin_ns
  uint64_t count_ = 0;
  std::vector<std::string> kernel_json_;    // by StringId
  // By launch config; the last slot is the empty configuration (an index past the table).
  std::vector<KernelArgText> kernel_args_;
  std::unordered_map<uint32_t, std::string> api_json_;  // (domain << 16 | cbid)
  uint32_t last_api_key_ = 0;
  const std::string* last_api_ = nullptr;
  std::string scratch_text_;  // what scratch_ formats (kernel args, once per configuration)
  JsonWriter scratch_;
  const std::unordered_map<uint32_t, std::string>* api_python_lines_ = nullptr;
  const std::unordered_map<uint32_t, std::string>* api_python_stacks_ = nullptr;
  const std::unordered_map<uint32_t, FwdBwdEnd> fwdbwd_;  // by range index (fwdbwd_links.h)
  // The correlation id of the ac2g flow each API call starts / GPU record ends, 0 for none
  // (TracePlan::flows()); GPU records by GpuKind, kernels, copies and memsets only.
  std::vector<uint32_t> api_flow_;
  std::array<std::vector<uint32_t>, 3> gpu_flow_;
};

// fwdbwd flow ids start above every correlation id (32-bit), so they never meet an ac2g id.
inline constexpr uint64_t kFwdBwdFlowIdBase = uint64_t{1} << 40;
// ac2g bind_ids are kAc2gBindIdBase + flow_id_base + the correlation id. Perfetto numbers the v1
// (ph s/f) flows it reads 0, 1, 2, ... in the same id space as bind_ids (flow_tracker.h,
// v1_id_counter_, 32-bit), so bind_ids start above 2^32 to never meet a fwdbwd flow there.
inline constexpr uint64_t kAc2gBindIdBase = uint64_t{1} << 32;

}  // namespace gprof
