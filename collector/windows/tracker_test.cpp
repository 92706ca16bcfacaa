#include "collector/windows/tracker.h"

#include <gtest/gtest.h>

namespace gprof::collector {
namespace {

constexpr uint64_t kStart = 1'000'000;

Config ScheduleConfig(uint32_t skip_first, uint32_t wait, uint32_t warmup, uint32_t active,
                      uint32_t repeat, StepSource::Kind kind = StepSource::Kind::kNvtx) {
  Config c;
  c.schedule = {skip_first, wait, warmup, active, repeat};
  c.step.kind = kind;
  return c;
}

// Drives a tracker and keeps the state a window thread would keep.
struct Driver {
  explicit Driver(const Config& c) : tracker(c, kStart) { Apply(tracker.Begin()); }
  void Apply(TrackerOutput out) {
    if (out.change_collecting) collecting = out.collecting;
    if (out.discard) last_discard = out.discard_before_ns;
    for (auto& w : out.save) saved.push_back(std::move(w));
  }
  void Step(uint64_t ts) { Apply(tracker.OnStepBoundary(ts, 7)); }
  void Exit(uint64_t ts) { Apply(tracker.OnExit(ts)); }
  WindowTracker tracker;
  bool collecting = false;
  uint64_t last_discard = 0;
  std::vector<WindowSpan> saved;
};

TEST(WindowTracker, NoScheduleCollectsWholeRun) {
  Driver d{Config{}};
  EXPECT_FALSE(d.tracker.windowed());
  EXPECT_TRUE(d.collecting);
  d.Exit(kStart + 100);
  EXPECT_TRUE(d.saved.empty());  // the runtime writes the whole-run dump itself
}

TEST(WindowTracker, NvtxStepsWaitWarmupActive) {
  Driver d{ScheduleConfig(0, 1, 1, 2, 1)};
  EXPECT_TRUE(d.tracker.windowed());
  EXPECT_FALSE(d.collecting);               // before the first step range
  EXPECT_FALSE(d.tracker.CollectingNowOrNext());  // step 0 is a wait step
  d.Step(kStart + 10);                      // step 0: wait
  EXPECT_FALSE(d.collecting);
  EXPECT_TRUE(d.tracker.CollectingNowOrNext());   // step 1 warms up: GPU activity goes on now
  d.Step(kStart + 20);                      // step 1: warmup
  EXPECT_TRUE(d.collecting);
  d.Step(kStart + 30);                      // step 2: active, warmup discarded
  EXPECT_EQ(d.last_discard, kStart + 30);
  d.Step(kStart + 40);                      // step 3: active, last
  EXPECT_TRUE(d.saved.empty());
  d.Step(kStart + 50);                      // step 4: window saved, collection off
  EXPECT_FALSE(d.collecting);
  ASSERT_EQ(d.saved.size(), 1u);
  const WindowSpan& w = d.saved[0];
  EXPECT_EQ(w.cycle, 0u);
  EXPECT_EQ(w.first_step, 2u);
  EXPECT_EQ(w.last_step, 3u);
  EXPECT_EQ(w.start_ns, kStart + 30);
  EXPECT_EQ(w.end_ns, kStart + 50);
  EXPECT_FALSE(w.partial);
  ASSERT_EQ(w.steps.size(), 2u);
  EXPECT_EQ(w.steps[0].number, 2u);
  EXPECT_EQ(w.steps[0].start_ns, kStart + 30);
  EXPECT_EQ(w.steps[0].end_ns, kStart + 40);
  EXPECT_EQ(w.steps[1].number, 3u);
  EXPECT_EQ(w.steps[1].tid, 7u);
  for (int i = 6; i < 20; ++i) d.Step(kStart + 10 * i);  // repeat=1: nothing more
  EXPECT_EQ(d.saved.size(), 1u);
  EXPECT_FALSE(d.collecting);
}

TEST(WindowTracker, SkipFirstAndRepeatProduceSeparateWindows) {
  Driver d{ScheduleConfig(2, 0, 1, 1, 3)};
  for (int i = 0; i < 12; ++i) d.Step(kStart + 100 * i);
  // steps: 0,1 skipped; then W S W S W S (steps 2..7); step 8 ends the third window.
  ASSERT_EQ(d.saved.size(), 3u);
  for (uint32_t c = 0; c < 3; ++c) {
    EXPECT_EQ(d.saved[c].cycle, c);
    EXPECT_EQ(d.saved[c].first_step, 3 + 2 * c);
    EXPECT_EQ(d.saved[c].last_step, 3 + 2 * c);
    EXPECT_EQ(d.saved[c].steps.size(), 1u);
  }
  EXPECT_FALSE(d.collecting);
}

TEST(WindowTracker, RepeatZeroCyclesUntilExit) {
  Driver d{ScheduleConfig(0, 0, 0, 1, 0)};
  for (int i = 0; i < 50; ++i) d.Step(kStart + i);
  EXPECT_EQ(d.saved.size(), 49u);
  EXPECT_TRUE(d.collecting);
}

TEST(WindowTracker, ExitDuringActiveSavesPartialWindow) {
  Driver d{ScheduleConfig(0, 0, 1, 3, 1)};
  d.Step(kStart + 10);  // warmup
  d.Step(kStart + 20);  // active
  d.Step(kStart + 30);  // active
  d.Exit(kStart + 35);
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_TRUE(d.saved[0].partial);
  EXPECT_EQ(d.saved[0].first_step, 1u);
  EXPECT_EQ(d.saved[0].last_step, 2u);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 35);
  EXPECT_EQ(d.saved[0].steps.size(), 2u);
  EXPECT_FALSE(d.collecting);
}

TEST(WindowTracker, ExitDuringWarmupSavesNothing) {
  Driver d{ScheduleConfig(0, 1, 2, 1, 1)};
  d.Step(kStart + 10);  // wait
  d.Step(kStart + 20);  // warmup
  EXPECT_TRUE(d.collecting);
  d.Exit(kStart + 25);
  EXPECT_TRUE(d.saved.empty());
  EXPECT_FALSE(d.collecting);
}

TEST(WindowTracker, RunWithNoStepsSavesNothing) {
  Driver d{ScheduleConfig(0, 0, 0, 2, 1)};
  d.Exit(kStart + 1000);
  EXPECT_TRUE(d.saved.empty());
}

TEST(WindowTracker, EndOfStepSourcesStartStepZeroAtProgramStart) {
  // kernel/api sources: each event ends a step, so active=1 saves at the first event.
  Driver d{ScheduleConfig(0, 0, 0, 1, 2, StepSource::Kind::kKernel)};
  EXPECT_TRUE(d.collecting);
  d.Step(kStart + 10);
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_EQ(d.saved[0].start_ns, kStart);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 10);
  EXPECT_EQ(d.saved[0].first_step, 0u);
  d.Step(kStart + 20);
  EXPECT_EQ(d.saved.size(), 2u);
  EXPECT_FALSE(d.collecting);
}

TEST(WindowTracker, TimeSlicedSteps) {
  Config c = ScheduleConfig(1, 0, 0, 2, 1, StepSource::Kind::kTime);
  c.step.period_ns = 100;
  Driver d{c};
  EXPECT_FALSE(d.collecting);                   // step 0 skipped
  EXPECT_EQ(d.tracker.NextDeadline(), kStart + 100);
  d.Step(kStart + 50);                          // ignored: time source
  d.Apply(d.tracker.OnTime(kStart + 250));      // steps 1 and 2 begin
  EXPECT_TRUE(d.collecting);
  d.Apply(d.tracker.OnTime(kStart + 300));      // step 3 begins: window saved
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_EQ(d.saved[0].start_ns, kStart + 100);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 300);
  EXPECT_EQ(d.saved[0].steps.size(), 2u);
}

Config CaptureConfig(CaptureRange::Kind kind, bool repeat, uint32_t count = 0) {
  Config c;
  c.capture.kind = kind;
  c.capture.repeat = repeat;
  c.capture.repeat_count = count;
  return c;
}

TEST(WindowTracker, CudaProfilerApiStopAfterFirstRange) {
  Driver d{CaptureConfig(CaptureRange::Kind::kCudaProfilerApi, false)};
  EXPECT_FALSE(d.collecting);
  d.Apply(d.tracker.OnCaptureStart(kStart + 10));
  EXPECT_TRUE(d.collecting);
  EXPECT_EQ(d.last_discard, kStart + 10);
  d.Apply(d.tracker.OnCaptureStart(kStart + 15));  // nested start ignored
  d.Apply(d.tracker.OnCaptureStop(kStart + 20));
  EXPECT_FALSE(d.collecting);
  d.Apply(d.tracker.OnCaptureStart(kStart + 30));  // stop: no second window
  d.Apply(d.tracker.OnCaptureStop(kStart + 40));
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_EQ(d.saved[0].start_ns, kStart + 10);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 20);
}

TEST(WindowTracker, CaptureRepeatWithLimit) {
  Driver d{CaptureConfig(CaptureRange::Kind::kNvtx, true, 2)};
  for (int i = 0; i < 5; ++i) {
    d.Apply(d.tracker.OnCaptureStart(kStart + 100 * i));
    d.Apply(d.tracker.OnCaptureStop(kStart + 100 * i + 50));
  }
  ASSERT_EQ(d.saved.size(), 2u);
  EXPECT_EQ(d.saved[1].cycle, 1u);
  EXPECT_EQ(d.saved[1].start_ns, kStart + 100);
}

TEST(WindowTracker, CaptureOpenAtExitIsPartial) {
  Driver d{CaptureConfig(CaptureRange::Kind::kCudaProfilerApi, false)};
  d.Apply(d.tracker.OnCaptureStart(kStart + 10));
  d.Exit(kStart + 99);
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_TRUE(d.saved[0].partial);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 99);
}

TEST(WindowTracker, DelayAndDurationWindow) {
  Config c;
  c.capture.delay_ns = 100;
  c.capture.duration_ns = 50;
  Driver d{c};
  EXPECT_FALSE(d.collecting);
  EXPECT_EQ(d.tracker.NextDeadline(), kStart + 100);
  d.Apply(d.tracker.OnTime(kStart + 120));
  EXPECT_TRUE(d.collecting);
  EXPECT_EQ(d.tracker.NextDeadline(), kStart + 150);
  d.Apply(d.tracker.OnTime(kStart + 160));
  EXPECT_FALSE(d.collecting);
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_EQ(d.saved[0].start_ns, kStart + 100);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 150);
  d.Apply(d.tracker.OnTime(kStart + 1000));
  EXPECT_EQ(d.saved.size(), 1u);
}

TEST(WindowTracker, CaptureStartsBeforeDelayAreIgnored) {
  Config c = CaptureConfig(CaptureRange::Kind::kCudaProfilerApi, true);
  c.capture.delay_ns = 100;
  Driver d{c};
  d.Apply(d.tracker.OnCaptureStart(kStart + 10));
  d.Apply(d.tracker.OnCaptureStop(kStart + 20));
  EXPECT_TRUE(d.saved.empty());
  d.Apply(d.tracker.OnCaptureStart(kStart + 110));
  d.Apply(d.tracker.OnCaptureStop(kStart + 120));
  EXPECT_EQ(d.saved.size(), 1u);
}

Config ControlConfig(StepSource::Kind kind = StepSource::Kind::kNvtx) {
  Config c;
  c.start_paused = true;
  c.capture.kind = CaptureRange::Kind::kControl;
  c.step.kind = kind;
  return c;
}

// --start-paused: nothing is collected until asked; the program's own cudaProfilerStart/Stop
// open nothing.
TEST(WindowTracker, StartPausedCollectsNothingUntilAskedAndIgnoresProgramCaptureRanges) {
  Driver d{ControlConfig()};
  EXPECT_TRUE(d.tracker.windowed());
  EXPECT_FALSE(d.collecting);
  d.Apply(d.tracker.OnCaptureStart(kStart + 10));
  d.Step(kStart + 20);
  EXPECT_FALSE(d.collecting);
  EXPECT_FALSE(d.tracker.InWindow());
  EXPECT_EQ(d.tracker.NextDeadline(), UINT64_MAX);
  d.Exit(kStart + 100);
  EXPECT_TRUE(d.saved.empty());
}

// capture --duration 50: a window [ts, ts + 50) saved when the time passes; a second capture is
// window 1.
TEST(WindowTracker, ControlCaptureForADurationClosesOnTime) {
  Driver d{ControlConfig()};
  d.Apply(d.tracker.OnControlCapture(kStart + 100, 50, 0));
  EXPECT_TRUE(d.collecting);
  EXPECT_TRUE(d.tracker.InWindow());
  EXPECT_EQ(d.last_discard, kStart + 100);
  EXPECT_EQ(d.tracker.NextDeadline(), kStart + 150);
  // A second request while one is open is ignored.
  d.Apply(d.tracker.OnControlCapture(kStart + 120, 1000, 0));
  d.Apply(d.tracker.OnTime(kStart + 149));
  EXPECT_TRUE(d.saved.empty());
  d.Apply(d.tracker.OnTime(kStart + 170));  // the window thread woke late: the cut is exact
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_EQ(d.saved[0].cycle, 0u);
  EXPECT_EQ(d.saved[0].start_ns, kStart + 100);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 150);
  EXPECT_FALSE(d.saved[0].partial);
  EXPECT_FALSE(d.collecting);
  EXPECT_EQ(d.tracker.WindowsSaved(), 1u);
  d.Apply(d.tracker.OnControlCapture(kStart + 300, 10, 0));
  d.Apply(d.tracker.OnTime(kStart + 310));
  ASSERT_EQ(d.saved.size(), 2u);
  EXPECT_EQ(d.saved[1].cycle, 1u);
  EXPECT_EQ(d.saved[1].start_ns, kStart + 300);
}

// resume (no duration) runs until pause; a pause with nothing open changes nothing.
TEST(WindowTracker, ResumeRunsUntilPause) {
  Driver d{ControlConfig()};
  d.Apply(d.tracker.OnControlPause(kStart + 5));
  EXPECT_TRUE(d.saved.empty());
  d.Apply(d.tracker.OnControlCapture(kStart + 10, 0, 0));
  EXPECT_EQ(d.tracker.NextDeadline(), UINT64_MAX);
  d.Apply(d.tracker.OnTime(kStart + 1'000'000'000));
  EXPECT_TRUE(d.tracker.InWindow());
  d.Apply(d.tracker.OnControlPause(kStart + 2'000'000'000));
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_EQ(d.saved[0].start_ns, kStart + 10);
  EXPECT_EQ(d.saved[0].end_ns, kStart + 2'000'000'000);
  EXPECT_FALSE(d.collecting);
}

// capture --steps 2 with NVTX steps: collection goes on at once (the first step's GPU work must
// not be missed), the window opens at the next boundary and closes at the second boundary after
// it. Steps are numbered within the capture (0 and 1): while paused the hooks that see step
// boundaries are off, so the program's own count is unknown.
TEST(WindowTracker, ControlCaptureOfStepsStartsAtTheNextBoundary) {
  Driver d{ControlConfig()};
  for (uint64_t i = 0; i < 3; ++i) d.Step(kStart + 10 * i);  // steps 0, 1, 2 begin
  d.Apply(d.tracker.OnControlCapture(kStart + 25, 0, 2));
  EXPECT_TRUE(d.collecting);
  EXPECT_TRUE(d.tracker.ControlArmed());
  EXPECT_FALSE(d.tracker.InWindow());
  d.Step(kStart + 30);  // capture step 0 begins: the window opens
  EXPECT_TRUE(d.tracker.InWindow());
  EXPECT_EQ(d.last_discard, kStart + 30);
  d.Step(kStart + 40);  // capture step 1
  EXPECT_TRUE(d.saved.empty());
  d.Step(kStart + 55);  // both steps are done
  ASSERT_EQ(d.saved.size(), 1u);
  const WindowSpan& w = d.saved[0];
  EXPECT_EQ(w.start_ns, kStart + 30);
  EXPECT_EQ(w.end_ns, kStart + 55);
  EXPECT_EQ(w.first_step, 0u);
  EXPECT_EQ(w.last_step, 1u);
  ASSERT_EQ(w.steps.size(), 2u);
  EXPECT_EQ(w.steps[0].number, 0u);
  EXPECT_EQ(w.steps[1].start_ns, kStart + 40);
  EXPECT_EQ(w.steps[1].end_ns, kStart + 55);
  EXPECT_FALSE(d.collecting);
}

// A pause cancels a steps capture still waiting for its first boundary; exit in the middle of
// a capture saves it as partial.
TEST(WindowTracker, ControlPauseCancelsAWaitingCaptureAndExitSavesPartial) {
  Driver d{ControlConfig(StepSource::Kind::kApi)};
  d.Apply(d.tracker.OnControlCapture(kStart + 10, 0, 5));
  d.Apply(d.tracker.OnControlPause(kStart + 20));
  EXPECT_FALSE(d.tracker.ControlArmed());
  EXPECT_FALSE(d.collecting);
  EXPECT_TRUE(d.saved.empty());
  d.Apply(d.tracker.OnControlCapture(kStart + 30, 0, 5));
  d.Step(kStart + 40);  // capture step 0 begins
  d.Step(kStart + 50);  // step 1
  d.Exit(kStart + 60);
  ASSERT_EQ(d.saved.size(), 1u);
  EXPECT_TRUE(d.saved[0].partial);
  EXPECT_EQ(d.saved[0].start_ns, kStart + 40);
  EXPECT_EQ(d.saved[0].first_step, 0u);
  EXPECT_EQ(d.saved[0].last_step, 1u);
  EXPECT_EQ(d.saved[0].steps.size(), 2u);
}

}  // namespace
}  // namespace gprof::collector
