// The rank and world size of a distributed job's process, from the variables its launcher sets.
// Shared by the launcher (output template %r) and the injection library (ProfileInfo::rank).
// Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace gprof {

// Rank and world size from RANK/WORLD_SIZE (torchrun), OMPI_COMM_WORLD_RANK/SIZE (Open MPI),
// PMI_RANK/PMIX_RANK (PMI_SIZE: MPICH, Intel MPI, PMIx), SLURM_PROCID/SLURM_NTASKS (srun),
// first match wins; -1 when unknown.
void RankFromEnv(const std::map<std::string, std::string>& env, int32_t* rank, int32_t* world);

// The rank on this node and the node's index, first set wins; -1 when unknown.
// Local rank: LOCAL_RANK (torchrun), OMPI_COMM_WORLD_LOCAL_RANK (Open MPI), MPI_LOCALRANKID
// (MPICH and Intel MPI's Hydra), MV2_COMM_WORLD_LOCAL_RANK (MVAPICH2), SLURM_LOCALID (srun).
// Node: GROUP_RANK (torchrun's --node-rank), SLURM_NODEID (srun). Open MPI sets no node index
// (its OMPI_COMM_WORLD_NODE_RANK is a rank on the node across all jobs, not the node).
void NodePlaceFromEnv(const std::map<std::string, std::string>& env, int32_t* local_rank,
                      int32_t* node);

// The rank for file names: zero-padded to the width of world_size - 1 ("03" of 16), unpadded
// when the world size is unknown; "" when the rank is.
std::string RankLabel(int32_t rank, int32_t world_size);

}  // namespace gprof
