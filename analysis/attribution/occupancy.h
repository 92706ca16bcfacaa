// EstimateOccupancy: Kineto's occupancy estimate of a kernel launch from its launch configuration
// and the device limits (the "blocks per SM", "warps per SM" and "est. achieved occupancy %" args
// of a trace's kernel events). Pure arithmetic; launcher process only.
#pragma once

#include <cstdint>
#include <optional>

#include "model/records.h"

namespace gprof {

struct OccupancyEstimate {
  double blocks_per_sm;  // grid blocks / SMs
  double warps_per_sm;   // blocks_per_sm * warps per block (rounded up)
  // Resident blocks per SM (limited by threads, registers and shared memory, and by the grid)
  // times warps per block, over the SM's warp slots, in percent, truncated and at most 100.
  // Absent when the block is empty or the device does not give max_threads_per_sm.
  std::optional<uint64_t> achieved_percent;
};

// Absent when the device does not give num_sms or warp_size.
std::optional<OccupancyEstimate> EstimateOccupancy(const DeviceInfo& device,
                                                   const LaunchConfig& launch);

}  // namespace gprof
