// KeyAverages: the per-name statistics behind the table, torch's key_averages() (launcher process
// only). Semantics (REFERENCE.md §2 and docs in key_averages.cpp):
//   host events on one thread (push/pop NVTX ranges, steps, API calls) nest by time;
//   Self CPU = duration minus direct children, CPU total = duration;
//   an API call's CUDA total = GPU time of the records with its correlation id;
//   a range's CUDA total = GPU time launched by API calls that started inside it on its thread
//   (by correlation), a step's = GPU time launched during it from any thread (by step time);
//   the rules are in gpu_attribution.h, shared with the trace's gpu_user_annotation spans;
//   GPU rows (kernels, memcpys, memsets): Self CUDA = CUDA total = duration, no CPU time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gprof {

struct EventStats {
  std::string name;
  uint64_t count = 0;
  uint64_t self_cpu_ns = 0;
  uint64_t cpu_total_ns = 0;
  uint64_t self_cuda_ns = 0;
  uint64_t cuda_total_ns = 0;
};

// One entry per distinct name, ordered by name. Steps (Profile::steps, kRangeStep ranges and
// ranges named ProfilerStep#N) are grouped under "ProfilerStep*".
std::vector<EventStats> KeyAverages(const Profile& profile);

}  // namespace gprof
