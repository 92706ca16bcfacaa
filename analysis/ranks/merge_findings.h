// Distributed findings: which rank is slow and by how much, computed from the small per-input
// summaries the merge's survey keeps (MergeDistSummary in merge.h), never from the profiles
// (launcher process only). Pure: summaries in, findings out, in the Finding format of
// findings.h (FormatFindingsJson / Text / Summary write them). Every id, rule, threshold and
// evidence key is in docs/FINDINGS.md, "Distributed findings"; the thresholds are the constants
// below, each with its reasoning.
//
// Times in places are on the aligned clock (each input's clock.offset_ns added) relative to the
// merged trace's origin (MergedOriginNs), so ts_us is the timestamp merged/trace.json shows. Step numbers (ProfilerStep#N) identify the same iteration
// on every rank; times inside a step are measured on the rank's own clock from its own step
// start, so differences between hosts' clocks do not enter the comparisons.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/findings/findings.h"
#include "analysis/ranks/merge.h"
#include "model/profile.h"

namespace gprof {

// ---- Thresholds (reasoning in docs/FINDINGS.md) ----

// straggler: in one step, the slowest rank's value (step time, or time before the collective)
// is at least this factor of the median of the other ranks' values ...
inline constexpr double kStragglerMinFactor = 1.2;
// ... and at least this much more: below 1 ms the difference is launch and clock jitter
// (cold_start's floor, kColdStartMinExcessNs).
inline constexpr uint64_t kStragglerMinExcessNs = 1'000'000;
// A rank is reported when it is that slow in at least this share of the compared steps: one step
// in four at +20 % costs the whole job at least 5 % of its time (0.25 x 0.2), every rank waiting.
inline constexpr double kStragglerMinStepShare = 0.25;
// straggler is "high" from this median factor over its slow steps: the job then runs at two
// thirds of its speed or less in those steps.
inline constexpr double kStragglerHighFactor = 1.5;

// imbalance: a rank's GPU busy share of its window differs from the median of all ranks by at
// least this much (20 percentage points: a fifth of every rank's time) ...
inline constexpr double kImbalanceMinShareDiff = 0.20;
// ... or by this factor (the larger share over the smaller) while the shares differ by at least
// kImbalanceMinFactorDiff: 1.5x is where one rank has half again the GPU work of another; the
// difference guard (gpu_idle's floor of 5 % of the window) keeps two nearly idle ranks (2 % and
// 4 %) from counting as imbalanced.
inline constexpr double kImbalanceMinFactor = 1.5;
inline constexpr double kImbalanceMinFactorDiff = kGpuIdleMinShare;

// ---- Communication kernels ----

// Whether a kernel (its demangled name) is communication: NCCL's kernels, as HTA classifies them
// (hta/utils/utils.py is_comm_kernel: "ncclKernel" in the name) extended to NCCL 2.19's
// ncclDevKernel_* and to any name starting with "nccl" (after a template's "void " return type).
// Every other kernel is compute; copies and memsets are neither (HTA's MEMORY kind).
bool IsCommunicationKernel(std::string_view demangled);

// The distributed part of the survey of one profile (SummarizeForMerge calls it).
MergeDistSummary SummarizeDistributed(const Profile& profile);

// clock_alignment (clock_align_finding.cpp): one, when some input's clock offset from the first
// input's (AlignMergeClocks) is at least this much: the offsets applied, each input's method and
// residual, and the spread of one collective's aligned ends. Below 1 ms the offsets are within
// what NTP keeps hosts to, and not worth a finding (the trace's metadata has them all).
inline constexpr uint64_t kClockOffsetReportNs = 1'000'000;
void ClockAlignmentFinding(const std::vector<MergeInput>& inputs, std::vector<Finding>* out);

// The findings across `inputs` (sorted with SortMergeInputs): straggler (per metric: time before
// the collective when communication kernels exist, then step time), imbalance, comm_overlap (one
// per input with communication kernels, in input order); ordered like FindFindings (SortFindings).
// None for fewer than two inputs.
std::vector<Finding> MergedFindings(const std::vector<MergeInput>& inputs);

// The inputs, slowest first, for the merged trace's choice of ranks in full (docs/LAUNCHER.md):
// by the steps in which the straggler rule finds each one the slow one (both metrics, step time
// and time before the collective, counted), then by its summed step time, then in input order.
std::vector<size_t> InputsBySlowness(const std::vector<MergeInput>& inputs);

}  // namespace gprof
