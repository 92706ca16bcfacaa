// torch.profiler.schedule as a pure function (REFERENCE.md §2), plus the bookkeeping that turns a
// sequence of step boundaries into windows. No CUDA, no threads, no I/O: the window thread feeds
// it boundaries and acts on the transitions it returns.
#pragma once

#include <cstdint>

#include "config/config.h"

namespace gprof::collector {

enum class StepAction : uint8_t {
  kNone,           // not collecting (skip_first, wait, or past the last repeat)
  kWarmup,         // collecting; everything is discarded when the active phase begins
  kRecord,         // collecting; kept
  kRecordAndSave,  // last active step of a cycle: kept, and the window is saved when it ends
};

// torch's schedule_fn(step): the action for 0-based step `step`.
StepAction ScheduleAction(const Schedule& s, uint64_t step);

// 0-based cycle number of `step` (meaningful when the action is kWarmup/kRecord*).
uint64_t ScheduleCycle(const Schedule& s, uint64_t step);

// What the window thread must do when step `step` begins (the previous step, if any, has ended).
struct StepTransition {
  bool start_collecting = false;  // action went from kNone to collecting
  bool stop_collecting = false;   // action went from collecting to kNone
  bool discard_before = false;    // warmup ended: drop everything collected before this step
  bool save_window = false;       // the previous step was kRecordAndSave: save its window
  StepAction action = StepAction::kNone;
};

// Transition between the action of step-1 (kNone for step 0) and the action of step.
StepTransition TransitionAt(const Schedule& s, uint64_t step);

}  // namespace gprof::collector
