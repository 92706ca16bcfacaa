// See rank_env.h.
#include "config/rank_env.h"

#include <climits>
#include <cstdlib>

namespace gprof {

void RankFromEnv(const std::map<std::string, std::string>& env, int32_t* rank, int32_t* world) {
  auto number = [&](const char* key, int32_t* out) {
    auto it = env.find(key);
    if (it == env.end() || it->second.empty()) return false;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || v < 0 || v > INT32_MAX) return false;
    *out = static_cast<int32_t>(v);
    return true;
  };
  *rank = -1;
  *world = -1;
  for (const char* key : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (number(key, rank)) break;
  }
  for (const char* key : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (number(key, world)) break;
  }
}


std::string RankLabel(int32_t rank, int32_t world_size) {
  if (rank < 0) return "";
  std::string digits = std::to_string(rank);
  if (world_size > 1) {
    const size_t width = std::to_string(world_size - 1).size();
    if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  }
  return digits;
}

}  // namespace gprof
