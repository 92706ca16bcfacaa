#include "collector/windows/schedule.h"

namespace gprof::collector {

StepAction ScheduleAction(const Schedule& s, uint64_t step) {
  if (!s.enabled()) return StepAction::kRecord;
  if (step < s.skip_first) return StepAction::kNone;
  step -= s.skip_first;
  const uint64_t period = uint64_t{s.wait} + s.warmup + s.active;
  if (s.repeat > 0 && step / period >= s.repeat) return StepAction::kNone;
  const uint64_t mod = step % period;
  if (mod < s.wait) return StepAction::kNone;
  if (mod < uint64_t{s.wait} + s.warmup) return StepAction::kWarmup;
  return mod < period - 1 ? StepAction::kRecord : StepAction::kRecordAndSave;
}

uint64_t ScheduleCycle(const Schedule& s, uint64_t step) {
  if (!s.enabled() || step < s.skip_first) return 0;
  return (step - s.skip_first) / (uint64_t{s.wait} + s.warmup + s.active);
}

StepTransition TransitionAt(const Schedule& s, uint64_t step) {
  const StepAction prev = step == 0 ? StepAction::kNone : ScheduleAction(s, step - 1);
  StepTransition t;
  t.action = ScheduleAction(s, step);
  const bool was_on = prev != StepAction::kNone;
  const bool is_on = t.action != StepAction::kNone;
  t.save_window = prev == StepAction::kRecordAndSave;
  // After a save the next window starts from nothing, whatever the new action is.
  t.start_collecting = is_on && (!was_on || t.save_window);
  t.stop_collecting = was_on && !is_on;
  t.discard_before = prev == StepAction::kWarmup &&
                     (t.action == StepAction::kRecord || t.action == StepAction::kRecordAndSave);
  return t;
}

}  // namespace gprof::collector
