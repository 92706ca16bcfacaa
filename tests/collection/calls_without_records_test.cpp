// Calls that make no GPU record of their own, end to end on the stand-in
// (tests/collection/calls_without_records.cu): empty and host-to-host copies, and launches into a
// stream under a Relaxed-mode capture from another thread, must neither hold a schedule window
// nor count as launches without records; a launch into a non-capturing stream made while another
// stream captures runs, and its window waits for its record. Expected counts come from the
// program: each step launches its kernels and ends with one step_end kernel.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/collection/collection_util.h"

namespace gprof::testing {
namespace {

#ifdef GPROF_CALLS_WITHOUT_RECORDS

const std::vector<std::string> kOneStepPerWindow = {"--step", "kernel:step_end", "--wait", "0",
                                                   "--warmup", "0", "--active", "1",
                                                   "--repeat", "0"};

size_t KernelsNamed(const Profile& p, const std::string& part) {
  size_t n = 0;
  for (const Kernel& k : p.kernels) {
    n += std::string(p.strings.Get(k.name)).find(part) != std::string::npos;
  }
  return n;
}

void ExpectNothingMissing(const Profile& p) {
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  EXPECT_EQ(p.counters.gpu_records_uncorrelated, 0u);
  EXPECT_EQ(p.counters.gpu_records_incomplete, 0u);
  EXPECT_EQ(p.counters.cupti_dropped_records, 0u);
}

// Whether CUPTI writes a record for a copy that moves nothing is not documented; with the
// stand-in playing "no record" (CUDASIM_EMPTY_COPY_RECORDS=0), each of the 3 windows is written as
// its step ends with its 3 kernels: none waits for the copies (a waiting window is held until
// exit and logged as "never got a GPU record").
TEST(CallsWithoutRecords, EmptyAndHostToHostCopiesWithoutRecordsHoldNoWindow) {
  const LauncherRun r =
      RunLauncherWindows(kOneStepPerWindow, {GPROF_CALLS_WITHOUT_RECORDS, "empty-copies", "3"},
                         "empty_copies", {{"CUDASIM_EMPTY_COPY_RECORDS", "0"}});
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  EXPECT_EQ(r.process.err.find("never got a GPU record"), std::string::npos) << r.process.err;
  ASSERT_GE(r.windows.size(), 3u) << r.process.err;
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("window " + std::to_string(i));
    const Profile& p = r.windows[i];
    EXPECT_EQ(KernelsNamed(p, "work_kernel"), 2u);
    EXPECT_EQ(KernelsNamed(p, "step_end"), 1u);
    EXPECT_TRUE(p.memcpys.empty());
    EXPECT_TRUE(p.memsets.empty());
    ExpectNothingMissing(p);
  }
}

// With records for them (the stand-in's default), the records are kept in their window, each
// linked to its call: the 0-byte and the host-to-host cudaMemcpy, the 0-byte memset.
TEST(CallsWithoutRecords, RecordsThatDoArriveForEmptyCopiesAreKeptInTheirWindow) {
  const LauncherRun r =
      RunLauncherWindows(kOneStepPerWindow, {GPROF_CALLS_WITHOUT_RECORDS, "empty-copies", "2"},
                         "empty_copies_records");
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  ASSERT_GE(r.windows.size(), 2u) << r.process.err;
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("window " + std::to_string(i));
    const Profile& p = r.windows[i];
    EXPECT_EQ(p.memcpys.size(), 2u);
    EXPECT_EQ(p.memsets.size(), 1u);
    EXPECT_EQ(p.kernels.size(), 3u);
    ExpectEveryGpuRecordLinkedOnce(p);
    ExpectNothingMissing(p);
  }
}

// Relaxed mode: another thread launches captured_kernel into the capturing stream. It is
// captured (no record; the 2 replays run it), so it is no launch without records.
TEST(CallsWithoutRecords, LaunchIntoACapturingStreamFromAnotherThreadIsNotALaunchWithoutRecords) {
  ProfiledRun run = RunProfiled({GPROF_CALLS_WITHOUT_RECORDS, "capture-other-thread"},
                                StandInLibDir(),
                                {{"GPROF_CUPTI_LIB", StandInLibDir() + "/libcupti.so.13"}},
                                "capture_other_thread");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_EQ(KernelsNamed(run.profile, "captured_kernel"), 2u);
  EXPECT_EQ(KernelsNamed(run.profile, "step_end"), 3u);
  ExpectNothingMissing(run.profile);
}

// Relaxed mode: while it captures s, the main thread launches long_kernel (300 ms on the
// stand-in: still running when the step ends) into the non-capturing stream t. That launch runs:
// its window waits for its record and holds it. The step ends with cudaStreamEndCapture, so
// nothing else in window 0 is awaited (a record of later work in the same activity buffer would
// hold the window as well); no later window gets long_kernel as a stray record.
TEST(CallsWithoutRecords, LaunchIntoAnotherStreamDuringACaptureIsAwaitedInItsWindow) {
  const LauncherRun r = RunLauncherWindows(
      {"--step", "api:cudaStreamEndCapture", "--wait", "0", "--warmup", "0", "--active", "1",
       "--repeat", "0"},
      {GPROF_CALLS_WITHOUT_RECORDS, "capture-other-stream"}, "capture_other_stream",
      {{"CUDASIM_KERNEL_NS", "long_kernel=300000000"}});
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  ASSERT_GE(r.windows.size(), 2u) << r.process.err;
  EXPECT_EQ(KernelsNamed(r.windows[0], "long_kernel"), 1u);
  EXPECT_EQ(KernelsNamed(r.windows[1], "captured_kernel"), 1u);
  for (const Profile& p : r.windows) {
    SCOPED_TRACE("window " + std::to_string(p.info.cycle));
    EXPECT_EQ(KernelsNamed(p, "long_kernel"), p.info.cycle == 0 ? 1u : 0u);
    ExpectNothingMissing(p);
  }
}

// Fix 6 ("stop first, then drain once"): the program exits at once after 3 replays of a graph of
// one 200 ms kernel. Graph launches are not awaited, so the exit's default flushes stop at once;
// the work left in CUPTI must still come through the exit's drain (recorded, or counted
// incomplete if unfinished), not only through the session's own last flush, whose records no
// drain reads.
TEST(CallsWithoutRecords, GraphReplaysStillRunningAtExitAreRecordedOrCountedIncomplete) {
  ProfiledRun run = RunProfiled({GPROF_CALLS_WITHOUT_RECORDS, "graph-exit-unsynced"},
                                StandInLibDir(),
                                {{"GPROF_CUPTI_LIB", StandInLibDir() + "/libcupti.so.13"},
                                 {"CUDASIM_KERNEL_NS", "long_kernel=200000000"}},
                                "graph_exit_unsynced");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  EXPECT_EQ(KernelsNamed(p, "long_kernel") + p.counters.gpu_records_incomplete, 3u);
  EXPECT_EQ(p.counters.cupti_errors, 0u);
}

#endif

}  // namespace
}  // namespace gprof::testing
