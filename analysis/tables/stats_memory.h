// The memory_sum report of `gprof-run stats` (stats.h): CUDA's allocations and frees per owner,
// where the owner of a record is what owns it in the table's Self memory columns
// (key_averages.h): the innermost NVTX push/pop range (not a step) around the API call that made
// it, on the call's thread; else the API call itself; else "[unattributed]" (a record whose call
// was not recorded). In a torch program with --profile-memory the caching allocator's blocks
// (Profile::torch_memory) count instead of its segments, each owned by the innermost range on its
// thread at its time, else "[memory]" (torch's row), with Peak In Use the bytes torch's blocks
// hold. Launcher process only. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "model/profile.h"

namespace gprof {

inline constexpr std::string_view kMemoryReportName = "memory_sum";
inline constexpr std::string_view kTorchMemoryOwner = "[memory]";

struct MemoryOwnerRow {
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t allocated_bytes = 0;  // sum of the allocations' sizes
  int64_t net_bytes = 0;         // allocated minus freed (a free counts its allocation's size)
  uint64_t largest_bytes = 0;    // the largest single allocation
  // The most device memory in use (all devices; pinned host memory not included) right after
  // any allocation of this owner.
  uint64_t peak_in_use_bytes = 0;
};

// Adds the memory records of `p` to `rows`, by owner name.
void AddMemoryOwners(const Profile& p, std::map<std::string, MemoryOwnerRow>* rows);

// Device memory in use (all devices together; pinned host memory not included): the peak of
// the profile and of each step, for the trace's metadata.
struct StepMemoryPeak {
  uint32_t step = 0;
  uint64_t peak_bytes = 0;  // the most in use at any time in [start, end)
};
struct MemoryPeaks {
  uint64_t peak_bytes = 0;
  uint64_t peak_ns = 0;  // when first reached (absolute)
  std::vector<StepMemoryPeak> steps;
};
// `steps` as (number, start, end); in use at a step's start counts for it.
MemoryPeaks DeviceMemoryPeaks(const Profile& p,
                              const std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>& steps);

}  // namespace gprof
