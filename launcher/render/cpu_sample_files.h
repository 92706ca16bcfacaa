// --cpu-sampling's files beside a rendered dump (docs/CPU_SAMPLING.md). Launcher process only.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analysis/samples/cpu_samples.h"
#include "model/profile.h"

namespace gprof::launcher {

// Names the samples of `profile` (for gpu_idle and the trace) and writes
// <dir>/<stem>.cpu.folded (added to `outputs`; a warning on `err` when it cannot be written),
// and adds to `notes` the stderr line saying how many samples which backend took; null when the
// profile has no samples.
// `run_folded` (with `run_samples`): the whole run's folded stacks when `profile` holds only a
// part of it (a segmented render: launcher/render/segmented_render.h); the names returned are
// still `profile`'s.
std::unique_ptr<CpuSampleNames> WriteCpuFolded(const Profile& profile, const std::string& dir,
                                               const std::string& stem,
                                               std::vector<std::string>* outputs,
                                               std::string* notes, std::FILE* err,
                                               const std::string* run_folded = nullptr,
                                               uint64_t run_samples = 0);

}  // namespace gprof::launcher
