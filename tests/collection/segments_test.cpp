// Long whole runs written in segments (collector/lifecycle/spill.h, model/dump.h version 6), end
// to end on the CUDA/CUPTI stand-in: the real injection library inside launch_loop. What a user
// of a long run checks: nothing is lost however many segments the run took, memory-bound spills
// keep host events a small buffer would drop, and a program killed mid-run leaves a dump that
// gprof-run recovers and calls incomplete. Verified on the stand-in only; the spill path uses no
// CUPTI call that a window end does not (cuptiActivityFlushAll(0), then a forced flush at exit).
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "model/dump.h"
#include "tests/collection/collection_util.h"

namespace gprof::testing {
namespace {

std::map<std::string, std::string> StandInEnv(std::map<std::string, std::string> env) {
  env["GPROF_CUPTI_LIB"] = StandInLibDir() + "/libcupti.so.13";
  return env;
}

class Segments : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access((StandInLibDir() + "/libcupti.so.13").c_str(), F_OK) != 0 ||
        access(InjectLibPath().c_str(), F_OK) != 0 ||
        access(ExamplePath("launch_loop").c_str(), F_OK) != 0) {
      GTEST_SKIP() << "build the cudasim, gprof_inject and CUDA example targets first";
    }
  }
};

// A million launches with a 16 MiB host buffer: about 40 MB of API records, so the buffer passes
// its spill mark (1/8) every ~2 MiB and the run is written in many segments (the count depends on
// the machine's speed; at least two is what this test needs). Every launch must come back once,
// linked to its call across segment boundaries (a kernel's record is often drained one segment
// after its call was consumed), and nothing may be dropped.
TEST_F(Segments, MillionLaunchesInManySegmentsReadBackCompletelyAndLinked) {
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "1000000"}, StandInLibDir(),
                                StandInEnv({{"GPROF_HOST_BUFFER_MIB", "16"}}), "segments1m");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  EXPECT_GE(p.info.segments, 2u);
  EXPECT_TRUE(p.info.complete);
  EXPECT_EQ(p.kernels.size(), 1000000u);
  EXPECT_EQ(p.counters.host_events_dropped, 0u);
  EXPECT_EQ(p.counters.cupti_dropped_records, 0u);
  EXPECT_EQ(p.counters.gpu_records_uncorrelated, 0u);
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  size_t launches = 0;
  for (const ApiCall& c : p.api_calls) launches += IsLaunchName(ApiNameOf(p, c)) ? 1 : 0;
  EXPECT_EQ(launches, 1000000u);
  ExpectEveryGpuRecordLinkedOnce(p);
}

// The contrast that shows the spill is what keeps them: the same run written once at exit
// (GPROF_SEGMENT_SECONDS=0) with the same 16 MiB buffer drops host events, and says so.
TEST_F(Segments, WithoutSegmentsTheSameSmallBufferDropsAndCountsHostEvents) {
  ProfiledRun run = RunProfiled(
      {ExamplePath("launch_loop"), "1000000"}, StandInLibDir(),
      StandInEnv({{"GPROF_HOST_BUFFER_MIB", "16"}, {"GPROF_SEGMENT_SECONDS", "0"}}),
      "segments-off");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_EQ(run.profile.info.segments, 1u);
  EXPECT_GT(run.profile.counters.host_events_dropped, 0u);
  EXPECT_NE(run.process.err.find("raise GPROF_HOST_BUFFER_MIB"), std::string::npos)
      << run.process.err;
}

// A host that outruns the GPU (bench figure 14c): kernels of 50 us against launches of a few us,
// so when the host has made its 20000 launches (well under 0.5 s even on a busy machine) the GPU
// has finished at most a few thousand of the 1 s of work queued. CUPTI keeps a buffer until every
// record in it is complete (cupti_activity.h, cuptiActivityFlushAll), so the records of unfinished
// kernels are held in our buffers; GPROF_PENDING_MIB=1 with 64 KiB buffers lets at most 16 be held
// (about 4,800 kernel records), where the pool alone (2048 buffers) would hold all 20000.
// What a user checks: the memory held for pending records stayed within the 1 MiB asked for (the
// debug line's mapped CUPTI buffers: a buffer is mapped only when no mapped one is free, so that
// is the most ever held), records were lost, and every record the program made is in the profile
// or counted as lost. The program makes 20000 kernel records (its argument) and 6 other work
// records (kLaunchLoopOtherWork in collection_test.cpp); the stand-in counts, for each refused
// request, the record that needed the buffer and that request's CUPTI overhead record
// (tests/cudasim/cupti/activity.cpp RequestBufferLocked), so dropped - refused records of work
// were lost: exactly. Fails without the cap: nothing is refused and all 20000 are kept.
TEST_F(Segments, HostOutrunningTheGpuStaysWithinThePendingCapAndCountsEveryLostRecord) {
  constexpr uint64_t kLaunches = 20000;
  constexpr uint64_t kOtherWork = 6;
  ProfiledRun run = RunProfiled(
      {ExamplePath("launch_loop"), std::to_string(kLaunches)}, StandInLibDir(),
      StandInEnv({{"GPROF_PENDING_MIB", "1"}, {"GPROF_ACTIVITY_BUFFER_KIB", "64"},
                  {"CUDASIM_KERNEL_NS", "tiny=50000"}, {"GPROF_LOG_LEVEL", "debug"}}),
      "outrun");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  const uint64_t dropped = p.counters.cupti_dropped_records;
  const uint64_t refused = p.counters.cupti_buffers_refused;
  EXPECT_GT(refused, 0u);
  EXPECT_LT(p.kernels.size(), kLaunches);
  ASSERT_GE(dropped, refused);
  EXPECT_EQ(p.kernels.size() + NonKernelWorkRecords(p) + (dropped - refused), kLaunches + kOtherWork);
  EXPECT_NE(run.process.err.find("MiB of GPU records were pending"), std::string::npos)
      << run.process.err;
  const std::string key = "pending memory at exit: CUPTI buffers mapped ";
  const size_t at = run.process.err.find(key);
  ASSERT_NE(at, std::string::npos) << run.process.err;
  EXPECT_LE(std::stod(run.process.err.substr(at + key.size())), 1.0) << run.process.err;
}

// SIGKILL after 3 s of a run that would take minutes, with a segment every second: the temporary
// file holds the segments written so far. `gprof-run report` renames it to the dump's name, says
// it recovered it, renders it, and warns that it is incomplete; the dump reads back with the
// kernels of the completed segments (some, not all) and complete == false.
TEST_F(Segments, SigkillMidRunLeavesSegmentsThatReportRecoversAndCallsIncomplete) {
  const std::string out = MakeTempDir("segments-kill");
  ProcessOptions options = ProfiledOptions(
      out, StandInLibDir(), StandInEnv({{"GPROF_SEGMENT_SECONDS", "1"}}));
  options.signal_after = std::chrono::milliseconds(3000);
  options.signal_to_send = SIGKILL;
  const ProcessResult killed =
      RunProcess({ExamplePath("launch_loop"), "100000000"}, options);
  ASSERT_TRUE(killed.signaled) << killed.err;
  ASSERT_EQ(killed.term_signal, SIGKILL);
  std::string temp;
  for (const std::string& name : ListDir(out)) {
    if (name.find(".gpdump.tmp.") != std::string::npos) temp = name;
    EXPECT_FALSE(name.ends_with(".gpdump")) << "no dump is published before exit: " << name;
  }
  ASSERT_FALSE(temp.empty()) << "the killed run left no segment file";

  const ProcessResult report = RunProcess({LauncherPath(), "report", out});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.err.find("ended without writing its profile (killed?): recovered"),
            std::string::npos)
      << report.err;
  EXPECT_NE(report.err.find("is incomplete: the program ended without gprof-run's exit flush"),
            std::string::npos)
      << report.err;
  const std::string dump = out + "/" + temp.substr(0, temp.find(".tmp."));
  Profile p;
  std::string error;
  ASSERT_TRUE(ReadDump(dump, &p, &error)) << error;
  EXPECT_FALSE(p.info.complete);
  EXPECT_GE(p.info.segments, 1u);
  EXPECT_GT(p.kernels.size(), 0u);
  EXPECT_LT(p.kernels.size(), 100000000u);
  EXPECT_TRUE(std::filesystem::exists(out + "/table.txt"));
  // Recovered once: a second report finds nothing left to recover.
  const ProcessResult again = RunProcess({LauncherPath(), "report", out});
  EXPECT_EQ(again.err.find("recovered"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace gprof::testing
