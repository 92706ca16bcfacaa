// Which CUDA API calls become ApiCall records. Built once at start into a per-(domain, cbid) byte
// table so the API callback does one indexed load.
//
// Default filter: every runtime and driver call except polling and getter calls that a training
// loop makes thousands of times and that say nothing about where time goes (kDefaultDropped).
// GPROF_API_FILTER widens or narrows it: "all", "none", "default", plus "+name" (always record)
// and "-name" (never record). Names match with or without CUPTI's version suffix
// ("cudaMemcpy" matches "cudaMemcpy_v3020"; "cudaStreamSynchronize" matches its _ptsz variant).
//
// Threads: built on the start thread (cold); Record() is read-only from any thread afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace gprof::collector {

// The calls the default filter drops.
const std::vector<std::string_view>& DefaultDroppedApis();

// "cudaMemcpy_v3020" -> "cudaMemcpy"; "cudaStreamSynchronize_ptsz_v7000" -> "cudaStreamSynchronize".
std::string_view BaseApiName(std::string_view cupti_name);
// "__cudaLaunchKernel_v13000" -> "__cudaLaunchKernel" (version only; what tables show).
std::string_view DisplayApiName(std::string_view cupti_name);

// One table per domain: entry cbid is 1 when calls with that id are recorded. `names[cbid]` is the
// CUPTI name of the id ("" when unknown; unknown ids follow the base choice).
std::vector<uint8_t> BuildApiFilterTable(const ApiFilter& filter,
                                         const std::vector<std::string>& names);

// Launch-like callback ids (REFERENCE.md §1), for step detection and correlation checks.
bool IsRuntimeLaunchCbid(uint32_t cbid);
bool IsDriverLaunchCbid(uint32_t cbid);

}  // namespace gprof::collector
