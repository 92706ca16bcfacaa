#include "collector/windows/schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace gprof::collector {
namespace {

// One letter per step: N none, W warmup, R record, S record-and-save.
std::string Actions(const Schedule& s, int steps) {
  std::string out;
  for (int i = 0; i < steps; ++i) {
    switch (ScheduleAction(s, i)) {
      case StepAction::kNone: out += 'N'; break;
      case StepAction::kWarmup: out += 'W'; break;
      case StepAction::kRecord: out += 'R'; break;
      case StepAction::kRecordAndSave: out += 'S'; break;
    }
  }
  return out;
}

Schedule Make(uint32_t skip_first, uint32_t wait, uint32_t warmup, uint32_t active,
              uint32_t repeat) {
  Schedule s;
  s.skip_first = skip_first;
  s.wait = wait;
  s.warmup = warmup;
  s.active = active;
  s.repeat = repeat;
  return s;
}

// Expected strings follow torch.profiler.schedule's documented behaviour.
TEST(WindowSchedule, TorchDocExample) {
  // schedule(wait=1, warmup=1, active=2, repeat=1)
  EXPECT_EQ(Actions(Make(0, 1, 1, 2, 1), 8), "NWRSNNNN");
}

TEST(WindowSchedule, SkipFirstShiftsEverything) {
  EXPECT_EQ(Actions(Make(2, 1, 1, 2, 1), 8), "NNNWRSNN");
}

TEST(WindowSchedule, RepeatZeroCyclesForever) {
  EXPECT_EQ(Actions(Make(0, 0, 1, 1, 0), 8), "WSWSWSWS");
}

TEST(WindowSchedule, RepeatCountsCycles) {
  EXPECT_EQ(Actions(Make(0, 1, 0, 2, 2), 10), "NRSNRSNNNN");
}

TEST(WindowSchedule, ActiveOneSavesEveryActiveStep) {
  EXPECT_EQ(Actions(Make(0, 0, 0, 1, 3), 5), "SSSNN");
}

TEST(WindowSchedule, NoScheduleRecordsEverything) {
  EXPECT_EQ(Actions(Schedule{}, 3), "RRR");
}

TEST(WindowSchedule, CycleNumbers) {
  const Schedule s = Make(1, 1, 1, 1, 0);
  EXPECT_EQ(ScheduleCycle(s, 0), 0u);
  EXPECT_EQ(ScheduleCycle(s, 3), 0u);
  EXPECT_EQ(ScheduleCycle(s, 4), 1u);
  EXPECT_EQ(ScheduleCycle(s, 7), 2u);
}

TEST(WindowSchedule, TransitionsOfOneCycle) {
  const Schedule s = Make(0, 1, 1, 2, 1);  // N W R S N
  EXPECT_FALSE(TransitionAt(s, 0).start_collecting);
  EXPECT_TRUE(TransitionAt(s, 1).start_collecting);   // wait -> warmup
  EXPECT_TRUE(TransitionAt(s, 2).discard_before);     // warmup -> record
  EXPECT_FALSE(TransitionAt(s, 3).discard_before);
  const StepTransition after = TransitionAt(s, 4);    // record-and-save -> none
  EXPECT_TRUE(after.save_window);
  EXPECT_TRUE(after.stop_collecting);
  EXPECT_FALSE(after.start_collecting);
}

TEST(WindowSchedule, BackToBackWindowsRestartCollection) {
  const Schedule s = Make(0, 0, 0, 2, 0);  // R S R S ...
  const StepTransition t = TransitionAt(s, 2);
  EXPECT_TRUE(t.save_window);
  EXPECT_TRUE(t.start_collecting);
  EXPECT_FALSE(t.stop_collecting);
  EXPECT_FALSE(t.discard_before);
}

}  // namespace
}  // namespace gprof::collector
