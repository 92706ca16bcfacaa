// Lining up the clocks of a merge's inputs (analysis/ranks/merge.h): each input's offset from the
// reference input (the first in merge order, the lowest rank), so that its times can be placed on
// the reference's clock. Launcher process and benchmarks only; pure. The method and its error
// bound are in docs/LAUNCHER.md, "merge".
//
// Collectives: every rank takes part in each collective, and the k-th instance of one (NCCL's
// kernels on a GPU, gloo's work ranges "gloo:all_reduce", ...) ends at nearly the same true time
// on all ranks: none can leave before the last has arrived. The differences of the k-th ends
// between an input and the reference, d_k, are its clock offset plus how much later it truly
// finished; their median is a robust offset (a few late instances do not move it), and the
// median of |d_k - offset| its residual.
//
// Clock pairs (ProcessPlacement): two processes on the same host and boot read the same
// CLOCK_MONOTONIC, so (realtime - monotonic) at their starts differ by exactly how their views of
// CLOCK_REALTIME differ (0 unless something moved one of them, such as a clock step between the
// two starts). A pair whose monotonic clock is not plausibly time since boot (a preloaded time
// faker fakes it too) is not used. Used when no collective is shared, and in place of the
// collectives' estimate when the two agree (the pairs are exact to their read time).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/profile.h"

namespace gprof {

// How close an instance's end is to the same true time on every rank, best first. Each input is
// lined up by the best class it shares with the reference.
enum class CollectiveClass : uint8_t {
  kGpuKernel = 0,   // NCCL kernels (IsCommunicationKernel): end when the collective completes
  kHostWork = 1,    // "gloo:*" ranges: gloo's work on its worker thread, start to completion
  kHostCall = 2,    // "nccl:*" and "c10d::*" ranges: the call that enqueues the collective
};

// The ends of one collective's instances in one input, in start order, on the input's own clock.
struct CollectiveEnds {
  std::string name;  // the range's name, or the kernel's demangled name
  CollectiveClass kind = CollectiveClass::kHostCall;
  std::vector<uint64_t> ends;  // absolute; at most kMaxCollectiveEnds (the first ones)
};
// Instances kept per name: the median of 4096 differences is as good as that of all of them, and
// 1,024 ranks then keep at most 32 KB per collective name each.
inline constexpr size_t kMaxCollectiveEnds = 4096;

// The class of a host range's name, or false when it is not a collective.
bool CollectiveRangeClass(std::string_view name, CollectiveClass* kind);

// The collectives of `profile` (host ranges and NCCL kernels), by name.
std::vector<CollectiveEnds> SurveyCollectives(const Profile& profile);

enum class ClockMethod : uint8_t {
  kReference,    // the reference itself: offset 0
  kCollectives,  // the median of the collectives' end differences
  kClockPairs,   // same host and boot: the realtime - monotonic pairs
  kNone,         // nothing to line up by: offset 0, as recorded
};
std::string_view ClockMethodName(ClockMethod m);  // "reference", "collectives", ...

// One input's alignment: add offset_ns to its own times to place them on the reference's clock.
struct ClockAlignment {
  ClockMethod method = ClockMethod::kNone;
  int64_t offset_ns = 0;
  // Collectives: the instances compared, the median |d_k - offset| and the class used.
  uint64_t instances = 0;
  uint64_t residual_ns = 0;
  CollectiveClass kind = CollectiveClass::kHostCall;
  // The collectives' own estimate when the clock pairs replaced it (method kClockPairs with
  // instances > 0), for the record.
  int64_t collectives_offset_ns = 0;
};

// Same host and boot: the clock pairs agree with the collectives when their offsets differ by at
// most this much (1 ms: gloo's and NCCL's instances end within microseconds of each other on one
// host; a faked or stepped clock is off by far more).
inline constexpr int64_t kPairsAgreeNs = 1'000'000;

// What the alignment of all inputs achieved, for the merged findings and the trace's metadata.
struct ClockSpread {
  // Over the reference's collectives of the best class that every input with collectives has
  // (inputs without any, such as a launcher's own process, take no part): per instance k present
  // in all of them, the latest aligned end minus the earliest; the median and the
  // largest over k. instances 0: no collective is in every input.
  uint64_t instances = 0;
  uint64_t median_ns = 0;
  uint64_t max_ns = 0;
  std::string name;  // the collective measured ("gloo:all_reduce")
};

// The alignment of each input (same order; inputs[0] is the reference), from each input's
// collectives and placement.
struct ClockInput {
  const ProfileInfo* info = nullptr;
  const std::vector<CollectiveEnds>* collectives = nullptr;  // SurveyCollectives of the input
};
std::vector<ClockAlignment> AlignClocks(const std::vector<ClockInput>& inputs);
// The spread that `alignment` (AlignClocks of `inputs`) leaves.
ClockSpread SpreadAfter(const std::vector<ClockInput>& inputs,
                        const std::vector<ClockAlignment>& alignment);

// An input's absolute time placed on the reference's clock.
inline uint64_t AlignedNs(uint64_t own_ns, int64_t offset_ns) {
  return own_ns + static_cast<uint64_t>(offset_ns);  // two's complement: adds a negative offset
}

}  // namespace gprof
