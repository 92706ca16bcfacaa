// CUDA API names as CUPTI spells them, reduced to what tables show and what matching compares
// (pure; used by the collector's API filter and step sources, and by the exporters' findings).
#pragma once

#include <string_view>

namespace gprof {

// The name a user means (API filter, GPROF_STEP=api:NAME, the findings' sync rule): strips a
// version suffix (_vNNNN) and then _ptsz/_ptds. "cudaMemcpy_v3020" -> "cudaMemcpy";
// "cudaStreamSynchronize_ptsz_v7000" -> "cudaStreamSynchronize"; "cudaLaunchKernel" ->
// "cudaLaunchKernel". No allocation: returns a view into its argument; any thread.
std::string_view BaseApiName(std::string_view cupti_name);
// "__cudaLaunchKernel_v13000" -> "__cudaLaunchKernel" (version only; what tables show).
std::string_view DisplayApiName(std::string_view cupti_name);

}  // namespace gprof
