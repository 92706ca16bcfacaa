// GpuAttribution: which NVTX ranges and steps own which GPU work (launcher process only). One
// rule set for the table (a range's / step's CUDA total, key_averages.cpp) and for the trace
// (gpu_user_annotation spans projected onto the GPU lanes, trace_plan.cpp), so both always agree.
//
// A GPU record (kernel, memcpy, memset) was launched by the API call with its correlation id
// (the first call with that id, CorrelationIndex::ApiCall). Where the record belongs is decided
// by that launching call alone, by its thread and its start time; the record's own GPU time
// decides nothing (GPU work runs late, often after the range that launched it has closed). Two
// rules, by the kind of owner:
//
//  (a) NVTX ranges (push/pop and start/end), by correlation: a range owns the record when the
//      launching call ran on the range's thread (for a start/end range, the thread that opened
//      it) and started inside the range: range start <= call start < range end. A range on
//      another thread never owns it. So the kernels of an op launched on a worker or PyTorch
//      autograd backward thread count in that op's CUDA total and appear under that op's
//      gpu_user_annotation, and never under a range the main thread happened to have open.
//  (b) Steps, by step time: a step (Profile::steps, ranges flagged kRangeStep, and ranges named
//      ProfilerStep#N as torch.profiler's record_function writes them) is process-wide. It owns
//      every record whose launching call started inside the step's time span
//      (step start <= call start < step end), on ANY thread. Backward kernels launched from an
//      autograd thread during step N belong to ProfilerStep#N though that thread never saw the
//      step's range.
//
// Only the call's start is compared, so a call that straddles a boundary (a start/end range
// ended from another thread mid-call, back-to-back steps seen from another thread) belongs to
// the owner it started in and is never lost between two steps. Records whose launching call is
// missing (counter gpu_records_uncorrelated, or correlation id 0) belong to no range and no step;
// they still count in the GPU rows of the table and sit on their stream in the trace.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/attribution/correlation_index.h"
#include "model/profile.h"

namespace gprof {

// True for a range that follows rule (b): flagged kRangeStep or named "ProfilerStep#...".
bool IsStepRange(const Profile& profile, const HostRange& range);

class GpuAttribution {
 public:
  // `corr` must be built from `profile` and outlive this object.
  GpuAttribution(const Profile& profile, const CorrelationIndex& corr);

  // The launches a step (index into Profile::steps) or a range (index into Profile::ranges)
  // owns, each once, ordered by the launching call's start, as launch ids for Records().
  std::span<const uint32_t> StepLaunches(uint32_t step) const { return Owned(step); }
  std::span<const uint32_t> RangeLaunches(uint32_t range) const {
    return Owned(static_cast<uint32_t>(steps_) + range);
  }
  // The GPU records of a launch: CorrelationIndex::Gpu of its correlation id.
  std::span<const GpuRef> Records(uint32_t launch) const { return launches_[launch]; }
  // Summed GPU time of the records a step / range owns (its CUDA total).
  uint64_t StepGpuNs(uint32_t step) const { return OwnedNs(step); }
  uint64_t RangeGpuNs(uint32_t range) const {
    return OwnedNs(static_cast<uint32_t>(steps_) + range);
  }

 private:
  std::span<const uint32_t> Owned(uint32_t owner) const;
  uint64_t OwnedNs(uint32_t owner) const;

  size_t steps_;
  std::vector<std::span<const GpuRef>> launches_;  // by launch id (correlation id order)
  // Owner o = step index, or steps_ + range index: it owns launch ids
  // owned_[offsets_[o] .. offsets_[o + 1]), summing to owned_ns_[o] of GPU time.
  std::vector<uint32_t> offsets_;
  std::vector<uint32_t> owned_;
  std::vector<uint64_t> owned_ns_;
};

}  // namespace gprof
