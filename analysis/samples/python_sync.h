// Which Python line makes the GPU synchronization (issue 20): each blocking CUDA call (a
// synchronize, or a copy without Async) on a thread the Python sampler saw is given the innermost
// Python frame of the program's own code (op_stacks.h's rule: torch's and gprof-run's files left
// out, unless nothing else is left) of that thread's sample taken during the call, or else of
// the nearest sample within one sampling period of it (the line that made the call is still the
// one running then: a C call keeps its caller's frame on that line; torch.cuda.synchronize()
// is the program's line that called it, not torch's). Calls with no such sample are counted as not
// sampled. Sampled, not exact: a call shorter than the period is found only when a sample falls
// near it (docs/PYTHON_SAMPLING.md). Pure; launcher process only.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/samples/python_samples.h"
#include "model/profile.h"

namespace gprof {

struct PythonSyncLine {
  std::string where;     // "function (file:line)"
  uint64_t calls = 0;
  uint64_t blocked_ns = 0;  // the calls' host time
};

struct PythonSyncs {
  std::vector<PythonSyncLine> lines;  // most blocked time first, then most calls, then text
  uint64_t calls = 0;                 // blocking calls on threads the sampler saw
  uint64_t blocked_ns = 0;
  uint64_t not_sampled = 0;           // of `calls`: no sample within one period
  // Each attributed call: (its Profile::api_calls index, its line's index in `lines`), by call
  // index (the trace's args.python_line).
  std::vector<std::pair<uint32_t, uint32_t>> call_lines;
  // The same calls: (Profile::api_calls index, the index in PythonSamples::stacks of the sample
  // they were given), for the trace's args.python_stack.
  std::vector<std::pair<uint32_t, uint32_t>> call_stacks;
};

// The blocking calls of `p` with start in [from_ns, to_ns), attributed as above.
PythonSyncs SyncsByPythonLine(const Profile& p, const PythonSamples& s, uint64_t from_ns,
                              uint64_t to_ns);

// Adds `from`'s counts into `into` line by line (a run read in parts: each part's
// SyncsByPythonLine); the calls' indices (call_lines, call_stacks) are of one profile and are not
// kept.
void AddPythonSyncs(const PythonSyncs& from, PythonSyncs* into);

// The text file: a header, then one row per line (calls, blocked ms, share, where).
std::string FormatPythonSyncs(const PythonSyncs& syncs);

}  // namespace gprof
