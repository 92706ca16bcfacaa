#include "collector/windows/tracker.h"

#include <algorithm>

#include "collector/windows/schedule.h"

namespace gprof::collector {
namespace {

void Merge(TrackerOutput* into, TrackerOutput&& from) {
  if (from.change_collecting) {
    into->change_collecting = true;
    into->collecting = from.collecting;
  }
  if (from.discard) {
    into->discard = true;
    into->discard_before_ns = std::max(into->discard_before_ns, from.discard_before_ns);
  }
  for (auto& w : from.save) into->save.push_back(std::move(w));
}

void SetCollecting(TrackerOutput* out, bool on) {
  out->change_collecting = true;
  out->collecting = on;
}

}  // namespace

WindowTracker::WindowTracker(const Config& config, uint64_t start_ns)
    : schedule_(config.schedule),
      capture_(config.capture),
      step_kind_(config.step.kind),
      step_period_ns_(config.step.period_ns),
      start_ns_(start_ns) {
  windowed_ = schedule_.enabled() || capture_.kind != CaptureRange::Kind::kNone ||
              capture_.delay_ns > 0 || capture_.duration_ns > 0;
}

TrackerOutput WindowTracker::Begin() {
  TrackerOutput out;
  if (!windowed_) {
    SetCollecting(&out, true);
    collecting_ = true;
    return out;
  }
  if (schedule_.enabled()) {
    if (step_kind_ == StepSource::Kind::kTime) next_time_step_ns_ = start_ns_ + step_period_ns_;
    // End-of-step sources: the program start begins step 0 (torch's profiler start).
    if (step_kind_ != StepSource::Kind::kNvtx) Merge(&out, Boundary(start_ns_, 0));
    return out;
  }
  if (capture_.kind == CaptureRange::Kind::kNone) Merge(&out, OnTime(start_ns_));
  return out;
}

TrackerOutput WindowTracker::OnStepBoundary(uint64_t ts, uint32_t tid, int64_t number) {
  if (step_kind_ == StepSource::Kind::kTime) return {};
  if (Control()) return ControlBoundary(ts, tid);
  if (!schedule_.enabled()) return {};
  return Boundary(ts, tid, number);
}

TrackerOutput WindowTracker::OnProgramProfiler(uint64_t ts, uint32_t tid) {
  TrackerOutput out;
  if (!schedule_.enabled() || Control() || program_profiler_) return out;
  if (step_ >= 0 && tid != step_tid_) return out;  // another thread: the stepping one keeps its ops
  program_profiler_ = true;
  if (window_open_) {
    window_.steps.push_back({step_start_ns_, ts, static_cast<uint32_t>(step_), step_tid_});
    CloseWindowAtCurrentStep(ts, &out);
  }
  return out;
}

TrackerOutput WindowTracker::ControlBoundary(uint64_t ts, uint32_t tid) {
  TrackerOutput out;
  if (step_ >= 0 && window_open_ && control_steps_left_ > 0) {
    window_.steps.push_back({step_start_ns_, ts, static_cast<uint32_t>(step_), step_tid_});
  }
  ++step_;
  step_start_ns_ = ts;
  step_tid_ = tid;
  if (control_steps_armed_ > 0) {
    control_steps_left_ = control_steps_armed_;
    control_steps_armed_ = 0;
    OpenWindow(ts, &out);
    window_.first_step = static_cast<uint32_t>(step_);
  } else if (window_open_ && control_steps_left_ > 0 && --control_steps_left_ == 0) {
    window_.last_step = static_cast<uint32_t>(step_ - 1);
    CloseWindow(ts, /*partial=*/false, &out);
    SetCollecting(&out, false);
    collecting_ = false;
  }
  return out;
}

TrackerOutput WindowTracker::OnControlCapture(uint64_t ts, uint64_t duration_ns, uint32_t steps) {
  TrackerOutput out;
  if (!Control() || window_open_ || control_steps_armed_ > 0) return out;
  SetCollecting(&out, true);
  collecting_ = true;
  if (steps > 0) {
    // Steps are numbered within the capture: while paused no step boundary is seen (the hooks
    // that find them are off), so the program's own count is unknown here.
    step_ = -1;
    control_steps_armed_ = steps;
    out.discard = true;  // the capture starts from nothing
    out.discard_before_ns = ts;
    return out;
  }
  control_steps_left_ = 0;
  control_end_ns_ = duration_ns > 0 && duration_ns < UINT64_MAX - ts ? ts + duration_ns
                                                                     : UINT64_MAX;
  OpenWindow(ts, &out);
  window_.first_step = step_ >= 0 ? static_cast<uint32_t>(step_) : 0;
  return out;
}

TrackerOutput WindowTracker::OnControlPause(uint64_t ts) {
  TrackerOutput out;
  if (!Control() || (!window_open_ && control_steps_armed_ == 0)) return out;
  control_steps_armed_ = 0;
  if (window_open_) {
    window_.last_step = step_ >= 0 ? static_cast<uint32_t>(step_) : 0;
    CloseWindow(ts, /*partial=*/false, &out);
  }
  control_steps_left_ = 0;
  control_end_ns_ = UINT64_MAX;
  SetCollecting(&out, false);
  collecting_ = false;
  return out;
}

TrackerOutput WindowTracker::Boundary(uint64_t ts, uint32_t tid, int64_t number) {
  TrackerOutput out;
  const int64_t next = number >= 0 ? number : step_ + 1;
  // The schedule goes on from `next` as after a gap: a number out of sequence, or the first
  // step after the program's profiler had the ops.
  const bool gap = next != step_ + 1 || program_profiler_;
  if (step_ >= 0 && window_open_) {
    window_.steps.push_back(
        {step_start_ns_, ts, static_cast<uint32_t>(step_), step_tid_});
    if (gap) CloseWindowAtCurrentStep(ts, &out);
  }
  if (program_profiler_) {
    const int64_t first = next > step_ ? step_ + 1 : 0;
    if (first < next) {
      program_profiler_steps_.emplace_back(static_cast<uint32_t>(first),
                                           static_cast<uint32_t>(next - 1));
    }
    program_profiler_ = false;
  }
  if (next <= step_) cycle_base_ = next_cycle_;  // the numbering starts again: so do the cycles
  step_ = next;
  step_start_ns_ = ts;
  step_tid_ = tid;
  StepTransition t = TransitionAt(schedule_, static_cast<uint64_t>(step_));
  if (gap) {
    // Nothing was collected for the steps before this one: it starts from nothing.
    const bool on = t.action != StepAction::kNone;
    t.save_window = false;
    t.start_collecting = on;
    t.stop_collecting = !on && collecting_;
  }
  if (t.save_window && window_open_) CloseWindow(ts, /*partial=*/false, &out);
  if (t.stop_collecting) {
    SetCollecting(&out, false);
    collecting_ = false;
  }
  if (t.start_collecting) {
    SetCollecting(&out, true);
    collecting_ = true;
  }
  const bool active =
      t.action == StepAction::kRecord || t.action == StepAction::kRecordAndSave;
  if (active && !window_open_) {
    OpenWindow(ts, &out);  // also discards the warmup, if there was one
    window_.cycle = cycle_base_ + static_cast<uint32_t>(ScheduleCycle(schedule_, step_));
    next_cycle_ = std::max(next_cycle_, window_.cycle + 1);
    window_.first_step = static_cast<uint32_t>(step_);
  } else if (t.action == StepAction::kWarmup && t.start_collecting) {
    out.discard = true;  // warmup starts from nothing too
    out.discard_before_ns = ts;
  }
  return out;
}

void WindowTracker::OpenWindow(uint64_t ts, TrackerOutput* out) {
  window_ = WindowSpan{};
  window_.cycle = windows_saved_;
  window_.start_ns = ts;
  window_open_ = true;
  out->discard = true;
  out->discard_before_ns = std::max(out->discard_before_ns, ts);
}

void WindowTracker::CloseWindowAtCurrentStep(uint64_t ts, TrackerOutput* out) {
  CloseWindow(ts, /*partial=*/false, out);
  out->save.back().last_step = static_cast<uint32_t>(step_);
}

void WindowTracker::CloseWindow(uint64_t ts, bool partial, TrackerOutput* out) {
  window_.end_ns = ts;
  window_.partial = partial;
  if (schedule_.enabled()) {
    window_.last_step = static_cast<uint32_t>(partial ? step_ : step_ - 1);
  }
  window_.program_profiler_steps = std::move(program_profiler_steps_);
  program_profiler_steps_.clear();
  out->save.push_back(std::move(window_));
  window_ = WindowSpan{};
  window_open_ = false;
  ++windows_saved_;
}

TrackerOutput WindowTracker::OnCaptureStart(uint64_t ts) {
  TrackerOutput out;
  if (capture_.kind == CaptureRange::Kind::kNone || Control() || capture_done_ || window_open_ ||
      !AfterDelay(ts)) {
    return out;  // nested or late starts are ignored, as nsys does
  }
  if (capture_.duration_ns > 0 && captures_started_ > 0 &&
      ts >= first_capture_ns_ + capture_.duration_ns) {
    capture_done_ = true;
    return out;
  }
  if (captures_started_++ == 0) first_capture_ns_ = ts;
  OpenWindow(ts, &out);
  SetCollecting(&out, true);
  collecting_ = true;
  return out;
}

TrackerOutput WindowTracker::OnCaptureStop(uint64_t ts) {
  TrackerOutput out;
  if (capture_.kind == CaptureRange::Kind::kNone || Control() || !window_open_) return out;
  CloseWindow(ts, /*partial=*/false, &out);
  SetCollecting(&out, false);
  collecting_ = false;
  if (!capture_.repeat || (capture_.repeat_count > 0 && windows_saved_ >= capture_.repeat_count)) {
    capture_done_ = true;
  }
  return out;
}

TrackerOutput WindowTracker::OnTime(uint64_t now) {
  TrackerOutput out;
  if (schedule_.enabled()) {
    while (step_kind_ == StepSource::Kind::kTime && now >= next_time_step_ns_) {
      Merge(&out, Boundary(next_time_step_ns_, 0));
      next_time_step_ns_ += step_period_ns_;
    }
    return out;
  }
  if (Control()) {
    if (window_open_ && now >= control_end_ns_) {
      window_.last_step = step_ >= 0 ? static_cast<uint32_t>(step_) : 0;
      CloseWindow(control_end_ns_, /*partial=*/false, &out);
      control_end_ns_ = UINT64_MAX;
      SetCollecting(&out, false);
      collecting_ = false;
    }
    return out;
  }
  const bool time_window = capture_.kind == CaptureRange::Kind::kNone;
  if (time_window && !window_open_ && !capture_done_ && AfterDelay(now)) {
    const uint64_t open_at = start_ns_ + capture_.delay_ns;
    first_capture_ns_ = open_at;
    OpenWindow(open_at, &out);
    SetCollecting(&out, true);
    collecting_ = true;
  }
  if (window_open_ && capture_.duration_ns > 0 &&
      now >= first_capture_ns_ + capture_.duration_ns) {
    CloseWindow(first_capture_ns_ + capture_.duration_ns, /*partial=*/false, &out);
    SetCollecting(&out, false);
    collecting_ = false;
    capture_done_ = true;
  }
  return out;
}

TrackerOutput WindowTracker::OnExit(uint64_t ts) {
  TrackerOutput out;
  if (!windowed_) return out;
  control_steps_armed_ = 0;
  if (window_open_) {
    if ((schedule_.enabled() || control_steps_left_ > 0) && step_ >= 0) {
      window_.steps.push_back({step_start_ns_, ts, static_cast<uint32_t>(step_), step_tid_});
    }
    if (Control()) window_.last_step = step_ >= 0 ? static_cast<uint32_t>(step_) : 0;
    CloseWindow(ts, /*partial=*/true, &out);
  }
  if (collecting_) {
    SetCollecting(&out, false);
    collecting_ = false;
  }
  return out;
}

bool WindowTracker::CollectingNowOrNext() const {
  if (!schedule_.enabled()) return collecting_;
  const uint64_t next = static_cast<uint64_t>(step_ + 1);
  return collecting_ || ScheduleAction(schedule_, next) != StepAction::kNone;
}

uint64_t WindowTracker::NextDeadline() const {
  if (schedule_.enabled()) {
    return step_kind_ == StepSource::Kind::kTime ? next_time_step_ns_ : UINT64_MAX;
  }
  if (Control()) return window_open_ ? control_end_ns_ : UINT64_MAX;
  if (capture_done_) return UINT64_MAX;
  if (window_open_) {
    return capture_.duration_ns > 0 ? first_capture_ns_ + capture_.duration_ns : UINT64_MAX;
  }
  if (capture_.kind == CaptureRange::Kind::kNone) return start_ns_ + capture_.delay_ns;
  return UINT64_MAX;
}

}  // namespace gprof::collector
