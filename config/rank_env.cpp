// See rank_env.h.
#include "config/rank_env.h"

#include <climits>
#include <cstdlib>
#include <initializer_list>

namespace gprof {

namespace {

// The first of `keys` set to a number 0..INT32_MAX; -1 when none is.
int32_t FirstNumber(const std::map<std::string, std::string>& env,
                    std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    auto it = env.find(key);
    if (it == env.end() || it->second.empty()) continue;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || v < 0 || v > INT32_MAX) continue;
    return static_cast<int32_t>(v);
  }
  return -1;
}

}  // namespace

void RankFromEnv(const std::map<std::string, std::string>& env, int32_t* rank, int32_t* world) {
  *rank = FirstNumber(env, {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                            "SLURM_PROCID"});
  *world = FirstNumber(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
}

void NodePlaceFromEnv(const std::map<std::string, std::string>& env, int32_t* local_rank,
                      int32_t* node) {
  *local_rank = FirstNumber(env, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                  "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"});
  *node = FirstNumber(env, {"GROUP_RANK", "SLURM_NODEID"});
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
