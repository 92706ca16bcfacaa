// --cpu-sampling's sampler process (cpu_sampler_process.cpp) and the queue it shares with the
// program (cpu_sample_queue.h), on this test process itself.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "collector/host/cpu_sample_queue.h"
#include "collector/host/cpu_sampler.h"
#include "collector/host/cpu_sampler_process.h"
#include "tests/support/perf_available.h"

namespace gprof::collector::cpu_sampling_internal {
namespace {

struct Drained {
  uint64_t time_ns;
  uint32_t tid;
  std::vector<uint64_t> pcs;
};

std::vector<Drained> DrainAll(CpuSampleQueue& q) {
  std::vector<Drained> out;
  q.Drain([&](uint64_t time_ns, uint32_t tid, uint64_t, const uint64_t* pcs, uint32_t depth) {
    out.push_back({time_ns, tid, std::vector<uint64_t>(pcs, pcs + depth)});
  });
  return out;
}

// The sampler process is another process that maps the queue's memfd: what it pushes must reach
// this one's drain.
TEST(CpuSampleQueue, SamplesPushedByAnotherProcessAreDrainedHere) {
  CpuSampleQueue mine;
  ASSERT_TRUE(mine.Init(64));
  ASSERT_GE(mine.fd(), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    CpuSampleQueue q;  // a fresh mapping of the same file, as gprof-cpu-sampler makes
    if (!q.Attach(mine.fd(), 64)) ::_exit(2);
    const uint64_t pcs[] = {0x1000, 0x2000, 0x3000};
    bool ok = q.TryPush(11, 101, 5, pcs, 3) && q.TryPush(12, 102, 5, pcs, 1);
    q.CountDropped(7);
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const std::vector<Drained> got = DrainAll(mine);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].tid, 101u);
  EXPECT_EQ(got[0].pcs, (std::vector<uint64_t>{0x1000, 0x2000, 0x3000}));
  EXPECT_EQ(got[1].time_ns, 12u);
  EXPECT_EQ(mine.dropped(), 7u);
}

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

__attribute__((noinline)) double Spin(uint64_t cpu_ns) {
  const uint64_t until = ThreadCpuNs() + cpu_ns;
  double x = 1.0;
  while (ThreadCpuNs() < until) {
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1.0 / (x + 3.0);
  }
  return x;
}

// No child of ours at all: the program's own wait()/waitpid(-1) must never see the sampler (a
// program that waits for all its children would wait for it forever), and nothing is left to
// reap.
bool NoChildOfOurs() {
  int status = 0;
  return ::waitpid(-1, &status, __WALL | WNOHANG) < 0 && errno == ECHILD;
}

// 50 ms of this thread's CPU time at 1 kHz: about 50 samples of this thread, taken and copied by
// the sampler process while this process runs none of its code (no reader thread here).
TEST(CpuSamplerProcess, SamplesThisProcessesSpinningThreadFromOutside) {
  std::string why = testing::PerfUnavailable();
  if (!why.empty()) {
    GTEST_SKIP() << "SKIPPED: perf_event_open is refused on this machine (" << why << ")";
  }
  ASSERT_TRUE(Queue().Init(kCpuSampleQueueSlots));
  DrainAll(Queue());
  ASSERT_TRUE(StartProcessSampler(1000, false, GPROF_CPU_SAMPLER_EXE, &why)) << why;
  EXPECT_TRUE(NoChildOfOurs()) << "the sampler process is this process's child";
  const std::set<int> threads_before = {static_cast<int>(::syscall(SYS_gettid))};
  volatile double sink = Spin(50'000'000);
  (void)sink;
  StopProcessSampler();
  EXPECT_TRUE(NoChildOfOurs());
  const std::vector<Drained> got = DrainAll(Queue());
  size_t mine = 0;
  for (const Drained& s : got) mine += threads_before.count(static_cast<int>(s.tid));
  // Slack: 50 expected; at least 10 whatever the machine's load (perf counts CPU time, so load
  // lengthens the spin in wall time but not its samples), and not far above 50.
  EXPECT_GE(mine, 10u) << got.size() << " samples";
  EXPECT_LE(got.size(), 80u);
}

// Refused (as under perf_event_paranoid 3 or without ptrace access): Start says why, and no
// sampler process is left behind.
TEST(CpuSamplerProcess, RefusedSamplerSaysWhyAndLeavesNoProcess) {
  std::string why;
  ASSERT_TRUE(Queue().Init(kCpuSampleQueueSlots));
  EXPECT_FALSE(StartProcessSampler(1000, true, GPROF_CPU_SAMPLER_EXE, &why));
  EXPECT_NE(why.find("perf_event_open refused to the sampler process"), std::string::npos) << why;
  EXPECT_NE(why.find(std::strerror(EACCES)), std::string::npos) << why;
  EXPECT_TRUE(NoChildOfOurs());
  StopProcessSampler();  // nothing to stop: no effect
}

}  // namespace
}  // namespace gprof::collector::cpu_sampling_internal
