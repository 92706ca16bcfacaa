// The findings rules, one function per id (or pair of ids), each appending what it found to `out`
// from the shared Analysis (findings_analysis.h). FindFindings (findings.cpp) runs them in this
// order and sorts the result. Internal to the findings; rules, thresholds and evidence fields are
// in docs/FINDINGS.md. Files: findings.cpp (bound; the launching threads' CPU time it judges by
// in findings_host_cpu.cpp), findings_host.cpp (gpu_idle, sync,
// cold_start), findings_copies.cpp (pageable_memcpy, serialized_copy, gemm_bias_copy),
// findings_kernels.cpp (kernel_spread, short_kernels, heavy_kernel), findings_overhead.cpp
// (profiler_overhead), findings_memory.cpp (memory_peak, memory_growth, alloc_churn).
#pragma once

#include <optional>
#include <vector>

#include "analysis/attribution/thread_cpu.h"
#include "analysis/findings/findings.h"
#include "analysis/findings/findings_analysis.h"

namespace gprof {
struct CpuSampleNames;  // analysis/samples/cpu_samples.h
}
namespace gprof::findings_internal {

// The busiest device's busy time in the window and the host's (ranges and calls, less the time
// blocked in `blocking` calls): what overhead_bound / compute_bound compare. With thread CPU
// samples, also the busiest thread that launched GPU work in the window: its CPU time there, the
// part of its runnable time (running or waiting for a CPU) it spent inside blocking calls, its
// CPU time outside them (busy) and the window less its time waiting for a CPU (own): busy / own
// is the share of the time it would have computed had a CPU always been free, which other
// processes loading the machine stretch together. And how many threads launched.
struct GpuShares {
  uint32_t device = 0;
  uint64_t gpu_busy = 0, host_busy = 0;
  std::optional<ThreadCpu> launch_cpu;  // none without samples covering the window
  uint32_t launch_tid = 0;
  uint32_t launch_threads = 0;
  uint64_t launch_sync = 0;  // its runnable time inside blocking calls
  uint64_t launch_busy = 0;  // its CPU time outside them (in proportion: cpu / runnable)
  uint64_t launch_own = 0;   // the window less its time waiting for a CPU
};
// Fills `s`'s launch_* fields from the profile's thread CPU samples (findings_host_cpu.cpp).
void LaunchThreadCpu(Analysis& a, const std::vector<BlockingCall>& blocking, GpuShares* s);
GpuShares Shares(Analysis& a, const std::vector<BlockingCall>& blocking);
void BoundFindings(Analysis& a, const GpuShares& shares,
                   std::vector<Finding>* out);  // overhead_bound | compute_bound
// `cpu`: --cpu-sampling's named samples, or null: each gap then names the sampled host functions.
void GpuIdleFindings(Analysis& a, const CpuSampleNames* cpu, const PythonSamples* python,
                     std::vector<Finding>* out);
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
void DataLoaderFinding(Analysis& a, std::vector<Finding>* out);  // findings_dataloader.cpp
void MemoryFindings(Analysis& a, std::vector<Finding>* out);  // memory_peak, _growth, alloc_churn

}  // namespace gprof::findings_internal
