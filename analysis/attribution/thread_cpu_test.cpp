// ThreadCpuIndex (thread_cpu.h): a thread's CPU time between two moments from samples taken
// around them, values derived by hand in each test's comment.
#include "analysis/attribution/thread_cpu.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

// Thread 1 sampled at 0, 10 ms and 20 ms with 0, 6 ms and 16 ms of CPU and 0, 1 ms, 1 ms of
// waiting for a CPU. Step [5 ms, 15 ms): CPU at 5 ms = 3 ms, at 15 ms = 6 + 5 = 11 ms: 8 ms;
// waiting 0.5 ms -> 1 ms: 0.5 ms. Runnable 8.5 ms.
TEST(ThreadCpu, AStepBetweenSamplesIsInterpolatedLinearly) {
  Profile p;
  p.thread_cpu = {{0, 0, 0, 1, 0}, {10'000'000, 6'000'000, 1'000'000, 1, 0},
                  {20'000'000, 16'000'000, 1'000'000, 1, 0}};
  const ThreadCpuIndex index(p);
  const auto step = index.In(1, 5'000'000, 15'000'000);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->cpu_ns, 8'000'000u);
  EXPECT_EQ(step->wait_ns, 500'000u);
  EXPECT_EQ(step->runnable_ns(), 8'500'000u);
  // On the samples themselves: exact.
  const auto whole = index.In(1, 0, 20'000'000);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->cpu_ns, 16'000'000u);
}

// Spans outside the samples are unknown; an unknown thread too.
TEST(ThreadCpu, SpansPastTheSamplesOrOfUnknownThreadsHaveNoValue) {
  Profile p;
  p.thread_cpu = {{1'000, 0, 0, 1, 0}, {2'000, 500, 0, 1, 0}};
  const ThreadCpuIndex index(p);
  EXPECT_FALSE(index.In(1, 500, 1'500).has_value());
  EXPECT_FALSE(index.In(1, 1'500, 2'500).has_value());
  EXPECT_FALSE(index.In(2, 1'000, 2'000).has_value());
  EXPECT_TRUE(index.In(1, 1'000, 2'000).has_value());
}

// Thread 2 first appears in the round at 20 ms with 4 ms of CPU (rounds at 0, 10, 20 ms by
// thread 1): it started after the 10 ms round, counting from zero there, so [10, 20 ms) holds its
// 4 ms and [0, 10 ms) none. Thread 3 is last seen at 10 ms: it had ended by 20 ms, and used
// nothing after its last sample. A segment's last round repeated as the next one's first counts
// once.
TEST(ThreadCpu, ThreadsBornOrEndedBetweenRoundsCountFromZeroAndStopAtTheirLastSample) {
  Profile p;
  p.thread_cpu = {{0, 0, 0, 1, 0},          {10'000'000, 1, 0, 1, 0},
                  {10'000'000, 1, 0, 1, 0}, {20'000'000, 2, 0, 1, 0},
                  {20'000'000, 4'000'000, 0, 2, 0},
                  {0, 0, 0, 3, 0},          {10'000'000, 7'000'000, 0, 3, 0}};
  const ThreadCpuIndex index(p);
  EXPECT_EQ(index.In(2, 10'000'000, 20'000'000)->cpu_ns, 4'000'000u);
  EXPECT_EQ(index.In(2, 0, 10'000'000)->cpu_ns, 0u);
  EXPECT_EQ(index.In(2, 15'000'000, 20'000'000)->cpu_ns, 2'000'000u);
  EXPECT_EQ(index.In(3, 0, 20'000'000)->cpu_ns, 7'000'000u);
  EXPECT_EQ(index.In(3, 10'000'000, 20'000'000)->cpu_ns, 0u);
  EXPECT_EQ(index.In(1, 0, 20'000'000)->cpu_ns, 2u);
}

// The kernel updates the counters at scheduling events: a wait is added when the thread gets the
// CPU, so the round after a long wait may carry more than the span between rounds. 6 ms of CPU
// and 8 ms of waiting between rounds 10 ms apart: runnable at most the 10 ms, the CPU first.
TEST(ThreadCpu, ASpanIsNeverRunnableLongerThanItLasts) {
  Profile p;
  p.thread_cpu = {{0, 0, 0, 1, 0}, {10'000'000, 6'000'000, 8'000'000, 1, 0}};
  const auto span = ThreadCpuIndex(p).In(1, 0, 10'000'000);
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->cpu_ns, 6'000'000u);
  EXPECT_EQ(span->wait_ns, 4'000'000u);
}

}  // namespace
}  // namespace gprof
