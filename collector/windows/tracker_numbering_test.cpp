// WindowTracker with the program's own step numbers (ProfilerStep#N) and the program's own
// torch.profiler taking the ops for a while: windows are named by the program's numbers and hold
// exactly the steps they name.
#include <gtest/gtest.h>

#include "collector/windows/tracker.h"

namespace gprof::collector {
namespace {

constexpr uint64_t kStart = 1'000'000;
constexpr uint32_t kTid = 7;

Config ScheduleConfig(uint32_t wait, uint32_t warmup, uint32_t active, uint32_t repeat) {
  Config c;
  c.schedule = {0, wait, warmup, active, repeat};
  c.step.kind = StepSource::Kind::kNvtx;
  return c;
}

struct Driver {
  explicit Driver(const Config& c) : tracker(c, kStart) { Apply(tracker.Begin()); }
  void Apply(TrackerOutput out) {
    for (auto& w : out.save) saved.push_back(std::move(w));
  }
  // ProfilerStep#number begins at kStart + t.
  void Step(uint64_t t, int64_t number) {
    Apply(tracker.OnStepBoundary(kStart + t, kTid, number));
  }
  void ProgramProfiler(uint64_t t, uint32_t tid = kTid) {
    Apply(tracker.OnProgramProfiler(kStart + t, tid));
  }
  void Exit(uint64_t t) { Apply(tracker.OnExit(kStart + t)); }
  WindowTracker tracker;
  std::vector<WindowSpan> saved;
};

std::vector<uint32_t> Numbers(const WindowSpan& w) {
  std::vector<uint32_t> out;
  for (const Step& s : w.steps) out.push_back(s.number);
  return out;
}

// The run: gprof-run's own ProfilerStep#0 (a forward before the loop), then the program's
// torch.profiler with its own schedule (wait 1, warmup 1, active 3): its #0 and #1 are seen, its
// profiler has the ops of #2 to #4, then #5 to #8 are seen again. gprof-run's schedule, wait 1,
// warmup 1, active 3, cycling: cycle 0 is the program's steps 2-4, which gprof-run never had,
// so no window; cycle 1 is steps 7-9, of which 7 and 8 ran before the exit.
TEST(WindowTrackerNumbering, WindowsAreNamedByTheProgramsStepNumbers) {
  Driver d{ScheduleConfig(1, 1, 3, 0)};
  d.Step(10, 0);            // gprof-run's ProfilerStep#0
  d.Step(20, 0);            // the program's #0: its numbering starts
  d.Step(30, 1);
  d.ProgramProfiler(35);    // its profiler has #2, #3, #4
  d.Step(60, 5);
  d.Step(70, 6);
  d.Step(80, 7);
  d.Step(90, 8);
  d.Exit(100);
  ASSERT_EQ(d.saved.size(), 1u);
  const WindowSpan& w = d.saved[0];
  EXPECT_EQ(w.cycle, 1u);
  EXPECT_EQ(w.first_step, 7u);
  EXPECT_EQ(w.last_step, 8u);
  EXPECT_EQ(w.start_ns, kStart + 80);
  EXPECT_EQ(w.end_ns, kStart + 100);
  EXPECT_TRUE(w.partial);
  EXPECT_EQ(Numbers(w), (std::vector<uint32_t>{7, 8}));
  ASSERT_EQ(w.program_profiler_steps.size(), 1u);
  EXPECT_EQ(w.program_profiler_steps[0], (std::pair<uint32_t, uint32_t>{2, 4}));
}

// A window the program's profiler interrupts ends where that profiler starts; the steps after it
// make a window of their own: no window spans the ops the program's profiler had.
TEST(WindowTrackerNumbering, TheProgramsProfilerEndsTheWindowAndTheRestIsAWindowOfItsOwn) {
  Driver d{ScheduleConfig(0, 1, 4, 1)};  // step 0 warms up, steps 1-4 are active
  d.Step(10, 0);
  d.Step(20, 1);
  d.Step(30, 2);
  d.ProgramProfiler(35);                 // it has #3
  d.Step(60, 4);
  d.Step(70, 5);
  ASSERT_EQ(d.saved.size(), 2u);
  EXPECT_EQ(d.saved[0].first_step, 1u);
  EXPECT_EQ(d.saved[0].last_step, 2u);
  EXPECT_EQ(d.saved[0].start_ns, kStart + 20);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 35);
  EXPECT_FALSE(d.saved[0].partial);
  EXPECT_EQ(Numbers(d.saved[0]), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(d.saved[0].steps[1].end_ns, kStart + 35);
  EXPECT_EQ(d.saved[1].first_step, 4u);
  EXPECT_EQ(d.saved[1].last_step, 4u);
  EXPECT_EQ(d.saved[1].start_ns, kStart + 60);
  EXPECT_EQ(d.saved[1].end_ns, kStart + 70);
  EXPECT_EQ(d.saved[1].cycle, 0u);
  EXPECT_EQ(Numbers(d.saved[1]), (std::vector<uint32_t>{4}));
  ASSERT_EQ(d.saved[1].program_profiler_steps.size(), 1u);
  EXPECT_EQ(d.saved[1].program_profiler_steps[0], (std::pair<uint32_t, uint32_t>{3, 3}));
}

// Another thread's profiler leaves the stepping thread's ops alone: the window stays whole.
TEST(WindowTrackerNumbering, AProfilerOnAnotherThreadKeepsTheWindowWhole) {
  Driver d{ScheduleConfig(0, 1, 4, 1)};
  d.Step(10, 0);
  d.Step(20, 1);
  d.ProgramProfiler(25, kTid + 1);
  d.Step(30, 2);
  d.Step(40, 3);
  d.Step(50, 4);
  d.Step(60, 5);
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_EQ(d.saved[0].first_step, 1u);
  EXPECT_EQ(d.saved[0].last_step, 4u);
  EXPECT_EQ(Numbers(d.saved[0]), (std::vector<uint32_t>{1, 2, 3, 4}));
  EXPECT_TRUE(d.saved[0].program_profiler_steps.empty());
}

// Numbers that skip ahead end the window at the boundary: steps 0-1, then 3 on its own (step 2
// was never seen, so no window claims it).
TEST(WindowTrackerNumbering, ANumberThatSkipsAheadEndsTheWindow) {
  Driver d{ScheduleConfig(0, 0, 4, 1)};
  d.Step(10, 0);
  d.Step(20, 1);
  d.Step(30, 3);
  d.Step(40, 4);
  ASSERT_EQ(d.saved.size(), 2u);
  EXPECT_EQ(Numbers(d.saved[0]), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(d.saved[0].last_step, 1u);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 30);
  EXPECT_EQ(Numbers(d.saved[1]), (std::vector<uint32_t>{3}));
  EXPECT_EQ(d.saved[1].first_step, 3u);
  EXPECT_EQ(d.saved[1].last_step, 3u);
  EXPECT_TRUE(d.saved[1].program_profiler_steps.empty());  // not the program's profiler
}

// A numbering that starts again (a second torch.profiler) starts the schedule again; the cycle
// numbers go on, so the two windows of steps 0-1 get different file names.
TEST(WindowTrackerNumbering, ANumberingThatStartsAgainStartsTheScheduleWithNewCycleNumbers) {
  Driver d{ScheduleConfig(0, 0, 2, 1)};
  d.Step(10, 0);
  d.Step(20, 1);
  d.Step(30, 2);
  d.Step(40, 0);
  d.Step(50, 1);
  d.Step(60, 2);
  ASSERT_EQ(d.saved.size(), 2u);
  EXPECT_EQ(d.saved[0].cycle, 0u);
  EXPECT_EQ(d.saved[1].cycle, 1u);
  for (const WindowSpan& w : d.saved) {
    EXPECT_EQ(w.first_step, 0u);
    EXPECT_EQ(w.last_step, 1u);
    EXPECT_EQ(Numbers(w), (std::vector<uint32_t>{0, 1}));
  }
  EXPECT_EQ(d.saved[1].start_ns, kStart + 40);
}

}  // namespace
}  // namespace gprof::collector
