// Profile: everything one process recorded in one window, in memory. The collector builds it at
// window end / exit and hands it to the dump writer; the launcher's `report` reads it back from
// the dump and gives it to the exporters. Plain vectors of POD records plus a string table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  // Schedule window this profile covers; cycle 0 with steps 0..0 means "the whole run".
  uint32_t cycle = 0;
  uint32_t first_step = 0;
  uint32_t last_step = 0;
  bool partial_window = false;  // an active window cut short by program exit
  std::string gpu_status;       // "collected", or why GPU collection was off (one line)
  std::string cupti_library;    // path of the libcupti that was used ("" if none)
};

struct Profile {
  ProfileInfo info;
  Counters counters;
  StringTable strings;
  std::vector<StringId> domains;  // NVTX domain names; index 0 is the default domain ("")
  std::vector<ThreadInfo> threads;
  std::vector<DeviceInfo> devices;
  std::vector<HostRange> ranges;
  std::vector<HostMark> marks;
  std::vector<ApiCall> api_calls;
  std::vector<ApiName> api_names;  // (domain, cbid) -> name for every API in api_calls
  std::vector<LaunchConfig> launch_configs;
  std::vector<Kernel> kernels;
  std::vector<Memcpy> memcpys;
  std::vector<Memset> memsets;
  std::vector<Sync> syncs;
  std::vector<MemoryOp> memory_ops;
  std::vector<Overhead> overheads;
  std::vector<Step> steps;

  Profile();
  bool HasGpuData() const {
    return !kernels.empty() || !memcpys.empty() || !memsets.empty();
  }
};

}  // namespace gprof
