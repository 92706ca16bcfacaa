// Profile: everything one process recorded in one window, in memory. The collector builds it at
// window end / exit and hands it to the dump writer; the launcher's `report` reads it back from
// the dump and gives it to the exporters. Plain vectors of POD records plus a string table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/gpu_records.h"
#include "model/records.h"
#include "model/string_table.h"

namespace gprof {

// Losses and anomalies. Every one of these ends up in the closing message and in the outputs:
// a profile never loses data silently.
struct Counters {
  uint64_t cupti_dropped_records = 0;     // cuptiActivityGetNumDroppedRecords, summed
  uint64_t cupti_buffers_refused = 0;     // buffer requests we answered with no buffer (pool cap)
  uint64_t host_events_dropped = 0;       // host event arena full
  uint64_t nvtx_unmatched_pops = 0;       // nvtxRangePop / RangeEnd with nothing open
  uint64_t nvtx_ranges_open_at_end = 0;   // closed at the end of the profile and flagged
  uint64_t records_unknown_kind = 0;      // activity records of kinds we do not decode
  uint64_t gpu_records_uncorrelated = 0;  // GPU records whose launching API call is missing
  uint64_t cupti_errors = 0;              // CUPTI calls that failed mid-run
  uint64_t window_events_lost = 0;        // step boundaries lost (window event queue full)
  uint64_t window_starts_late = 0;        // window starts the window thread reached late
  uint64_t gpu_records_incomplete = 0;    // GPU records CUPTI handed back unfinished (no end time)
  uint64_t gpu_records_before_launch = 0; // GPU records starting > kLaunchSkewSlackNs before their call
  uint64_t gpu_launches_without_records = 0;  // successful launches whose GPU work never arrived
};

// Every counter with its name (as written in traces and closing lines) and what a non-zero value
// means for the profile, in one place: outputs iterate over this instead of listing fields.
// `f(const char* name, Value& value, const char* meaning)`; C is Counters or const Counters.
template <typename C, typename F>
void ForEachCounter(C& c, F&& f) {
  f("cupti_dropped_records", c.cupti_dropped_records,
    "GPU activity records dropped by CUPTI: GPU rows and CUDA totals are too low "
    "(raise GPROF_ACTIVITY_BUFFER_KIB / GPROF_ACTIVITY_POOL)");
  f("cupti_buffers_refused", c.cupti_buffers_refused,
    "CUPTI buffer requests refused (buffer pool full, or GPROF_PENDING_MIB of GPU records "
    "pending: the host ran ahead of the GPU): GPU records were lost, CUDA times are too low "
    "(raise GPROF_PENDING_MIB or GPROF_ACTIVITY_POOL)");
  f("host_events_dropped", c.host_events_dropped,
    "host events dropped (host buffer full): CPU rows and counts are too low "
    "(raise GPROF_HOST_BUFFER_MIB)");
  f("nvtx_unmatched_pops", c.nvtx_unmatched_pops,
    "NVTX pops/ends with no open range: the program's push/pop calls do not pair up, so "
    "some ranges may be missing or cut");
  f("nvtx_ranges_open_at_end", c.nvtx_ranges_open_at_end,
    "NVTX ranges still open at the end of the profile: they were closed there, so their "
    "times stop at the profile's end");
  f("records_unknown_kind", c.records_unknown_kind,
    "activity records of kinds gprof-run does not decode were skipped");
  f("gpu_records_uncorrelated", c.gpu_records_uncorrelated,
    "GPU records whose launching API call is missing: their time counts in the GPU rows but "
    "not in any CPU op's CUDA total");
  f("cupti_errors", c.cupti_errors,
    "CUPTI calls failed during the run: the GPU part of the profile may be incomplete "
    "(run with GPROF_LOG_LEVEL=info for details)");
  f("window_events_lost", c.window_events_lost,
    "step boundaries were lost (window event queue full): window step numbers may be off");
  f("window_starts_late", c.window_starts_late,
    "window starts found gprof's window thread behind: the first GPU records of the window "
    "may be missing");
  f("gpu_records_incomplete", c.gpu_records_incomplete,
    "GPU records CUPTI returned unfinished (work still running when the profile was saved, or no "
    "timing for lack of device memory): they are missing from GPU rows and the trace");
  f("gpu_records_before_launch", c.gpu_records_before_launch,
    "GPU records that start before the CUDA call that launched them: the GPU and host clocks "
    "disagree (another tool's timestamp callback, or a virtualized clock), so GPU times in the "
    "trace may be shifted");
  f("gpu_launches_without_records", c.gpu_launches_without_records,
    "kernel launches without a finished GPU record: CUPTI dropped the record or returned it "
    "unfinished (then also counted in gpu_records_incomplete), or another tool in the process "
    "(for example torch.profiler started by the program) took CUPTI's activity buffers or "
    "switched its activity off; their GPU time is missing");
}

static_assert(sizeof(Counters) <= 32 * sizeof(uint64_t), "AddCounters holds at most 32");

// Adds every counter of `from` to `into`.
inline void AddCounters(Counters* into, const Counters& from) {
  uint64_t values[32];
  size_t n = 0;
  ForEachCounter(from, [&](const char*, uint64_t v, const char*) { values[n++] = v; });
  size_t i = 0;
  ForEachCounter(*into, [&](const char*, uint64_t& v, const char*) { v += values[i++]; });
}

// What the collector itself cost on the program's threads while this profile was recorded
// (collector/host/host_cost.h: sampled, 1 hot-path event in 64), and the CUPTI activity buffers
// it was handed. Not a loss: the profiler_overhead finding reads it. 48 bytes.
struct CollectorCost {
  uint64_t api_samples = 0;       // CUDA API calls whose recording was timed
  uint64_t api_sample_ns = 0;     // their recording time, summed
  uint64_t range_samples = 0;     // NVTX / ITT range begins and ends timed
  uint64_t range_sample_ns = 0;
  uint64_t activity_buffers = 0;  // CUPTI activity buffers completed (full or flushed)
  uint64_t activity_bytes = 0;    // the bytes of records in them
};
static_assert(sizeof(CollectorCost) == 48);

inline void AddCollectorCost(CollectorCost* into, const CollectorCost& from) {
  into->api_samples += from.api_samples;
  into->api_sample_ns += from.api_sample_ns;
  into->range_samples += from.range_samples;
  into->range_sample_ns += from.range_sample_ns;
  into->activity_buffers += from.activity_buffers;
  into->activity_bytes += from.activity_bytes;
}

// One reading of the host's two clocks, for lining up ranks after the run
// (analysis/ranks/clock_align.h): CLOCK_REALTIME (the timeline's clock) and CLOCK_MONOTONIC, read
// back to back. realtime_ns is the middle of two realtime reads around the monotonic one, and
// read_ns their distance (the pair's uncertainty). realtime_ns 0: not recorded (an older dump).
// No TSC: every host time here is a clock_gettime reading, so none is needed.
struct ClockPair {
  uint64_t realtime_ns = 0;
  uint64_t monotonic_ns = 0;
  uint64_t read_ns = 0;
};

// What the kernel says of the host clock's synchronization (adjtimex(2) with modes 0).
struct NtpState {
  bool known = false;     // adjtimex answered
  int32_t state = 0;      // its return value: TIME_OK (0) ... TIME_ERROR (5: not synchronized)
  int32_t status = 0;     // timex.status (STA_* bits; STA_UNSYNC = 0x40)
  int64_t offset_ns = 0;  // timex.offset, in ns (us unless STA_NANO)
  int64_t maxerror_us = 0;
  int64_t esterror_us = 0;
};

// Where the process ran and its clocks (the dump's placement section; absent in older dumps,
// which read as all defaults).
struct ProcessPlacement {
  int32_t local_rank = -1;  // LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, ...
  int32_t node_rank = -1;   // GROUP_RANK, SLURM_NODEID, OMPI_COMM_WORLD_NODE_RANK, ...
  std::string boot_id;      // /proc/sys/kernel/random/boot_id: same host and boot, same clocks
  ClockPair clock_start;    // at collection start
  ClockPair clock_end;      // when the dump (or its last segment) was written
  NtpState ntp;             // at collection start
};

// What the profile covers and where it came from.
struct ProfileInfo {
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  std::string program;      // argv[0] basename / process name
  std::string command_line;
  std::string hostname;
  uint64_t start_ns = 0;    // collection start (CLOCK_REALTIME ns)
  uint64_t end_ns = 0;      // collection end
  int32_t rank = -1;        // from RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID
  int32_t world_size = -1;
  ProcessPlacement placement;
  // Schedule window this profile covers; cycle 0 with steps 0..0 means "the whole run".
  uint32_t cycle = 0;
  uint32_t first_step = 0;
  uint32_t last_step = 0;
  bool partial_window = false;  // an active window cut short by program exit
  std::string gpu_status;       // "collected", or why GPU collection was off (one line)
  std::string cupti_library;    // path of the libcupti that was used ("" if none)
  // CUPTI's clock against the host clock, checked once when GPU collection starts:
  // cuptiGetTimestamp read between two host clock reads. GPU timestamps are placed on the host
  // timeline as they are, so they are only right when the two clocks agree (WSL, or another
  // tool's cuptiActivityRegisterTimestampCallback, makes them differ).
  int64_t cupti_clock_offset_ns = 0;   // cuptiGetTimestamp - midpoint of the two host reads
  uint64_t cupti_clock_window_ns = 0;  // distance of the two host reads; 0: not checked
  // Set by the dump reader (not stored): the segments read (model/dump.h), and whether the dump
  // ended with the run's last one. An incomplete dump is what a program killed before
  // gprof-run's exit flush leaves: its completed segments, read up to `end_ns`.
  uint32_t segments = 1;
  bool complete = true;
  uint64_t incomplete_tail_bytes = 0;  // bytes of a last segment cut short, not read
  // Of an incomplete dump: launches made after its last GPU record ended, whose records would
  // have come in a later segment (not counted as gpu_launches_without_records).
  uint64_t incomplete_launches_in_flight = 0;
};

// The GPU clock agrees with the host clock when CUPTI's timestamp fell between the two host
// reads (with a little slack for the conversion).
inline constexpr uint64_t kClockCheckSlackNs = 1000;
inline bool CuptiClockAgrees(const ProfileInfo& i) {
  const int64_t half = static_cast<int64_t>(i.cupti_clock_window_ns / 2 + kClockCheckSlackNs);
  return i.cupti_clock_window_ns == 0 ||
         (i.cupti_clock_offset_ns >= -half && i.cupti_clock_offset_ns <= half);
}

// A GPU record may start this long before the API call that launched it before it counts as
// gpu_records_before_launch (the host stamps the call's start a little after it began).
inline constexpr uint64_t kLaunchSkewSlackNs = 5000;

// One allocator event of PyTorch's CUDA caching allocator (the Python hook's .torchmem file,
// analysis/samples/torch_memory.h): a tensor's block handed out or given back, or a segment the
// allocator took from or returned to CUDA (which CUPTI also records, as a cudaMalloc/cudaFree).
enum class TorchMemAction : uint8_t { kAlloc = 1, kFree = 2, kSegmentAlloc = 3, kSegmentFree = 4 };
struct TorchMemoryEvent {
  uint64_t ts_ns;    // CLOCK_REALTIME ns (torch records microseconds: see torch_memory.h)
  uint64_t address;
  uint64_t bytes;    // blocks: the request rounded as the allocator rounds it; a free: its block's
  uint32_t tid;      // the thread it is attributed to; 0: none (outside every op range)
  uint8_t device;
  TorchMemAction action;
  uint8_t by_time;   // 1: the thread was inferred from the time (the event carried no thread tag)
  uint8_t pad0;
};
static_assert(sizeof(TorchMemoryEvent) == 32);

// GPU records (kernels, memcpys, memsets, syncs, memory_ops, overheads) come from GpuRecords.
struct Profile : GpuRecords {
  ProfileInfo info;
  Counters counters;
  CollectorCost collector_cost;
  StringTable strings;
  std::vector<StringId> domains;  // NVTX domain names; index 0 is the default domain ("")
  std::vector<ThreadInfo> threads;
  std::vector<DeviceInfo> devices;
  std::vector<HostRange> ranges;
  std::vector<HostMark> marks;
  std::vector<ApiCall> api_calls;
  std::vector<ApiName> api_names;  // (domain, cbid) -> name for every API in api_calls
  std::vector<LaunchConfig> launch_configs;
  std::vector<Step> steps;
  // Native stacks (GPROF_BACKTRACE): deduplicated stacks, their PCs, which call has which, and
  // the modules that place the PCs. Empty when no call was selected.
  std::vector<NativeStack> stacks;
  std::vector<uint64_t> stack_pcs;
  std::vector<ApiStackRef> api_stacks;
  std::vector<ModuleInfo> modules;
  StackCounters stack_counters;
  // --cpu-sampling: native stack samples of the program's threads (stacks in `stacks` above).
  std::vector<CpuSample> cpu_samples;
  CpuSampleCounters cpu_sample_counters;
  // Each program thread's CPU time, sampled during the run (empty in dumps of older versions).
  std::vector<ThreadCpuSample> thread_cpu;
  // PyTorch's caching allocator, by time: attached by the launcher after reading the dump
  // (analysis/samples/torch_memory.h, from the Python hook's side file); never stored in a dump.
  std::vector<TorchMemoryEvent> torch_memory;

  Profile();
  bool HasGpuData() const {
    return !kernels.empty() || !memcpys.empty() || !memsets.empty();
  }
};

// Parents before children: ranges by start, then longest first, then thread; marks by time
// (stable). The order the exporters expect, made by the profile builder and again by the dump
// reader after joining segments.
void SortRangesAndMarks(Profile* p);

// The device a kernel ran on, from its launch config; 0 when the config is unknown (the exporters
// show such a kernel on device 0).
inline uint32_t KernelDeviceId(const Profile& p, const Kernel& k) {
  return k.launch_config < p.launch_configs.size() ? p.launch_configs[k.launch_config].device_id
                                                   : 0;
}

// "" when every string id and domain index in `p` points at something `p` holds (kNoString
// always does), every timestamp is below kMaxProfileTimeNs and every memcpy, memset and memory
// record's size below kMaxRecordBytes, else which record does not. The dump reader rejects a
// profile that fails this: a corrupt or hand-made dump must not make the exporters index past
// their tables or overflow their time and byte arithmetic.
inline constexpr uint64_t kMaxProfileTimeNs = uint64_t{1} << 62;  // CLOCK_REALTIME in year 2116
// 256 TiB: above any one device's or host's memory (an H200 has 141 GB), so above any one copy,
// set or allocation; sums of many such sizes still saturate (analysis/timeline/memory_timeline.h).
inline constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 48;
std::string CheckProfile(const Profile& p);

}  // namespace gprof
