// The findings rules, one function per id (or pair of ids), each appending what it found to `out`
// from the shared Analysis (findings_analysis.h). FindFindings (findings.cpp) runs them in this
// order and sorts the result. Internal to the findings; rules, thresholds and evidence fields are
// in docs/FINDINGS.md. Files: findings.cpp (bound), findings_host.cpp (gpu_idle, sync,
// cold_start), findings_copies.cpp (pageable_memcpy, serialized_copy, gemm_bias_copy),
// findings_kernels.cpp (kernel_spread, short_kernels, heavy_kernel), findings_overhead.cpp
// (profiler_overhead), findings_memory.cpp (memory_peak, memory_growth, alloc_churn).
#pragma once

#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/findings/findings_analysis.h"

namespace gprof {
struct CpuSampleNames;  // analysis/samples/cpu_samples.h
}
namespace gprof::findings_internal {

// The busiest device's busy time in the window and the host's (ranges and calls, less the time
// blocked in `blocking` calls): what overhead_bound / compute_bound compare.
struct GpuShares {
  uint32_t device = 0;
  uint64_t gpu_busy = 0, host_busy = 0;
};
GpuShares Shares(Analysis& a, const std::vector<BlockingCall>& blocking);
void BoundFindings(Analysis& a, const GpuShares& shares,
                   std::vector<Finding>* out);  // overhead_bound | compute_bound
// `cpu`: --cpu-sampling's named samples, or null: each gap then names the sampled host functions.
void GpuIdleFindings(Analysis& a, const CpuSampleNames* cpu, std::vector<Finding>* out);
// `python`: the sampled Python stacks, or nullptr (python_line evidence only with them).
void SyncFinding(Analysis& a, const std::vector<BlockingCall>& calls, const PythonSamples* python,
                 std::vector<Finding>* out);
void ColdStartFinding(Analysis& a, std::vector<Finding>* out);
void PageableFinding(Analysis& a, std::vector<Finding>* out);
void SerializedCopyFinding(Analysis& a, std::vector<Finding>* out);
void GemmBiasCopyFinding(Analysis& a, std::vector<Finding>* out);
void SpreadFindings(Analysis& a, std::vector<Finding>* out);
void ShortKernelsFinding(Analysis& a, std::vector<Finding>* out);
void HeavyKernelFinding(Analysis& a, std::vector<Finding>* out);
void ProfilerOverheadFinding(Analysis& a, std::vector<Finding>* out);
void MemoryFindings(Analysis& a, std::vector<Finding>* out);  // memory_peak, _growth, alloc_churn

}  // namespace gprof::findings_internal
