// What gprof-run does with CUPTI's process-wide state, checked through the recording fault shim
// (cupti_fault_shim.cpp, mode "record_calls": every call the collector makes, in order) in front
// of the stand-in. Each test is one of issue 11's product fixes and fails without it:
//   - subscribe first, touch no global CUPTI state unless that succeeded (another tool holding
//     CUPTI keeps its buffer callbacks);
//   - per-thread activity buffers switched off deliberately, before the callbacks are registered;
//   - no cuptiFinalize at exit;
//   - a libcupti of the same 13.0 family with another patch level is used, not refused;
//   - schedule windows end with CUPTI's default flush (forced only at exit).
// These prove that the collector makes these calls on the stand-in; the calls' effect on real
// CUPTI is the gpu-labelled tests' and scripts/gpu-check's business.
#include <cupti.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "tests/collection/collection_util.h"

namespace gprof::testing {
namespace {

std::string StandInCupti() { return StandInLibDir() + "/libcupti.so.13"; }

// The shim's call log: the names after "GPROF_SHIM_CALLS", in order.
std::vector<std::string> ShimCalls(const std::string& err) {
  const size_t at = err.find("GPROF_SHIM_CALLS");
  std::vector<std::string> calls;
  if (at == std::string::npos) return calls;
  std::istringstream line(err.substr(at + 16, err.find('\n', at) - at - 16));
  for (std::string call; line >> call;) calls.push_back(call);
  return calls;
}

size_t IndexOf(const std::vector<std::string>& calls, const std::string& prefix) {
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].rfind(prefix, 0) == 0) return i;
  }
  return calls.size();
}

size_t CountOf(const std::vector<std::string>& calls, const std::string& prefix) {
  size_t n = 0;
  for (const std::string& c : calls) n += c.rfind(prefix, 0) == 0;
  return n;
}

class CuptiContract : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef GPROF_CUPTI_FAULT_SHIM
    GTEST_SKIP() << "fault shim not built";
#else
    if (access(StandInCupti().c_str(), F_OK) != 0 || access(InjectLibPath().c_str(), F_OK) != 0) {
      GTEST_SKIP() << "build the cudasim, gprof_inject and CUDA example targets first";
    }
#endif
  }
  ProfiledRun Run(const std::vector<std::string>& argv, std::map<std::string, std::string> env,
                  const std::string& tag) {
#ifdef GPROF_CUPTI_FAULT_SHIM
    env["GPROF_CUPTI_LIB"] = GPROF_CUPTI_FAULT_SHIM;
#endif
    env["GPROF_TEST_FAULT_TARGET"] = StandInCupti();
    env["GPROF_TEST_FAULT_MODE"] = "record_calls";
    return RunProfiled(argv, StandInLibDir(), env, tag);
  }
};

TEST_F(CuptiContract, SubscribesBeforeTouchingProcessWideState) {
  ProfiledRun run = Run({ExamplePath("launch_loop"), "10"}, {}, "order");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const std::vector<std::string> calls = ShimCalls(run.process.err);
  ASSERT_FALSE(calls.empty()) << run.process.err;
  const size_t subscribe = IndexOf(calls, "cuptiSubscribe_v2");
  ASSERT_LT(subscribe, calls.size());
  EXPECT_LT(subscribe, IndexOf(calls, "cuptiActivityRegisterCallbacks"));
  EXPECT_LT(subscribe, IndexOf(calls, "cuptiActivitySetAttribute"));
  EXPECT_LT(subscribe, IndexOf(calls, "cuptiActivityEnable"));
}

TEST_F(CuptiContract, AnotherToolHoldingCuptiKeepsItsBufferCallbacks) {
  ProfiledRun run = Run({ExamplePath("launch_loop"), "10"}, {{"CUDASIM_CUPTI_HOLDER", "Kineto"}},
                        "held");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const std::vector<std::string> calls = ShimCalls(run.process.err);
  ASSERT_LT(IndexOf(calls, "cuptiSubscribe_v2"), calls.size()) << run.process.err;
  EXPECT_EQ(CountOf(calls, "cuptiActivityRegisterCallbacks"), 0u) << run.process.err;
  EXPECT_EQ(CountOf(calls, "cuptiActivitySetAttribute"), 0u) << run.process.err;
  EXPECT_EQ(CountOf(calls, "cuptiActivityEnable"), 0u) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_NE(run.profile.info.gpu_status.find("torch.profiler (Kineto)"), std::string::npos);
}

// cupti_activity.h: CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER "should be set before
// registering the buffer callbacks ... and before any of the CUPTI activity kinds are enabled".
TEST_F(CuptiContract, PerThreadBuffersAreSwitchedOffBeforeRegistering) {
  ProfiledRun run = Run({ExamplePath("launch_loop"), "10"}, {}, "per_thread");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const std::vector<std::string> calls = ShimCalls(run.process.err);
  const std::string attr = "cuptiActivitySetAttribute(" +
                           std::to_string(static_cast<int>(
                               CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER)) + "):0";
  const size_t at = IndexOf(calls, attr);
  ASSERT_LT(at, calls.size()) << run.process.err;
  EXPECT_LT(at, IndexOf(calls, "cuptiActivityRegisterCallbacks"));
  EXPECT_LT(at, IndexOf(calls, "cuptiActivityEnable"));
}

TEST_F(CuptiContract, NoFinalizeAtExit) {
  ProfiledRun run = Run({ExamplePath("launch_loop"), "10"}, {}, "finalize");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const std::vector<std::string> calls = ShimCalls(run.process.err);
  ASSERT_LT(IndexOf(calls, "cuptiUnsubscribe"), calls.size()) << run.process.err;
  EXPECT_EQ(CountOf(calls, "cuptiFinalize"), 0u) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_EQ(run.profile.kernels.size(), 10u);
}

// cupti_version.h: the last two digits are "CUPTI-specific update or patch version"; record
// layouts belong to major.minor. A 13.0 libcupti of another patch level (torch's wheel against
// the toolkit's) is used; the exact-equality check refused it.
TEST_F(CuptiContract, SameFamilyOtherPatchLevelIsCollected) {
  ProfiledRun run = Run({ExamplePath("launch_loop"), "10"}, {{"CUDASIM_CUPTI_VERSION", "130099"}},
                        "patch_level");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_EQ(run.profile.info.gpu_status, "collected");
  EXPECT_EQ(run.profile.kernels.size(), 10u);
}

// Window ends use the default flush (flag 0); the forced flush is for exit only. With kernels as
// steps and no synchronization, each window's GPU work is still in flight at its end.
TEST_F(CuptiContract, WindowEndsUseTheDefaultFlushAndExitTheForcedOne) {
  ProfiledRun run = Run({ExamplePath("launch_loop"), "1000"},
                        {{"GPROF_STEP", "kernel:tiny"},
                         {"GPROF_SCHEDULE", "wait=0,warmup=0,active=100,repeat=3"}},
                        "window_flush");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const std::vector<std::string> calls = ShimCalls(run.process.err);
  const std::string forced =
      "cuptiActivityFlushAll:" + std::to_string(static_cast<int>(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  ASSERT_GE(CountOf(calls, "cuptiActivityFlushAll:0"), 3u) << run.process.err;
  // Forced flushes only at exit: the stop sequence's, and the one after the exit's 1 s poll when
  // a held window still waits for GPU work (lifecycle/window_gpu.h). Mid-run none: forcing at
  // every window end made it 4.
  EXPECT_LE(CountOf(calls, forced), 2u) << run.process.err;
  EXPECT_GT(IndexOf(calls, forced), IndexOf(calls, "cuptiActivityFlushAll:0"));
}

// CUDA 13 defaults to one activity buffer per CUDA thread (the stand-in models it,
// CUDASIM_PER_THREAD_BUFFERS): 64 launching threads against an 8-buffer pool would leave most
// threads without a buffer and drop their records. With the attribute off they share buffers.
TEST_F(CuptiContract, SixtyFourLaunchingThreadsLoseNothingWithASmallPool) {
  ProfiledRun run = Run({ExamplePath("multithread"), "64", "20"},
                        {{"GPROF_ACTIVITY_POOL", "8"}}, "threads64");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  EXPECT_EQ(p.kernels.size(), 64u * 20u);  // the program's own count: threads x launches
  EXPECT_EQ(p.memcpys.size(), 64u);
  EXPECT_EQ(p.memsets.size(), 64u);
  EXPECT_EQ(p.counters.cupti_dropped_records, 0u);
  EXPECT_EQ(p.counters.cupti_buffers_refused, 0u);
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
}

// Another tool's timestamp callback (the stand-in's CUDASIM_TIMESTAMP_CALLBACK=tsc: records and
// cuptiGetTimestamp on a TSC-like clock) fails the start-up clock check, which the profile keeps
// (ProfileInfo::cupti_clock_*, written to the trace's gprof.cupti_clock) and warns about; a GPU
// clock running 200 us behind the host's counts every GPU record as starting before its launch.
TEST_F(CuptiContract, ForeignGpuClockFailsTheClockCheckAndSkewIsCounted) {
  ProfiledRun foreign = Run({ExamplePath("launch_loop"), "50"},
                            {{"CUDASIM_TIMESTAMP_CALLBACK", "tsc"}}, "tsc_clock");
  ASSERT_EQ(foreign.process.exit_code, 0) << foreign.process.err;
  ASSERT_TRUE(foreign.has_dump) << foreign.dump_error;
  EXPECT_GT(foreign.profile.info.cupti_clock_window_ns, 0u);
  EXPECT_FALSE(CuptiClockAgrees(foreign.profile.info));
  EXPECT_NE(foreign.process.err.find("away from the host clock"), std::string::npos)
      << foreign.process.err;
  // Its records are ns since boot, a 1970 date on the host clock: every one is refused (and
  // counted as a CUPTI error), never put on the timeline. launch_loop 50 launches 50 kernels.
  EXPECT_TRUE(foreign.profile.kernels.empty());
  EXPECT_GE(foreign.profile.counters.cupti_errors, 50u);

  ProfiledRun same = Run({ExamplePath("launch_loop"), "50"}, {}, "same_clock");
  ASSERT_TRUE(same.has_dump) << same.dump_error;
  EXPECT_GT(same.profile.info.cupti_clock_window_ns, 0u);
  EXPECT_TRUE(CuptiClockAgrees(same.profile.info));
  EXPECT_EQ(same.profile.counters.gpu_records_before_launch, 0u);

  // 200 us behind: every kernel, copy and memset starts before its call (the launch latency is
  // 3 us). launch_loop 50 does 50 kernels, 1 memset and 1 copy (it prints its counts).
  ProfiledRun skewed = Run({ExamplePath("launch_loop"), "50"}, {{"CUDASIM_GPU_SKEW_NS", "-200000"}},
                           "skewed_clock");
  ASSERT_TRUE(skewed.has_dump) << skewed.dump_error;
  EXPECT_NE(skewed.process.out.find("kernels=50 copies=1 memsets=1"), std::string::npos)
      << skewed.process.out;
  EXPECT_EQ(skewed.profile.counters.gpu_records_before_launch, 52u);
}

// The program starts a profiler of its own mid-run (torch.profiler under gprof-run): CUPTI's
// buffer callbacks are process-wide, so the second registration takes every later record. The
// program must finish as it does alone, and the profile must say what was lost: each launch is
// either recorded or counted in gpu_launches_without_records.
TEST_F(CuptiContract, AProfilerStartedByTheProgramIsSurvivedAndItsLossesCounted) {
#ifdef GPROF_SECOND_TOOL
  const std::vector<std::string> argv = {GPROF_SECOND_TOOL, "20"};
  ProcessResult plain = RunProcess(argv, PlainOptions(StandInLibDir(), {}));
  ProfiledRun run = RunProfiled(argv, StandInLibDir(), {{"GPROF_CUPTI_LIB", StandInCupti()}},
                                "second_tool");
  EXPECT_EQ(run.process.exit_code, plain.exit_code);
  EXPECT_EQ(run.process.out, plain.out);
  EXPECT_NE(run.process.out.find("GPROF_EXAMPLE_DONE second_tool"), std::string::npos);
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  // The 20 launches after the other profiler registered never reach gprof-run.
  EXPECT_GE(p.counters.gpu_launches_without_records, 20u);
  EXPECT_EQ(p.kernels.size() + p.counters.gpu_launches_without_records, 40u);
  for (const Kernel& k : p.kernels) {
    EXPECT_NE(std::string(p.strings.Get(k.name)).find("first_kernel"), std::string::npos);
  }
#else
  GTEST_SKIP() << "second_tool not built";
#endif
}

}  // namespace
}  // namespace gprof::testing
