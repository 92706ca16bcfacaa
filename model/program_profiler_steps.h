// Steps whose ops the program's own torch.profiler had (docs/PYTORCH.md, "When the program runs
// torch.profiler itself"): while it runs on the thread that steps, the Python hook's op ranges
// step aside there, so gprof-run has none of those steps' ops. Found two ways:
// - a profile of the whole run: from the hook's "gprof-run: torch.profiler started" marks and the
//   ProfilerStep#N ranges on the same thread around each (the steps numbered in between);
// - a schedule window: the window thread saw the gap in the step numbers and wrote one mark per
//   run into the window saved next (ProgramProfilerStepsMark), since the hook's marks lie outside
//   every window.
// Pure functions on Profiles: the collector writes the marks, the launcher reads them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/profile.h"

namespace gprof {

using StepRun = std::pair<uint32_t, uint32_t>;  // steps [first, last]

// "gprof-run: the program's own torch.profiler had steps A-B" (or "step A"), and back.
std::string ProgramProfilerStepsMark(const StepRun& run);
bool ParseProgramProfilerStepsMark(std::string_view name, StepRun* run);

// The runs of a profile (both ways above), in order of the step numbers, merged.
std::vector<StepRun> ProgramProfilerSteps(const Profile& p);

// For the closing line: "steps 2-4 and 7 ran under the program's own torch.profiler: their ops
// went to it, not to gprof-run"; "" for none. `runs` sorted and merged.
std::string ProgramProfilerStepsText(const std::vector<StepRun>& runs);

// Sorts and merges runs that overlap or touch.
std::vector<StepRun> MergeStepRuns(std::vector<StepRun> runs);

}  // namespace gprof
