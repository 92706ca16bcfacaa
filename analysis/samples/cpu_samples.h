// What --cpu-sampling's native stack samples say (docs/CPU_SAMPLING.md): which function each
// sample ran in, the host functions that ran during a GPU gap (gpu_idle), the cpu_sample_sum
// stats report and folded stacks for flame graphs.
//
// A sample stands for the CPU time recorded with it (CpuSample::cpu_ns: one period with perf; the
// process's CPU time since the previous sample with the timer). It is charged to its innermost
// frame ("self", as nsys's and perf's reports do), named by libdw after the run.
// Threads: the launcher's (cold).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/profile.h"

namespace gprof {

// Per stack of the profile (indexed like Profile::stacks): the innermost frame's function and
// "file:line" ("" when unknown), and every frame outermost first as folded stacks list them.
struct CpuSampleNames {
  std::vector<std::string> function;
  std::vector<std::string> location;
  std::vector<std::vector<std::string>> frames_outermost_first;
};
// Symbolizes the stacks the samples use (libdw; reads the modules' files).
CpuSampleNames NameCpuSamples(const Profile& p);

// A host function during a gap, from the samples: how many fell in the gap on any thread, and
// the CPU time they stand for (at most the gap's length).
struct GapFunction {
  std::string function;
  std::string location;
  uint64_t samples = 0;
  uint64_t ns = 0;
};
// Samples summed by function (and place), then ranked: the most samples first (ties by name),
// each function's time at most `cap_ns`, at most `max` of them. Shared by the native and the
// Python samples' gap functions.
class GapFunctionTally {
 public:
  void Add(const std::string& function, const std::string& location, uint64_t ns);
  std::vector<GapFunction> Ranked(uint64_t cap_ns, size_t max) const;

 private:
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> counts_;
};
// Whether `t` lies in one of `gaps` (disjoint [start, end) spans sorted by start): a binary search.
bool InSortedGaps(const std::vector<std::pair<uint64_t, uint64_t>>& gaps, uint64_t t);

// The functions sampled in [start, end), the most samples first (ties by name), at most `max`.
std::vector<GapFunction> FunctionsDuring(const Profile& p, const CpuSampleNames& names,
                                         uint64_t start, uint64_t end, size_t max);
// The functions sampled inside any of `gaps` (disjoint [start, end) spans, in any order), summed
// over them, the most samples first (ties by name), at most `max`; each one's time is at most
// the gaps' total. One pass over the samples, a binary search each.
std::vector<GapFunction> FunctionsInGaps(const Profile& p, const CpuSampleNames& names,
                                         std::vector<std::pair<uint64_t, uint64_t>> gaps,
                                         size_t max);
// "the host spent 290 us of the 297 us gap in host_preprocess (main.cu:22), sampled (29
// samples)".
std::string DescribeGapFunction(const GapFunction& f, uint64_t gap_ns);
// "the host spent 19.8 ms of the 20.6 ms idle in host_preprocess (main.cu:22), sampled (198
// samples)": `f` summed over every gap (FunctionsInGaps).
std::string DescribeGapsFunction(const GapFunction& f, uint64_t idle_ns);
// "host_preprocess (main.cu:22)", or the function alone when its place is unknown.
std::string NamedFunction(const GapFunction& f);

// `gprof-run stats --report cpu_sample_sum`: one row per function (self samples), with its share,
// estimated CPU time and total (self + callees) samples.
std::string FormatCpuSampleSum(const Profile& p, const CpuSampleNames& names);

// Which backend took the samples, for cpu_sample_sum and the run's stderr line:
// "perf_event_open, sampler process", "perf_event_open, in process", "ITIMER_PROF, in process".
std::string CpuSampleBackendName(uint32_t backend);

// Folded stacks (Brendan Gregg's flamegraph.pl and speedscope input): one line per distinct
// stack, "thread <tid>;outer;...;inner <samples>", sorted.
std::string FoldedCpuStacks(const Profile& p, const CpuSampleNames& names);
// The same in two steps, for a run read segment by segment: each segment's samples added into
// `folded` (stack line -> samples), then the lines.
void AddFoldedCpuStacks(const Profile& p, const CpuSampleNames& names,
                        std::map<std::string, uint64_t>* folded);
std::string FormatFoldedCpuStacks(const std::map<std::string, uint64_t>& folded);

}  // namespace gprof
