// The Python functions the program ran during GPU idle gaps, from the Python sampler's samples
// (--python-sampling, python_samples.h): what gpu_idle names when no native samples
// (--cpu-sampling) are there. Launcher process only; pure.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/samples/cpu_samples.h"
#include "analysis/samples/python_samples.h"

namespace gprof {

// The innermost Python frame of each sample of thread `tid` (Linux tid) that falls inside any of
// `gaps` (disjoint [start, end) spans, in any order), summed by function: most samples first
// (ties by name), at most `max`. A sample stands for one sampling period of the thread's wall
// time (the Python sampler samples every thread each period, running or not), so each
// function's time is samples x period, at most the gaps' total. `location` is "file:first_line".
std::vector<GapFunction> PythonFunctionsInGaps(const PythonSamples& s, uint32_t tid,
                                               std::vector<std::pair<uint64_t, uint64_t>> gaps,
                                               size_t max);

}  // namespace gprof
