// ProgramProfilerSteps on hand-built profiles: the steps whose ops the program's own
// torch.profiler had, read off by hand from the step ranges and the hook's marks.
#include "model/program_profiler_steps.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

void AddStep(Profile* p, uint64_t start, uint64_t end, uint32_t n, uint32_t tid = 1) {
  HostRange r{};
  r.start_ns = start;
  r.end_ns = end;
  r.name = p->strings.Intern("ProfilerStep#" + std::to_string(n));
  r.tid = tid;
  p->ranges.push_back(r);
}

void AddMark(Profile* p, uint64_t ts, std::string_view name, uint32_t tid = 1) {
  HostMark m{};
  m.ts_ns = ts;
  m.name = p->strings.Intern(name);
  m.tid = tid;
  p->marks.push_back(m);
}

// The issue's program on a whole run: its #0 and #1, its profiler started at 35 (it had #2 to
// #4), stopped at 55, then #5 and #6.
TEST(ProgramProfilerSteps, AWholeRunHasTheNumbersBetweenTheStepsAroundTheProfiler) {
  Profile p;
  AddStep(&p, 10, 20, 0);
  AddStep(&p, 20, 34, 1);
  AddMark(&p, 35, "gprof-run: torch.profiler started");
  AddMark(&p, 55, "gprof-run: torch.profiler stopped");
  AddStep(&p, 60, 70, 5);
  AddStep(&p, 70, 80, 6);
  AddMark(&p, 75, "gprof-run: torch.profiler started", /*tid=*/2);  // another thread: no steps
  EXPECT_EQ(ProgramProfilerSteps(p), (std::vector<StepRun>{{2, 4}}));
  EXPECT_EQ(ProgramProfilerStepsText(ProgramProfilerSteps(p)),
            "steps 2-4 ran under the program's own torch.profiler: their ops went to it, not to "
            "gprof-run");
}

// Its profiler started before its first step (a schedule that records from step 0) after
// gprof-run's own optimizer steps #0 to #3: its numbering starts at 0, so it had #0 and #1.
TEST(ProgramProfilerSteps, ANumberingThatStartsAgainCountsFromZero) {
  Profile p;
  AddStep(&p, 10, 20, 3);
  AddMark(&p, 25, "gprof-run: torch.profiler started");
  AddStep(&p, 40, 50, 2);
  EXPECT_EQ(ProgramProfilerSteps(p), (std::vector<StepRun>{{0, 1}}));
}

// No step after the profiler started (it ran to the end): which steps it had is unknown.
TEST(ProgramProfilerSteps, NoStepAfterTheProfilerSaysNothing) {
  Profile p;
  AddStep(&p, 10, 20, 0);
  AddMark(&p, 25, "gprof-run: torch.profiler started");
  EXPECT_TRUE(ProgramProfilerSteps(p).empty());
  EXPECT_EQ(ProgramProfilerStepsText({}), "");
}

// A window's marks (the window thread writes them) are read back and merged.
TEST(ProgramProfilerSteps, WindowMarksAreReadBackAndMerged) {
  EXPECT_EQ(ProgramProfilerStepsMark({2, 4}),
            "gprof-run: the program's own torch.profiler had steps 2-4");
  EXPECT_EQ(ProgramProfilerStepsMark({7, 7}),
            "gprof-run: the program's own torch.profiler had step 7");
  Profile p;
  AddMark(&p, 10, ProgramProfilerStepsMark({7, 7}));
  AddMark(&p, 10, ProgramProfilerStepsMark({2, 4}));
  AddMark(&p, 10, ProgramProfilerStepsMark({5, 5}));
  AddMark(&p, 10, ProgramProfilerStepsMark({10, 12}));
  AddMark(&p, 10, "gprof-run: the program's own torch.profiler had steps 4-2");  // not a run
  EXPECT_EQ(ProgramProfilerSteps(p), (std::vector<StepRun>{{2, 5}, {7, 7}, {10, 12}}));
  EXPECT_EQ(ProgramProfilerStepsText(ProgramProfilerSteps(p)),
            "steps 2-5, 7 and 10-12 ran under the program's own torch.profiler: their ops went "
            "to it, not to gprof-run");
  EXPECT_EQ(ProgramProfilerStepsText({{3, 3}}),
            "step 3 ran under the program's own torch.profiler: its ops went to it, not to "
            "gprof-run");
}

}  // namespace
}  // namespace gprof
