// The closing line's pieces (launcher/report.cpp prints it after a run or `gprof-run report`):
// what was recorded across the output's profiles, the start-up phase, the program's own
// torch.profiler, the CUPTI library and the losses. Launcher process only.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "model/profile.h"
#include "model/program_profiler_steps.h"

namespace gprof::launcher {

struct Totals {
  std::set<uint32_t> pids;
  uint64_t ranges = 0, api_calls = 0, kernels = 0, copies = 0, memsets = 0;
  Counters counters;
  uint64_t stacks_dropped = 0;  // StackCounters::dropped (also in host_events_dropped)
  std::string cupti;  // from the main profile (or the first one read)
  // The program's own torch.profiler (marks from the Python hook, python/gprof_run_hook): how
  // often it ran and for how long, and whether the program had steps of its own.
  uint64_t torch_profiler_spans = 0, torch_profiler_ns = 0;
  bool own_steps = false;
  std::vector<StepRun> program_profiler_steps;  // steps whose ops the program's profiler had
  std::string startup;  // StartupText of the main process's whole run
};

// The start-up before the first step of `p` ("" when it has no steps).
std::string StartupText(const Profile& p);
// "" when the program never ran torch.profiler, else what happened, for the closing line.
std::string TorchProfilerText(const Totals& t, const std::string& cupti);
// Adds `p`'s records, counters and the Python hook's torch.profiler marks to `t`.
void AddToTotals(Totals* t, const Profile& p);
// "CUPTI <library>", or why the GPU was not collected.
std::string CuptiText(const Profile& p);
// "no losses", or "LOSSES: name=value, ..." from the counters and the dropped stacks.
std::string LossText(const Counters& c, uint64_t stacks_dropped);

}  // namespace gprof::launcher
