// The step-time breakdown, as TensorBoard's PyTorch profiler plugin shows it on its overview
// page: each step's wall time split into Kernel, Memcpy, Memset, Runtime, DataLoader, CPU Exec
// and Other, each slice the time of its category that no category before it in that order
// claimed (torch_tb_profiler's OverallParser: kineto tb_plugin overall_parser.py and
// event_parser.py ProfileRole). How each slice is computed: docs/FINDINGS.md ("Step-time
// breakdown"). Pure; launcher process only.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/tables/stats.h"
#include "model/profile.h"

namespace gprof {

struct StepBreakdown {
  uint32_t pid = 0;
  uint32_t number = 0;      // ProfilerStep#N
  uint64_t start_ns = 0;    // as `stats --by-step` (StepRow): the host-side step
  uint64_t wall_ns = 0;
  // The slices, in claim order; they add up to wall_ns.
  uint64_t kernel_ns = 0;      // any kernel running on any device
  uint64_t memcpy_ns = 0;      // a copy running, no kernel
  uint64_t memset_ns = 0;      // a memset running, neither of those
  uint64_t runtime_ns = 0;     // a CUDA API call (runtime or driver) open, no GPU work
  uint64_t dataloader_ns = 0;  // a DataLoader range open ("enumerate(DataLoader)#...__next__",
                               // "enumerate(DataPipe)#..."), none of the above
  uint64_t cpu_exec_ns = 0;    // any other recorded host range open (torch ops, annotations,
                               // NVTX/ITT ranges), none of the above
  uint64_t other_ns = 0;       // the rest of the step
};

// The slice names, in claim order: "Kernel", "Memcpy", "Memset", "Runtime", "DataLoader",
// "CPU Exec", "Other" (TensorBoard's labels).
inline constexpr std::string_view kStepSliceNames[] = {"Kernel",     "Memcpy",   "Memset", "Runtime",
                                                       "DataLoader", "CPU Exec", "Other"};
// The slices of `b` in that order.
std::vector<uint64_t> StepSlices(const StepBreakdown& b);

// The breakdown of every step of `profile` (the steps StatsCollector::Steps lists for it).
std::vector<StepBreakdown> StepBreakdowns(const Profile& profile);

// As a stats report, "step_breakdown" (`gprof-run stats --by-step`): Step, PID, Wall Time (ns)
// and one "<slice> (ns)" column per slice.
inline constexpr std::string_view kStepBreakdownReportName = "step_breakdown";
StatsTable StepBreakdownTable(const std::vector<StepBreakdown>& steps);

}  // namespace gprof
