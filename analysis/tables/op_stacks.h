// Ops by Python source location (issue 20, part 3; torch's key_averages(group_by_stack_n=N)):
// each host range of a profile (a torch op, an NVTX range) on a thread the Python sampler saw is
// given the Python stack of a sample, and the table groups its rows by (name, the innermost N
// frames of the program's own code). Pure; launcher process only.
//
// The rule, exactly (docs/PYTHON_SAMPLING.md, "Ops by source location"):
//   - the sample: among the thread's samples with start <= ts <= end, the one nearest the
//     range's middle (the earlier on a tie); when there is none, the sample nearest the range's
//     start within one period (|ts - start| <= period; the earlier on a tie); else the range is
//     "<not sampled>". SAMPLED, not exact: a range shorter than the period is found only when a
//     sample falls in or near it, and the sample near a short range may already show the next
//     line;
//   - the frames: the sample's stack, innermost first, without the frames of torch's own Python
//     files (a path containing "/site-packages/torch/" or "/dist-packages/torch/": an installed
//     torch; a source checkout is not recognised) and of gprof-run's hook (a path containing
//     "/gprof_run_hook/"); when that leaves none, every frame is kept (the row still says
//     where). torch's own filter drops only its profiler-internal frames; ours drops every torch
//     frame so that the location is the program's line (the layer's forward, not nn.Module's
//     _call_impl);
//   - the key: the first N of those frames, each as torch writes a stack entry,
//     "file(line): function" with the line running;
//   - not grouped (no key, an empty Source Location as torch's rows without a stack): steps
//     (ProfilerStep ranges span the whole step, so one sample says nothing about them), ranges
//     on threads with no samples (C++ threads such as autograd's device threads), API calls and
//     GPU work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/samples/python_samples.h"
#include "model/profile.h"

namespace gprof {

// torch's examples use group_by_stack_n=5; --with-stack groups by that many frames.
inline constexpr uint32_t kDefaultGroupByStack = 5;
inline constexpr uint32_t kMaxGroupByStack = 1000;
inline constexpr char kNotSampledKey[] = "<not sampled>";
inline constexpr uint32_t kNoStackKey = UINT32_MAX;

// False for a frame of torch's own Python files or of gprof-run's hook (the rule above).
bool IsProgramFrame(std::string_view file);
// The frames of `stack` (root first, indices into s.frames) the rule keeps, innermost first.
std::vector<const PythonFrame*> ProgramFrames(const PythonSamples& s,
                                              const std::vector<uint32_t>& stack);
// torch's stack entry: "file(line): function".
std::string StackEntryText(const PythonFrame& f);

struct RangeStacks {
  uint32_t depth = 0;  // N
  uint32_t hz = 0;
  uint64_t period_ns = 0;
  // Distinct keys, each its frames innermost first; keys[0] is {kNotSampledKey}.
  std::vector<std::vector<std::string>> keys;
  std::vector<uint32_t> of_range;  // per Profile::ranges: into keys, or kNoStackKey
  uint64_t grouped = 0;      // ranges with a key
  uint64_t inside = 0;       // of them: a sample inside the range
  uint64_t near_start = 0;   // of them: a sample within one period of its start
  uint64_t not_sampled = 0;  // of them: neither (key 0)
};

// The keys of `p`'s ranges from `s`, with N = `depth` (>= 1).
RangeStacks StacksOfRanges(const Profile& p, const PythonSamples& s, uint32_t depth);

// The line the grouped table prints above itself: how rows were grouped, that it is sampled, and
// how many ranges no sample came near.
std::string RangeStacksNote(const RangeStacks& r);

}  // namespace gprof
