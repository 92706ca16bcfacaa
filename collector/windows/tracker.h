// WindowTracker: turns step boundaries, capture-range starts/stops and the passing of time into
// collection decisions and saved windows. Pure logic (no threads, no I/O, no CUDA) so every
// schedule and capture case is unit-tested; the window thread (window_thread.h) owns one and
// acts on what it returns.
//
// Steps. A step boundary begins step k (0-based). For end-of-step sources (kernel launch, API
// call, time slice) the program start is the boundary of step 0 and each event ends a step and
// begins the next, like torch's prof.step(); a launch or call that ends a step belongs to it (its
// boundary is the call's return). For NVTX sources each matching range start begins a step and the
// time before the first one belongs to no step.
//
// Step numbers. A boundary may carry the program's own number (an NVTX step named
// ProfilerStep#N, as torch.profiler and programs that number their steps write it): the step is
// then that number. A number that skips ahead (the steps in between were not seen: the program's
// own torch.profiler had their ops) or starts again (not above the current step: the program's
// numbering after gprof-run's own optimizer steps, or a second profiler) ends any open window at
// the boundary, and the schedule goes on from that number as if the steps before it had collected
// nothing; a number that starts again also starts the schedule's cycles again (window cycle
// numbers go on counting, so file names stay unique). OnProgramProfiler (the program's own
// torch.profiler starting on the thread that steps) ends the current step and any open window
// there: until the next boundary the ops are the program's profiler's, so no window spans them.
//
// Windows (torch.profiler.schedule semantics, REFERENCE.md §2): warmup collects and is discarded
// when the first active step begins; the window covers the active steps and is saved when the
// last active step ends; a window cut short by exit is saved as partial; one ended during warmup
// saves nothing. Capture ranges (cudaProfilerStart/Stop, an NVTX range) and --delay/--duration
// each define windows directly. Control captures (--start-paused, collector/control/) open a
// window when asked: now (for a duration, or until a pause), or at the next step boundary (for
// a number of steps); the program's own capture ranges are ignored then.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "config/config.h"
#include "model/records.h"

namespace gprof::collector {

struct WindowSpan {
  uint32_t cycle = 0;        // 0-based window number
  uint32_t first_step = 0;   // schedule windows: first and last active step
  uint32_t last_step = 0;
  uint64_t start_ns = 0;     // keep events in [start_ns, end_ns)
  uint64_t end_ns = 0;
  bool partial = false;      // cut short by exit
  std::vector<Step> steps;   // ProfilerStep#N spans inside the window
  // Runs of steps [first, last] that the program's own profiler had (see OnProgramProfiler),
  // found since the previous saved window, in order: each run goes with one saved window.
  std::vector<std::pair<uint32_t, uint32_t>> program_profiler_steps;
  // Filled by the window thread when it saves the window (Counters of the same names).
  uint64_t events_lost = 0;
  uint64_t starts_late = 0;
};

struct TrackerOutput {
  bool change_collecting = false;  // when true, set collection to `collecting`
  bool collecting = false;
  bool discard = false;            // drop everything collected before `discard_before_ns`
  uint64_t discard_before_ns = 0;
  std::vector<WindowSpan> save;    // windows completed by this event, oldest first
};

class WindowTracker {
 public:
  WindowTracker(const Config& config, uint64_t start_ns);

  // True when output is per window (schedule, capture range, delay/duration); false means one
  // whole-run profile written at exit.
  bool windowed() const { return windowed_; }
  // The state at program start (collecting or not).
  TrackerOutput Begin();
  // A step boundary seen at `ts` on thread `tid` (from the configured step source); `number` is
  // the program's own step number when the boundary carries one, else -1.
  TrackerOutput OnStepBoundary(uint64_t ts, uint32_t tid, int64_t number = -1);
  // The program's own torch.profiler started at `ts` on thread `tid` (the Python hook's mark):
  // when that thread is the one that steps (or no step was seen yet), the current step and any
  // open window end there, and the steps until the next boundary are the program's profiler's.
  TrackerOutput OnProgramProfiler(uint64_t ts, uint32_t tid);
  // cudaProfilerStart / an NVTX capture range opening, and their ends.
  TrackerOutput OnCaptureStart(uint64_t ts);
  TrackerOutput OnCaptureStop(uint64_t ts);
  // Control captures (CaptureRange::Kind::kControl; ignored otherwise). A capture of `steps`
  // steps (> 0) collects from now and opens its window at the next step boundary; else the
  // window opens at `ts` and closes `duration_ns` later (0: at the next pause). Ignored while a
  // capture is open or waiting for its first step. A pause closes and saves the open capture,
  // or cancels one still waiting.
  TrackerOutput OnControlCapture(uint64_t ts, uint64_t duration_ns, uint32_t steps);
  TrackerOutput OnControlPause(uint64_t ts);
  // Control captures: a capture waits for its first step boundary.
  bool ControlArmed() const { return control_steps_armed_ > 0; }
  // Windows saved so far (the next window's number).
  uint32_t WindowsSaved() const { return windows_saved_; }
  // Called periodically by the window thread: --delay/--duration and time-sliced steps.
  TrackerOutput OnTime(uint64_t now);
  // Program exit: saves a partly recorded window.
  TrackerOutput OnExit(uint64_t ts);
  // The current step (-1 before the first boundary).
  int64_t CurrentStep() const { return step_; }
  // Whether a window is open (its events are being kept).
  bool InWindow() const { return window_open_; }
  // Schedules only: whether the current or the next step collects (GPU activity is switched on
  // one step ahead).
  bool CollectingNowOrNext() const;
  // The next time OnTime must be called (UINT64_MAX when time does not matter).
  uint64_t NextDeadline() const;

 private:
  TrackerOutput Boundary(uint64_t ts, uint32_t tid, int64_t number = -1);
  TrackerOutput ControlBoundary(uint64_t ts, uint32_t tid);
  bool Control() const { return capture_.kind == CaptureRange::Kind::kControl; }
  void OpenWindow(uint64_t ts, TrackerOutput* out);
  void CloseWindow(uint64_t ts, bool partial, TrackerOutput* out);
  // Closes the open window at `ts` with the current step as its last (a window ended early by a
  // renumbering or by the program's profiler).
  void CloseWindowAtCurrentStep(uint64_t ts, TrackerOutput* out);
  bool AfterDelay(uint64_t ts) const { return ts >= start_ns_ + capture_.delay_ns; }

  Schedule schedule_;
  CaptureRange capture_;
  StepSource::Kind step_kind_;
  uint64_t step_period_ns_ = 0;
  uint64_t start_ns_;
  bool windowed_ = false;

  // Steps.
  int64_t step_ = -1;           // current step; -1 before the first boundary
  uint64_t step_start_ns_ = 0;
  uint32_t step_tid_ = 0;
  uint64_t next_time_step_ns_ = UINT64_MAX;
  bool program_profiler_ = false;  // the program's profiler took the ops; no step seen since
  std::vector<std::pair<uint32_t, uint32_t>> program_profiler_steps_;
  uint32_t cycle_base_ = 0;        // added to window cycle numbers after a numbering restart
  uint32_t next_cycle_ = 0;        // one above the highest cycle number a window had

  // Current window.
  bool collecting_ = false;
  bool window_open_ = false;    // keeping events (active, capture, or delay window)
  WindowSpan window_;
  uint32_t windows_saved_ = 0;
  uint32_t captures_started_ = 0;
  bool capture_done_ = false;   // capture-range-end=stop reached, or repeat:N exhausted
  uint64_t first_capture_ns_ = 0;

  // Control captures.
  uint32_t control_steps_armed_ = 0;  // steps of a capture waiting for its first boundary
  uint32_t control_steps_left_ = 0;   // boundaries until the open capture closes (0: by time)
  uint64_t control_end_ns_ = UINT64_MAX;
};

}  // namespace gprof::collector
