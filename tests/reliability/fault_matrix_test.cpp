// The fault matrix of docs/RELIABILITY.md: each test is one row. A row runs fault_prog (or
// dlclose_prog) once without gprof-run and once under it, and asserts what the user checks: the
// program's stdout and exit status are the same, one clear message names the fault, and what
// could be kept is kept (a readable dump, counted losses).
//
// What this proves: the injection library and the launcher on the CUDA/CUPTI stand-in (verified
// on the stand-in). The rows whose fault is the operating system's (exec, vfork, signals, disks,
// links, owners) do not depend on the GPU; the same program runs on a GPU machine through
// scripts/gpu-check, which runs every `process` test there too.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/dump.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

namespace fs = std::filesystem;

const std::string kProg = GPROF_FAULT_PROG;
const std::string kDlcloseProg = GPROF_DLCLOSE_PROG;

// The environment every run gets: the stand-in's CUDA libraries, no inherited gprof settings.
ProcessOptions Base(const std::map<std::string, std::string>& extra = {}) {
  ProcessOptions o;
  o.unset_env = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GPROF_OUTPUT_DIR",
                 "GPROF_CUPTI_LIB", "GPROF_SCHEDULE", "GPROF_LOG_LEVEL", "LD_PRELOAD"};
  o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
  for (const auto& [k, v] : extra) o.set_env[k] = v;
  o.timeout = std::chrono::milliseconds(90000);
  return o;
}

std::string StandInCupti() { return StandInLibDir() + "/libcupti.so.13"; }

// `gprof-run -o DIR` of `program` on the stand-in.
std::vector<std::string> Launch(const std::string& dir, const std::vector<std::string>& program,
                                const std::vector<std::string>& flags = {}) {
  std::vector<std::string> argv = {LauncherPath(), "-o", dir, "--cupti-lib", StandInCupti()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

// The injection library set up by hand, as a user without the launcher does.
ProcessOptions Injected(const std::string& dir, const std::map<std::string, std::string>& extra) {
  ProcessOptions o = Base(extra);
  o.set_env["CUDA_INJECTION64_PATH"] = GPROF_INJECT_LIB;
  o.set_env["NVTX_INJECTION64_PATH"] = GPROF_INJECT_LIB;
  o.set_env["GPROF_CUPTI_LIB"] = StandInCupti();
  o.set_env["GPROF_OUTPUT_DIR"] = dir;
  return o;
}

std::vector<std::string> DumpsIn(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == kDumpExtension) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Profile Load(const std::string& path) {
  Profile p;
  std::string error;
  EXPECT_TRUE(ReadDump(path, &p, &error)) << error;
  return p;
}

size_t RangesNamed(const Profile& p, const std::string& name) {
  return std::count_if(p.ranges.begin(), p.ranges.end(),
                       [&](const HostRange& r) { return p.strings.Get(r.name) == name; });
}

int Status(const ProcessResult& r) { return r.signaled ? 128 + r.term_signal : r.exit_code; }

std::string Describe(const ProcessResult& r) {
  return "status " + std::to_string(Status(r)) + (r.timed_out ? " (timed out)" : "") +
         "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Each Work() of fault_prog: three "step" ranges, three kernels.
void ExpectOneWork(const Profile& p, size_t works = 1) {
  EXPECT_EQ(RangesNamed(p, "step"), 3 * works);
  EXPECT_EQ(p.kernels.size(), 3 * works);
}

// The program alone: its stdout and status are what every profiled run is compared with.
ProcessResult Plain(const std::vector<std::string>& program,
                    const std::map<std::string, std::string>& extra = {}) {
  ProcessResult r = RunProcess(program, Base(extra));
  EXPECT_FALSE(r.timed_out) << Describe(r);
  return r;
}

// The program alone, then under gprof-run (with `flags`, and `extra` in both environments):
// asserts what every row asserts first, the same stdout and exit status. Returns the profiled
// run and its dumps.
struct Compared {
  ProcessResult plain, run;
  std::string dir;  // the profiled run's output directory
  std::vector<std::string> dumps;
};
Compared RunBoth(const std::vector<std::string>& program, const std::string& tag,
                 const std::vector<std::string>& flags = {},
                 const std::map<std::string, std::string>& extra = {}) {
  Compared c;
  c.plain = Plain(program, extra);
  c.dir = MakeTempDir(tag) + "/out";
  c.run = RunProcess(Launch(c.dir, program, flags), Base(extra));
  EXPECT_FALSE(c.run.timed_out) << Describe(c.run);
  EXPECT_EQ(Status(c.run), Status(c.plain)) << Describe(c.run);
  EXPECT_EQ(c.run.out, c.plain.out);
  c.dumps = DumpsIn(c.dir);
  return c;
}

// ---- processes: exec, vfork, posix_spawn -------------------------------------------------------

TEST(FaultMatrix, ExecChainThreeDeepEachProcessWritesItsOwnDump) {
  const Compared c = RunBoth({kProg, "exec-chain", "2"}, "fault_exec_chain");
  EXPECT_EQ(c.plain.exit_code, 0) << Describe(c.plain);
  ASSERT_EQ(c.dumps.size(), 3u) << Describe(c.run);
  std::set<uint32_t> pids;
  for (const std::string& d : c.dumps) {
    const Profile p = Load(d);
    pids.insert(p.info.pid);
    ExpectOneWork(p);
  }
  EXPECT_EQ(pids.size(), 3u);
}

TEST(FaultMatrix, ExecWithoutForkKeepsTheLastImagesDumpOnly) {
  // exec() replaces the image without running exit handlers: the work of the images before the
  // last cannot be written (documented); the last image writes the process's dump.
  const Compared c = RunBoth({kProg, "exec-replace", "2"}, "fault_exec_replace");
  EXPECT_EQ(c.plain.exit_code, 0) << Describe(c.plain);
  ASSERT_EQ(c.dumps.size(), 1u) << Describe(c.run);
  ExpectOneWork(Load(c.dumps[0]));
}

class SpawnTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SpawnTest, ParentAndChildEachWriteADump) {
  const Compared c = RunBoth({kProg, GetParam()}, std::string("fault_") + GetParam());
  EXPECT_EQ(c.plain.exit_code, 0) << Describe(c.plain);
  EXPECT_NE(c.run.out.find("child-status 0"), std::string::npos) << c.run.out;
  ASSERT_EQ(c.dumps.size(), 2u) << Describe(c.run);
  for (const std::string& d : c.dumps) ExpectOneWork(Load(d));
  EXPECT_EQ(Count(c.run.err, ".forked"), 0u) << "an exec'd child is not a fork without exec";
}

INSTANTIATE_TEST_SUITE_P(VforkAndPosixSpawn, SpawnTest, ::testing::Values("vfork", "spawn"));

// ---- hostile programs ---------------------------------------------------------------------------

TEST(FaultMatrix, ProgramThatClosesEveryDescriptorIsProfiled) {
  const Compared c = RunBoth({kProg, "close-fds"}, "fault_close_fds");
  EXPECT_EQ(c.plain.exit_code, 0) << Describe(c.plain);
  ASSERT_EQ(c.dumps.size(), 1u) << Describe(c.run);
  ExpectOneWork(Load(c.dumps[0]));
}

class OwnHandlersTest : public ::testing::TestWithParam<const char*> {};

TEST_P(OwnHandlersTest, ProgramsHandlerRunsItsExitStatusIsKeptAndTheDumpIsComplete) {
  // SIGTERM to the launcher, which forwards it; the program's own handler ends its loop and it
  // exits 3 through exit(): the profile is written by the exit handler.
  const std::string dir = MakeTempDir(std::string("fault_") + GetParam()) + "/out";
  ProcessOptions o = Base();
  o.signal_when_out_has = "FAULT_PROG READY";
  o.signal_to_send = SIGTERM;
  const ProcessResult r = RunProcess(Launch(dir, {kProg, GetParam()}), o);
  EXPECT_EQ(Status(r), 3) << Describe(r);
  EXPECT_NE(r.out.find("FAULT_PROG caught-SIGTERM"), std::string::npos) << Describe(r);
  EXPECT_NE(r.out.find("FAULT_PROG done"), std::string::npos) << Describe(r);
  const auto dumps = DumpsIn(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  const Profile p = Load(dumps[0]);
  // The first Work, then as many loop turns as ran before the signal (0 or more): whole ones,
  // since the handler only sets a flag the loop checks between turns.
  const size_t steps = RangesNamed(p, "step");
  EXPECT_GE(steps, 3u);
  EXPECT_EQ(steps % 3, 0u);
  EXPECT_EQ(steps, p.kernels.size());
  EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, 0u);
}

INSTANTIATE_TEST_SUITE_P(BeforeAndAfterInit, OwnHandlersTest,
                         ::testing::Values("handlers-early", "handlers-late"),
                         [](const auto& info) {
                           return std::string(info.param) == "handlers-early" ? "BeforeInit"
                                                                              : "AfterInit";
                         });

TEST(FaultMatrix, UnderscoreExitKeepsItsStatusAndTheLauncherSaysWhyThereIsNoDump) {
  const Compared c = RunBoth({kProg, "underscore-exit"}, "fault_underscore_exit");
  EXPECT_EQ(c.plain.exit_code, 4) << Describe(c.plain);
  EXPECT_TRUE(c.dumps.empty());
  EXPECT_NE(c.run.err.find("ended without running exit handlers"), std::string::npos) << c.run.err;
}

TEST(FaultMatrix, DlcloseOfTheCudaRuntimeTwiceOverStillWritesTheProfile) {
  const Compared c = RunBoth({kDlcloseProg}, "fault_dlclose");
  EXPECT_EQ(c.plain.exit_code, 0) << Describe(c.plain);
  ASSERT_EQ(c.dumps.size(), 1u) << Describe(c.run);
  const Profile p = Load(c.dumps[0]);
  EXPECT_EQ(RangesNamed(p, "round-0"), 1u);
  EXPECT_EQ(RangesNamed(p, "round-1"), 1u);
  EXPECT_EQ(p.memcpys.size(), 4u);  // two round trips, both rounds
}

TEST(FaultMatrix, ChdirAndUmaskAfterInitDoNotMoveOrHideTheDump) {
  // A relative GPROF_OUTPUT_DIR, library set up by hand, is resolved once, at the library's init
  // (the first CUDA or NVTX call: the program's first Work); the program then changes directory
  // and umask and works again. (The launcher always passes an absolute directory.)
  const std::string elsewhere = MakeTempDir("fault_chdir_elsewhere");
  const std::vector<std::string> program = {kProg, "chdir-umask", elsewhere};
  const ProcessResult plain = Plain(program);
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  const std::string base = MakeTempDir("fault_chdir");
  ProcessOptions o = Injected("out", {});
  o.cwd = base;
  const ProcessResult r = RunProcess(program, o);
  EXPECT_EQ(Status(r), 0) << Describe(r);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_TRUE(DumpsIn(elsewhere + "/out").empty());
  const auto dumps = DumpsIn(base + "/out");
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  ExpectOneWork(Load(dumps[0]), 2);
  struct stat st;
  ASSERT_EQ(::stat(dumps[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the program's umask 077 applies to its dump";
}

TEST(FaultMatrix, ChdirUnderTheLauncherWithARelativeOutputDirectory) {
  const std::string base = MakeTempDir("fault_chdir_launcher");
  const std::string elsewhere = MakeTempDir("fault_chdir_launcher_elsewhere");
  ProcessOptions o = Base();
  o.cwd = base;
  const ProcessResult r = RunProcess(Launch("rel-out", {kProg, "chdir-umask", elsewhere}), o);
  EXPECT_EQ(Status(r), 0) << Describe(r);
  ASSERT_EQ(DumpsIn(base + "/rel-out").size(), 1u) << Describe(r);
  EXPECT_TRUE(fs::exists(base + "/rel-out/table.txt"));
}

TEST(FaultMatrix, OutputDirectoryRemovedWhileRunningIsMadeAgainAndTheRunRendered) {
  const std::string dir = MakeTempDir("fault_removed") + "/out";
  const ProcessResult r = RunProcess(Launch(dir, {kProg, "remove-outdir"}), Base());
  EXPECT_EQ(Status(r), 0) << Describe(r);
  EXPECT_NE(r.out.find("FAULT_PROG removed yes"), std::string::npos) << r.out;
  const auto dumps = DumpsIn(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  ExpectOneWork(Load(dumps[0]), 2);
  EXPECT_TRUE(fs::exists(dir + "/table.txt")) << Describe(r);
  EXPECT_TRUE(fs::exists(dir + "/trace.json")) << Describe(r);
}

TEST(FaultMatrix, HostileNamesLeaveAValidTraceAndTable) {
  const Compared c = RunBoth({kProg, "hostile-names"}, "fault_hostile");
  EXPECT_EQ(c.plain.exit_code, 0) << Describe(c.plain);
  ASSERT_EQ(c.dumps.size(), 1u) << Describe(c.run);
  const Profile p = Load(c.dumps[0]);
  const std::string& dir = c.dir;
  // Format specifiers are names like any other: kept literally, never interpreted.
  EXPECT_EQ(RangesNamed(p, "%s%n%x%p{}{0}%%"), 1u);
  // The wide name ends at its first NUL; é arrives as UTF-8.
  EXPECT_EQ(RangesNamed(p, "wide\xc3\xa9"), 1u);
  // The 1 MB name is cut to what one host record holds (kMaxHostPayload bytes in all), not lost.
  size_t long_names = 0;
  for (const HostRange& range : p.ranges) {
    const std::string_view name = p.strings.Get(range.name);
    if (name.size() > 100 && name.find_first_not_of('H') == std::string::npos) {
      ++long_names;
      EXPECT_LT(name.size(), 1024u);
    }
  }
  EXPECT_EQ(long_names, 1u);
  // The outputs: the trace passes the checker (valid JSON, valid UTF-8), the table exists.
  const ProcessResult check = RunProcess({LauncherPath(), "check", dir + "/trace.json"});
  EXPECT_EQ(check.exit_code, 0) << Describe(check);
  EXPECT_TRUE(fs::exists(dir + "/table.txt"));
}

TEST(FaultMatrix, FullHostBufferDropsAndCountsEventsAndSaysHowToKeepThem) {
  // 1 MiB of host buffer (16 chunks of 64 KiB) against 200,000 NVTX events of 16-24 bytes each.
  const Compared c =
      RunBoth({kProg, "many-ranges", "100000"}, "fault_host_full", {"--host-buffer-mib", "1"});
  const ProcessResult& r = c.run;
  EXPECT_EQ(c.plain.exit_code, 0);
  // One warning from the library, one note under the table; the pops whose pushes were dropped
  // are not blamed on the program.
  EXPECT_EQ(Count(r.err, "were dropped because the host buffer was full"), 1u) << r.err;
  EXPECT_EQ(Count(r.err, "host events dropped (host buffer full)"), 1u) << r.err;
  EXPECT_EQ(Count(r.err, "do not pair up"), 0u) << r.err;
  ASSERT_EQ(c.dumps.size(), 1u) << Describe(r);
  const Profile p = Load(c.dumps[0]);
  EXPECT_GT(p.counters.host_events_dropped, 0u);
  EXPECT_GT(RangesNamed(p, "tiny"), 10000u);   // the buffer's worth is kept...
  EXPECT_LT(RangesNamed(p, "tiny"), 100000u);  // ...the rest is counted, not kept
  EXPECT_NE(r.err.find("host_events_dropped="), std::string::npos) << r.err;
}

TEST(FaultMatrix, TraceOverTheCapIsWrittenAsPartsThatEachPassTheChecker) {
  // 30,000 ranges make a JSON trace of about 3 MiB: a 1 MiB cap cuts it into 3 or 4 parts.
  const std::vector<std::string> program = {kProg, "many-ranges", "30000"};
  const std::string dir = MakeTempDir("fault_split") + "/out";
  const ProcessResult r = RunProcess(
      Launch(dir, program, {"--max-trace-mb", "1", "--trace-format", "json,json.gz"}), Base());
  EXPECT_EQ(Status(r), 0) << Describe(r);
  EXPECT_FALSE(fs::exists(dir + "/trace.json"));
  EXPECT_NE(r.err.find("more parts, cut by time"), std::string::npos) << r.err;
  for (const std::string ext : {".json", ".json.gz"}) {
    size_t parts = 0;
    for (; fs::exists(dir + "/trace.part" + std::to_string(parts + 1) + ext); ++parts) {
      const std::string part = dir + "/trace.part" + std::to_string(parts + 1) + ext;
      const ProcessResult check = RunProcess({LauncherPath(), "check", part});
      EXPECT_EQ(check.exit_code, 0) << Describe(check);
    }
    EXPECT_GE(parts, 3u) << ext;
    EXPECT_LE(parts, 4u) << ext;
    if (ext == ".json") {
      for (size_t i = 1; i <= parts; ++i) {
        EXPECT_LE(fs::file_size(dir + "/trace.part" + std::to_string(i) + ext), 1u << 20);
      }
    }
  }
}

// ---- signals that cannot be caught ------------------------------------------------------------

TEST(FaultMatrix, SigkillOfTheProgramKeepsTheWindowsWrittenBeforeAndSaysSo) {
  // Windows of 2 steps (steps 0-1, 2-3 complete); the program kills itself during step 5.
  const std::string dir = MakeTempDir("fault_sigkill") + "/out";
  const ProcessResult r = RunProcess(
      Launch(dir, {kProg, "steps-then-kill", "5"}, {"--schedule", "active=2,repeat=0"}), Base());
  EXPECT_EQ(Status(r), 128 + SIGKILL) << Describe(r);
  EXPECT_NE(r.err.find("killed by SIGKILL"), std::string::npos) << r.err;
  const auto dumps = DumpsIn(dir);
  ASSERT_GE(dumps.size(), 1u) << Describe(r);
  ASSERT_LE(dumps.size(), 2u) << Describe(r);
  for (const std::string& d : dumps) {
    const Profile p = Load(d);
    EXPECT_FALSE(p.info.partial_window) << d;
    EXPECT_EQ(RangesNamed(p, "step"), 6u) << d;  // two steps of Work
  }
  EXPECT_NE(r.err.find(std::to_string(dumps.size()) + " window dump(s) written before it"),
            std::string::npos)
      << r.err;
}

TEST(FaultMatrix, SigkillOfTheLauncherLeavesTheProgramRunningAndItsDumpWhole) {
  const std::string dir = MakeTempDir("fault_launcher_kill") + "/out";
  ProcessOptions o = Base();
  o.signal_when_out_has = "FAULT_PROG READY";
  o.signal_to_send = SIGKILL;
  // The launcher dies at READY; the program (its child, same process group) keeps running and
  // keeps the pipes open, so this returns when the program has finished.
  const ProcessResult r = RunProcess(Launch(dir, {kProg, "ready-sleep", "500"}), o);
  EXPECT_TRUE(r.signaled && r.term_signal == SIGKILL) << Describe(r);
  EXPECT_NE(r.out.find("FAULT_PROG done"), std::string::npos) << Describe(r);
  const auto dumps = DumpsIn(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  ExpectOneWork(Load(dumps[0]), 2);
  // What the launcher did not get to do, `gprof-run report` does.
  const ProcessResult report = RunProcess({LauncherPath(), "report", dir});
  EXPECT_EQ(report.exit_code, 0) << Describe(report);
  EXPECT_TRUE(fs::exists(dir + "/table.txt"));
}

// ---- disks and paths ----------------------------------------------------------------------------

TEST(FaultMatrix, FullDiskWhileWritingTheDumpLeavesNoPartialFileAndOneMessage) {
  const std::vector<std::string> program = {kProg, "work"};
  const ProcessResult plain = Plain(program);
  const std::string dir = MakeTempDir("fault_enospc") + "/out";
  // The disk fills 512 bytes into the dump (every dump here is larger: a short write, then ENOSPC).
  ProcessOptions o = Base({{"LD_PRELOAD", GPROF_ENOSPC_SHIM}, {"ENOSPC_SHIM_BYTES", "512"}});
  const ProcessResult r = RunProcess(Launch(dir, program), o);
  EXPECT_EQ(Status(r), plain.exit_code) << Describe(r);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(Count(r.err, "No space left on device"), 1u) << r.err;
  EXPECT_NE(r.err.find("no profile was written for pid"), std::string::npos) << r.err;
  EXPECT_TRUE(DumpsIn(dir).empty());
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "left behind: " << e.path();
  }
}

TEST(FaultMatrix, DiskFillingAfterTheFirstWindowKeepsThatWindow) {
  const std::string dir = MakeTempDir("fault_enospc_late") + "/out";
  ProcessOptions o = Base({{"LD_PRELOAD", GPROF_ENOSPC_SHIM},
                           {"ENOSPC_SHIM_SKIP", "1"},
                           {"ENOSPC_SHIM_BYTES", "512"}});
  const ProcessResult r = RunProcess(
      Launch(dir, {kProg, "steps", "4"}, {"--schedule", "active=1,repeat=0"}), o);
  // Windows of one step: the first is written, the disk is full for the next ones.
  EXPECT_EQ(Status(r), 0) << Describe(r);
  const auto dumps = DumpsIn(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  EXPECT_EQ(Load(dumps[0]).info.first_step, 0u);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
}

TEST(FaultMatrix, UnwritableOutputDirectoryStopsTheLauncherBeforeTheProgramStarts) {
  // Under a regular file: nobody, root included, can create a directory there.
  const std::string base = MakeTempDir("fault_unwritable");
  const std::string file = base + "/a-file";
  std::ofstream(file) << "x";
  const ProcessResult r = RunProcess(Launch(file + "/out", {kProg, "work"}), Base());
  EXPECT_EQ(Status(r), 2) << Describe(r);
  EXPECT_TRUE(r.out.empty()) << "the program must not have run: " << r.out;
  EXPECT_NE(r.err.find("a-file is not a directory"), std::string::npos) << r.err;
}

TEST(FaultMatrix, UnwritableOutputDirectoryInTheLibraryWarnsOnceAndTheProgramIsUntouched) {
  const std::vector<std::string> program = {kProg, "work"};
  const ProcessResult plain = Plain(program);
  const std::string base = MakeTempDir("fault_unwritable_lib");
  std::ofstream(base + "/a-file") << "x";
  const ProcessResult r = RunProcess(program, Injected(base + "/a-file/out", {}));
  EXPECT_EQ(Status(r), plain.exit_code) << Describe(r);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(Count(r.err, "no profile was written"), 1u) << r.err;
}

TEST(FaultMatrix, PlantedLinkAsOutputDirectoryIsNeverFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a link owned by uid 65534";
  const std::string base = MakeTempDir("fault_planted");
  fs::create_directories(base + "/victim");
  fs::create_symlink(base + "/victim", base + "/out");
  ASSERT_EQ(::lchown((base + "/out").c_str(), 65534, 65534), 0);
  // The launcher refuses before the program starts...
  const ProcessResult r = RunProcess(Launch(base + "/out", {kProg, "work"}), Base());
  EXPECT_EQ(Status(r), 2) << Describe(r);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("symbolic link owned by uid 65534"), std::string::npos) << r.err;
  // ...and the library, set up by hand, writes nothing through it; the program is untouched.
  const ProcessResult plain = Plain({kProg, "work"});
  const ProcessResult lib = RunProcess({kProg, "work"}, Injected(base + "/out", {}));
  EXPECT_EQ(Status(lib), 0) << Describe(lib);
  EXPECT_EQ(lib.out, plain.out);
  EXPECT_NE(lib.err.find("symbolic link owned by uid 65534"), std::string::npos) << lib.err;
  EXPECT_TRUE(fs::is_empty(base + "/victim"));
}

TEST(FaultMatrix, OutputDirectoryOfAnotherUserIsNeverWrittenInto) {
  // Root: a directory handed to uid 65534. Otherwise a root-owned directory that is not sticky.
  std::string theirs = "/usr";
  if (::geteuid() == 0) {
    theirs = MakeTempDir("fault_foreign") + "/theirs";
    fs::create_directories(theirs);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  }
  const ProcessResult r = RunProcess(Launch(theirs, {kProg, "work"}), Base());
  EXPECT_EQ(Status(r), 2) << Describe(r);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("not to you"), std::string::npos) << r.err;
  EXPECT_TRUE(DumpsIn(theirs).empty());
}

// ---- configuration ------------------------------------------------------------------------------

// A bad value for every GPROF_* key, chosen by hand from the key's documented syntax. Keys whose
// every value is valid (free strings: a path, a range name) have none; the test below checks that
// this table names every key the launcher knows.
const std::map<std::string, std::string>& BadValues() {
  static const std::map<std::string, std::string> table = {
      {"GPROF_LOG_LEVEL", "loud"},
      {"GPROF_CUDA", "maybe"},
      {"GPROF_NVTX", "2"},
      {"GPROF_API_FILTER", "some"},
      {"GPROF_ACTIVITY_BUFFER_KIB", "1"},
      {"GPROF_ACTIVITY_POOL", "0"},
      {"GPROF_PENDING_MIB", "65537"},
      {"GPROF_HOST_BUFFER_MIB", "12abc"},
      {"GPROF_SCHEDULE", "active=x"},
      {"GPROF_STEP", "bogus:thing"},
      {"GPROF_CAPTURE_RANGE", "sometimes"},
      {"GPROF_CAPTURE_RANGE_END", "repeat:x"},
      {"GPROF_DELAY", "5 parsecs"},
      {"GPROF_DURATION", "-1s"},
      {"GPROF_TORCH_OPS", "yesplease"},
      {"GPROF_RECORD_SHAPES", "2"},
      {"GPROF_TORCH_MEMORY", "sometimes"},
      {"GPROF_TORCH_ITT", "itt"},
      {"GPROF_TORCH_STEPS", "every"},
      {"GPROF_START_PAUSED", "later"},
      {"GPROF_SESSION", "my/session"},
      {"GPROF_PYTHON_SAMPLING", "2001"},
      {"GPROF_PYTHON_SAMPLER", "py-spy"},
      {"GPROF_CPU_SAMPLING", "20001"},
      {"GPROF_CPU_SAMPLING_BACKEND", "ebpf"},
      {"GPROF_CPU_SAMPLER_PROCESS", "yes"},
      {"GPROF_SEGMENT_SECONDS", "86401"},
      {"GPROF_BACKTRACE", "sync,everything"},
  };
  return table;
}
const std::set<std::string> kFreeStringKeys = {"GPROF_OUTPUT_DIR", "GPROF_CUPTI_LIB",
                                               "GPROF_NVTX_CAPTURE"};

TEST(FaultMatrix, EveryConfigKeyHasABadValueRowOrIsAFreeString) {
  const ProcessResult help = RunProcess({LauncherPath(), "--help-env"});
  ASSERT_EQ(help.exit_code, 0) << Describe(help);
  std::set<std::string> listed;
  for (size_t at = help.out.find("\nGPROF_"); at != std::string::npos;
       at = help.out.find("\nGPROF_", at + 1)) {
    listed.insert(help.out.substr(at + 1, help.out.find(' ', at + 1) - at - 1));
  }
  std::set<std::string> covered = kFreeStringKeys;
  for (const auto& [key, value] : BadValues()) covered.insert(key);
  EXPECT_EQ(listed, covered);
  for (const std::string& key : kFreeStringKeys) {
    EXPECT_NE(help.out.find(key + " (string"), std::string::npos) << key;
  }
}

class BadConfigTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BadConfigTest, LauncherExits2NamingKeyAndValueBeforeTheProgramStarts) {
  const std::string& key = GetParam();
  const std::string& value = BadValues().at(key);
  const std::string dir = MakeTempDir("fault_badcfg_launcher") + "/out";
  const ProcessResult r = RunProcess(Launch(dir, {kProg, "work"}), Base({{key, value}}));
  EXPECT_EQ(Status(r), 2) << Describe(r);
  EXPECT_TRUE(r.out.empty()) << "the program must not have run: " << r.out;
  EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(value), std::string::npos) << r.err;
}

TEST_P(BadConfigTest, LibraryWarnsOnceUsesTheDefaultAndTheProgramIsUntouched) {
  const std::string& key = GetParam();
  const ProcessResult plain = Plain({kProg, "work"});
  const std::string dir = MakeTempDir("fault_badcfg_lib");
  const ProcessResult r = RunProcess({kProg, "work"}, Injected(dir, {{key, BadValues().at(key)}}));
  EXPECT_EQ(Status(r), 0) << Describe(r);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(Count(r.err, key), 1u) << r.err;
  EXPECT_NE(r.err.find("the default is used"), std::string::npos) << r.err;
  const auto dumps = DumpsIn(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  ExpectOneWork(Load(dumps[0]));
}

std::vector<std::string> BadKeys() {
  std::vector<std::string> keys;
  for (const auto& [key, value] : BadValues()) keys.push_back(key);
  return keys;
}

INSTANTIATE_TEST_SUITE_P(EveryKey, BadConfigTest, ::testing::ValuesIn(BadKeys()),
                         [](const auto& info) { return info.param.substr(6); });

}  // namespace
}  // namespace gprof::testing
