// EstimateOccupancy (see occupancy.h). Moved out of the trace JSON writer; the arithmetic (and its
// doubles, which reach the trace as fixed-point text) is unchanged.
#include "analysis/attribution/occupancy.h"

#include <algorithm>
#include <cmath>

namespace gprof {

std::optional<OccupancyEstimate> EstimateOccupancy(const DeviceInfo& dev, const LaunchConfig& lc) {
  if (dev.num_sms == 0 || dev.warp_size == 0) return std::nullopt;
  const uint64_t blocks = uint64_t{lc.grid[0]} * lc.grid[1] * lc.grid[2];
  const uint64_t threads = uint64_t{lc.block[0]} * lc.block[1] * lc.block[2];
  OccupancyEstimate est;
  est.blocks_per_sm = static_cast<double>(blocks) / dev.num_sms;
  const uint64_t warps_per_block = (threads + dev.warp_size - 1) / dev.warp_size;
  est.warps_per_sm = est.blocks_per_sm * static_cast<double>(warps_per_block);
  if (threads == 0 || dev.max_threads_per_sm == 0) return est;
  // Resident blocks per SM: limited by threads, registers and shared memory.
  uint64_t limit = dev.max_threads_per_sm / threads;
  const uint64_t regs = uint64_t{lc.registers_per_thread} * warps_per_block * dev.warp_size;
  if (regs > 0 && dev.max_registers_per_sm > 0) {
    limit = std::min(limit, dev.max_registers_per_sm / regs);
  }
  const uint64_t shared = uint64_t{lc.static_shared_bytes} + lc.dynamic_shared_bytes;
  if (shared > 0 && dev.max_shared_memory_per_sm > 0) {
    limit = std::min(limit, dev.max_shared_memory_per_sm / shared);
  }
  const double active_blocks = std::min(static_cast<double>(limit), std::ceil(est.blocks_per_sm));
  const double max_warps = static_cast<double>(dev.max_threads_per_sm) / dev.warp_size;
  const double occupancy = active_blocks * static_cast<double>(warps_per_block) / max_warps * 100.0;
  est.achieved_percent = static_cast<uint64_t>(std::min(occupancy, 100.0));
  return est;
}

}  // namespace gprof
