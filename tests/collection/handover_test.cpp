// Living beside real CUPTI (issue 29), on the stand-in: the exit order of a plain CUDA binary
// (libcupti dlopened after init, with static destructors that run before earlier atexit
// handlers), and the hand-over to the program's own CUPTI profiler, with a client that behaves as
// Kineto's code does (kineto_like_client.cu cites each behaviour). Expected figures come from the
// programs' own launch counts. These prove the collector agrees with the stand-in's model of
// CUPTI; collection_gpu_test and scripts/gpu-check (torch.profiler inside gprof-run) are the
// real-GPU twins.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/collection/collection_util.h"

namespace gprof::testing {
namespace {

std::string StandInCupti() { return StandInLibDir() + "/libcupti.so.13"; }

class Handover : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(StandInCupti().c_str(), F_OK) != 0 || access(InjectLibPath().c_str(), F_OK) != 0) {
      GTEST_SKIP() << "build the cudasim, gprof_inject and CUDA example targets first";
    }
  }
};

size_t KernelsNamed(const Profile& p, const std::string& part) {
  size_t n = 0;
  for (const Kernel& k : p.kernels) {
    n += std::string(p.strings.Get(k.name)).find(part) != std::string::npos;
  }
  return n;
}

// Every GPU record of the profile lies on the host clock, inside the run (a TSC tick count read
// as ns would be a 1970 date; none may be accepted).
void ExpectOnHostClock(const Profile& p) {
  for (const Kernel& k : p.kernels) {
    EXPECT_GE(k.start_ns, p.info.start_ns) << "a kernel starts before the run";
    EXPECT_LE(k.end_ns, p.info.end_ns) << "a kernel ends after the run";
  }
}

void ExpectNothingLost(const Profile& p) {
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  EXPECT_EQ(p.counters.gpu_records_incomplete, 0u);
  EXPECT_EQ(p.counters.cupti_dropped_records, 0u);
  EXPECT_EQ(p.counters.cupti_errors, 0u);
}

// Fix 1: launch_loop does not link libcupti, so gprof-run dlopens it after init registered the
// exit flush; the stand-in's libcupti aborts on any call made after its static destructors ran.
// The flush must run first: a clean exit and all 50 kernels.
TEST_F(Handover, PlainCudaBinaryExitFlushRunsBeforeCuptiStaticDestructors) {
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "50"}, StandInLibDir(),
                                {{"GPROF_CUPTI_LIB", StandInCupti()}}, "exit_order");
  EXPECT_EQ(run.process.exit_code, 0) << run.process.err;
  EXPECT_EQ(run.process.term_signal, 0) << run.process.err;
  EXPECT_EQ(run.process.err.find("static destructors ran"), std::string::npos) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_EQ(KernelsNamed(run.profile, ""), 50u);
  ExpectNothingLost(run.profile);
}

// Fix 6, DEVICE records on the plain (not attach) path: "Device records are emitted in CUPTI on
// CUDA driver initialization. Those records can only be retrieved by the user if CUPTI is
// attached before CUDA initialization" (cupti_activity.h, cuptiActivityEnableAndDump), and the
// driver runs InitializeInjection inside that initialization, possibly after them. With the
// stand-in playing "after" (CUDASIM_DEVICE_RECORD_BEFORE_INJECTION=1), cuptiActivityEnable(DEVICE)
// alone gets none; cuptiActivityEnableAndDump dumps the one device.
TEST_F(Handover, DeviceRecordEmittedBeforeInjectionStillReachesThePlainRunsProfile) {
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "5"}, StandInLibDir(),
                                {{"GPROF_CUPTI_LIB", StandInCupti()},
                                 {"CUDASIM_DEVICE_RECORD_BEFORE_INJECTION", "1"}},
                                "device_before_injection");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  ASSERT_EQ(run.profile.devices.size(), 1u);
  EXPECT_GT(run.profile.devices[0].num_sms, 0u);
  EXPECT_EQ(KernelsNamed(run.profile, ""), 5u);
}

// The program's profiler gets exactly its own 20 kernels, on its own clock, and none of our
// buffers; gprof-run keeps the 40 launched before it and the 40 after, on the host clock, and
// loses nothing (the 20 launches of the interval are the program's profiler's: not counted as
// launches without records).
void ExpectBothProfilersWhole(const ProfiledRun& run, const ProcessResult& plain) {
  EXPECT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  EXPECT_EQ(run.process.out, plain.out);
  EXPECT_NE(run.process.out.find("own_kernels=20 other_kernels=0 foreign_buffers=0 off_own_clock=0"),
            std::string::npos)
      << run.process.out;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  EXPECT_EQ(KernelsNamed(p, "before_kernel"), 40u);
  EXPECT_EQ(KernelsNamed(p, "after_kernel"), 40u);
  EXPECT_EQ(KernelsNamed(p, "inside_kernel"), 0u);
  EXPECT_EQ(p.kernels.size(), 80u);
  ExpectOnHostClock(p);
  ExpectNothingLost(p);
}

#ifdef GPROF_KINETO_LIKE_CLIENT
// --preload: the interposed cuptiActivityRegisterCallbacks hands CUPTI over; the client's last
// cuptiActivityDisable takes it back.
TEST_F(Handover, KinetoLikeClientUnderPreloadKeepsItsRecordsAndGprofKeepsEveryOtherKernel) {
  const std::vector<std::string> argv = {GPROF_KINETO_LIKE_CLIENT, "100", "40", "20"};
  ProcessResult plain = RunProcess(argv, PlainOptions(StandInLibDir(), {}));
  ProfiledRun run = RunProfiled(
      argv, StandInLibDir(),
      {{"GPROF_CUPTI_LIB", StandInCupti()}, {"LD_PRELOAD", InjectLibPath()}}, "kineto_preload");
  ExpectBothProfilersWhole(run, plain);
}

#ifdef GPROF_DLSYM_CUPTI_CLIENT
// The same client reaching libcupti through dlopen + dlsym only: --preload's dlsym hands it the
// interposed cuptiActivityRegisterCallbacks / Enable / Disable, so the hand-over and take-back
// happen as for a linked client.
TEST_F(Handover, DlsymCuptiClientUnderPreloadKeepsItsRecordsAndGprofKeepsEveryOtherKernel) {
  const std::vector<std::string> argv = {GPROF_DLSYM_CUPTI_CLIENT, "100", "40", "20"};
  ProcessResult plain = RunProcess(argv, PlainOptions(StandInLibDir(), {}));
  ProfiledRun run = RunProfiled(
      argv, StandInLibDir(),
      {{"GPROF_CUPTI_LIB", StandInCupti()}, {"LD_PRELOAD", InjectLibPath()}}, "dlsym_preload");
  ExpectBothProfilersWhole(run, plain);
}
#endif

// The CUPTI side of the Python hook's hand-over: the program calls gprof_run_cupti_hand_over
// before its profiler starts and gprof_run_cupti_take_back after it stopped, as the hook does
// around torch.profiler; no interposition.
TEST_F(Handover, KinetoLikeClientWithExplicitHandOverKeepsItsRecordsAndGprofKeepsEveryOtherKernel) {
  const std::vector<std::string> argv = {GPROF_KINETO_LIKE_CLIENT, "100", "40", "20", "explicit"};
  ProcessResult plain = RunProcess(argv, PlainOptions(StandInLibDir(), {}));
  ProfiledRun run = RunProfiled(argv, StandInLibDir(), {{"GPROF_CUPTI_LIB", StandInCupti()}},
                                "kineto_explicit");
  ExpectBothProfilersWhole(run, plain);
}

// Fix 6: the program's first CUDA call is cudaDeviceSynchronize, inside which the stand-in's cudart
// loads the injection library (CUDASIM_INJECT_IN_FIRST_CALL: as the driver does at cuInit, inside
// the runtime's first call, after its ENTER); it carries a nested cuCtxSynchronize (README: nested
// driver calls). That driver
// call is the runtime's, not the program's: with every API recorded, the program (which makes
// no driver call of its own) has none, and exactly one kernel launch per kernel.
TEST_F(Handover, DriverCallNestedInTheFirstCudaCallIsNotRecordedAsTheUsers) {
  const std::vector<std::string> argv = {GPROF_KINETO_LIKE_CLIENT, "10", "0", "0", "explicit"};
  ProfiledRun run = RunProfiled(argv, StandInLibDir(),
                                {{"GPROF_CUPTI_LIB", StandInCupti()},
                                 {"GPROF_API_FILTER", "all"},
                                 {"CUDASIM_INJECT_IN_FIRST_CALL", "1"}},
                                "first_call_depth");
  EXPECT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  size_t driver = 0;
  for (const ApiCall& c : run.profile.api_calls) {
    if (c.domain == ApiDomain::kDriver) {
      ++driver;
      ADD_FAILURE() << "driver call recorded as the program's: " << ApiNameOf(run.profile, c);
    }
  }
  EXPECT_EQ(driver, 0u);
  EXPECT_EQ(run.profile.kernels.size(), 10u);
}
#endif

}  // namespace
}  // namespace gprof::testing
