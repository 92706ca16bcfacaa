// gprof-run as a real process: flags and GPROF_* validation, the injection environment, exit
// codes, signal forwarding, the output directory rules, `report` and `check`. The profiled program
// is gprof_launch_probe (tests/launcher/probe.cpp), which prints a token for what it saw.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config.h"
#include "model/dump.h"
#include "tests/launcher/sample_profile.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kProbe = GPROF_PROBE_PATH;

bool Exists(const std::string& path) { return fs::exists(path); }

class LauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    // A stand-in path for the injection library: the probe never touches CUDA or NVTX, so it is
    // never loaded; the launcher only needs a readable file.
    fake_lib_ = dir_ + "/libgprof_inject.so";
    std::ofstream(fake_lib_) << "not a library\n";
    options_.cwd = dir_;
    options_.timeout = std::chrono::seconds(60);
    options_.set_env["GPROF_INJECT_LIB"] = fake_lib_;
    options_.unset_env = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "LD_PRELOAD",
                          "GPROF_OUTPUT_DIR", "GPROF_LOG_LEVEL", "GPROF_TEST_PYTHON"};
  }

  ProcessResult Launch(std::vector<std::string> args) {
    args.insert(args.begin(), LauncherPath());
    return RunProcess(args, options_);
  }
  ProcessResult Launch(std::vector<std::string> args, const ProcessOptions& options) {
    args.insert(args.begin(), LauncherPath());
    return RunProcess(args, options);
  }

  std::string dir_;
  std::string fake_lib_;
  ProcessOptions options_;
};

// ---- Validation before the program starts ---------------------------------------------------

// The process tests' harness (tests/support/process.h): a process still running at its timeout
// is killed, and the failure message says what its threads were doing (name, wait channel,
// syscall, pending and blocked signals).
TEST(ProcessHarness, AProcessHungAtTheTimeoutIsKilledAndItsThreadsAreDescribed) {
  ProcessOptions o;
  o.timeout = std::chrono::milliseconds(500);
  const ProcessResult r = RunProcess({"/bin/sleep", "30"}, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.signaled);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_THAT(r.err, HasSubstr("[process harness: timed out; the threads of pid "));
  EXPECT_THAT(r.err, HasSubstr(" sleep wchan="));
  EXPECT_THAT(r.err, HasSubstr("SigBlk:"));
}

TEST_F(LauncherTest, BadFlagValueExits2NamingKeyValueAndAllowedAndProgramNeverRuns) {
  const std::string marker = dir_ + "/ran";
  ProcessResult r = Launch({"--activity-pool=1", kProbe, "touch", marker});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("GPROF_ACTIVITY_POOL=1"));
  EXPECT_THAT(r.err, HasSubstr("2 to 65536"));
  EXPECT_THAT(r.err, HasSubstr("--activity-pool"));
  EXPECT_FALSE(Exists(marker));

  r = Launch({"--log-level", "loud", kProbe, "touch", marker});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("GPROF_LOG_LEVEL=loud"));
  EXPECT_THAT(r.err, HasSubstr("trace, debug, info, warn, error, off"));
  EXPECT_FALSE(Exists(marker));

  r = Launch({"--schedule", "active=0", kProbe, "touch", marker});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("GPROF_SCHEDULE=active=0"));
  EXPECT_FALSE(Exists(marker));
}

TEST_F(LauncherTest, BadFlagsExit2BeforeTheProgramStarts) {
  const std::string marker = dir_ + "/ran";
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--no-such-flag"}, {"--sort-by", "fastest"}, {"--row-limit", "many"},
           {"--quiet=yes"}, {"-o", "out.%z"}, {"--wait", "-3"},
           {"--schedule", "active=1", "--active", "2"}, {"--group-by-stack", "0"},
           {"--group-by-stack", "many"}}) {
    std::vector<std::string> args = flags;
    args.insert(args.end(), {kProbe, "touch", marker});
    const ProcessResult r = Launch(args);
    EXPECT_EQ(r.exit_code, 2) << flags[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("error")) << flags[0];
    EXPECT_FALSE(Exists(marker)) << flags[0];
  }
  const ProcessResult r = Launch({"--sort-by", "fastest", kProbe, "touch", marker});
  EXPECT_THAT(r.err, HasSubstr("self_cuda_time_total"));  // the allowed keys are listed
  EXPECT_EQ(Launch({}).exit_code, 2);                        // no program at all
}

TEST_F(LauncherTest, BadEnvironmentValueExits2AndProgramNeverRuns) {
  const std::string marker = dir_ + "/ran";
  ProcessOptions o = options_;
  o.set_env["GPROF_HOST_BUFFER_MIB"] = "lots";
  const ProcessResult r = Launch({kProbe, "touch", marker}, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("GPROF_HOST_BUFFER_MIB=lots"));
  EXPECT_THAT(r.err, HasSubstr("1 to 65536"));
  EXPECT_THAT(r.err, HasSubstr("environment"));
  EXPECT_FALSE(Exists(marker));
}

TEST_F(LauncherTest, FlagWinsOverInheritedEnvironment) {
  ProcessOptions o = options_;
  o.set_env["GPROF_ACTIVITY_POOL"] = "1";  // invalid, but the flag replaces it
  const ProcessResult r = Launch({"--activity-pool", "16", kProbe, "env", "GPROF_ACTIVITY_POOL"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GPROF_ACTIVITY_POOL=16"));
}

TEST_F(LauncherTest, UnknownGprofKeyWarnsAndTheProgramRuns) {
  const std::string marker = dir_ + "/ran";
  ProcessOptions o = options_;
  o.set_env["GPROF_ACTIVTY_POOL"] = "8";
  const ProcessResult r = Launch({kProbe, "touch", marker}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning"));
  EXPECT_THAT(r.err, HasSubstr("GPROF_ACTIVTY_POOL"));
  EXPECT_TRUE(Exists(marker));
}

TEST_F(LauncherTest, RefusesWhenAnotherToolOwnsTheInjectionSlotUnlessForced) {
  const std::string marker = dir_ + "/ran";
  const std::string nsys = "/opt/nvidia/nsight-systems/lib/libToolsInjection64.so";
  ProcessOptions o = options_;
  o.set_env["CUDA_INJECTION64_PATH"] = nsys;
  ProcessResult r = Launch({kProbe, "touch", marker}, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("CUDA_INJECTION64_PATH"));
  EXPECT_THAT(r.err, HasSubstr(nsys));
  EXPECT_THAT(r.err, HasSubstr("--force"));
  EXPECT_FALSE(Exists(marker));

  r = Launch({"--force", kProbe, "env", "CUDA_INJECTION64_PATH"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("CUDA_INJECTION64_PATH=" + fs::canonical(fake_lib_).string()));
}

// ---- The program's environment ----------------------------------------------------------------

TEST_F(LauncherTest, SetsInjectionAndConfigEnvironmentKeepingTheRest) {
  ProcessOptions o = options_;
  o.set_env["MY_APP_SETTING"] = "kept";
  o.set_env["LD_PRELOAD"] = "libother.so";
  const ProcessResult r =
      Launch({"--no-cuda", "--preload", "--skip-first", "2", "--active", "3", "-o", "out", kProbe,
              "env", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GPROF_CUDA",
              "GPROF_SCHEDULE", "GPROF_OUTPUT_DIR", "LD_PRELOAD", "MY_APP_SETTING",
              "GPROF_INJECT_LIB"},
             o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string lib = fs::canonical(fake_lib_).string();
  EXPECT_THAT(r.out, HasSubstr("CUDA_INJECTION64_PATH=" + lib + "\n"));
  EXPECT_THAT(r.out, HasSubstr("NVTX_INJECTION64_PATH=" + lib + "\n"));
  EXPECT_THAT(r.out, HasSubstr("GPROF_CUDA=0\n"));
  EXPECT_THAT(r.out, HasSubstr("GPROF_SCHEDULE=skip_first=2,active=3\n"));
  EXPECT_THAT(r.out, HasSubstr("GPROF_OUTPUT_DIR=" + fs::canonical(dir_).string() + "/out\n"));
  EXPECT_THAT(r.out, HasSubstr("LD_PRELOAD=" + lib + ":libother.so\n"));
  EXPECT_THAT(r.out, HasSubstr("MY_APP_SETTING=kept\n"));
  EXPECT_THAT(r.out, HasSubstr("GPROF_INJECT_LIB unset"));  // a launcher-only setting
}

TEST_F(LauncherTest, FindsTheInjectionLibraryNextToItself) {
  // Install-tree layout: <prefix>/bin/gprof-run and <prefix>/lib/libgprof_inject.so.
  const std::string prefix = dir_ + "/prefix";
  fs::create_directories(prefix + "/bin");
  fs::create_directories(prefix + "/lib");
  fs::copy_file(LauncherPath(), prefix + "/bin/gprof-run");
  std::ofstream(prefix + "/lib/libgprof_inject.so") << "x";
  ProcessOptions o = options_;
  o.set_env.erase("GPROF_INJECT_LIB");
  o.unset_env.push_back("GPROF_INJECT_LIB");
  ProcessResult r = RunProcess({prefix + "/bin/gprof-run", kProbe, "env", "CUDA_INJECTION64_PATH"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("=" + fs::canonical(prefix + "/lib/libgprof_inject.so").string()));

  // Without any library: a clear message and the program does not start.
  fs::remove(prefix + "/lib/libgprof_inject.so");
  const std::string marker = dir_ + "/ran";
  r = RunProcess({prefix + "/bin/gprof-run", kProbe, "touch", marker}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("libgprof_inject.so"));
  EXPECT_THAT(r.err, HasSubstr("GPROF_INJECT_LIB"));
  EXPECT_FALSE(Exists(marker));
}

// ---- Exit status and signals --------------------------------------------------------------------

TEST_F(LauncherTest, ExitStatusPropagates) {
  for (int code : {0, 3, 42}) {
    const ProcessResult r = Launch({"-q", kProbe, "exit", std::to_string(code)});
    EXPECT_FALSE(r.signaled);
    EXPECT_EQ(r.exit_code, code) << r.err;
  }
}

TEST_F(LauncherTest, DeathBySignalBecomes128PlusN) {
  for (int sig : {SIGKILL, SIGTERM, SIGABRT}) {
    const ProcessResult r = Launch({"-q", kProbe, "signal", std::to_string(sig)});
    EXPECT_FALSE(r.signaled);
    EXPECT_EQ(r.exit_code, 128 + sig) << r.err;
  }
}

TEST_F(LauncherTest, ForwardsInterruptTerminateAndHangupToTheProgram) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    ProcessOptions o = options_;
    o.signal_after = std::chrono::milliseconds(1500);
    o.signal_to_send = sig;
    const int code = 40 + sig;
    const ProcessResult r = Launch({"-q", kProbe, "wait-signal", std::to_string(code)}, o);
    EXPECT_THAT(r.out, HasSubstr("probe: got signal " + std::to_string(sig))) << r.err;
    EXPECT_EQ(r.exit_code, code) << r.err;
  }
}

TEST_F(LauncherTest, MissingProgramExits127AndNonExecutableExits126) {
  ProcessResult r = Launch({"no-such-program-gprof"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_THAT(r.err, HasSubstr("no-such-program-gprof"));
  r = Launch({dir_ + "/missing/program"});
  EXPECT_EQ(r.exit_code, 127);

  const std::string text = dir_ + "/notes.txt";
  std::ofstream(text) << "not a program\n";
  ::chmod(text.c_str(), 0644);
  r = Launch({text});
  EXPECT_EQ(r.exit_code, 126);
  EXPECT_THAT(r.err, HasSubstr("notes.txt"));
}

TEST_F(LauncherTest, FindsTheProgramOnPath) {
  ProcessOptions o = options_;
  o.set_env["PATH"] = fs::path(kProbe).parent_path().string() + ":/usr/bin:/bin";
  const ProcessResult r = Launch({"gprof_launch_probe", "exit", "5"}, o);
  EXPECT_EQ(r.exit_code, 5) << r.err;
}

// ---- Output directory --------------------------------------------------------------------------

TEST_F(LauncherTest, OutputTemplateExpandsPidHostNameAndEnvironment) {
  ProcessOptions o = options_;
  o.set_env["RUN_TAG"] = "exp7";
  const ProcessResult r =
      Launch({"-o", "runs/%n-%h-%p-%q{RUN_TAG}-%q{GPROF_UNSET_VAR}-100%%", kProbe, "pid"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("pid=");
  ASSERT_NE(at, std::string::npos);
  const std::string pid = r.out.substr(at + 4, r.out.find('\n', at) - at - 4);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string expected = dir_ + "/runs/gprof_launch_probe-" + std::string(host) + "-" + pid +
                               "-exp7--100%";
  EXPECT_TRUE(fs::is_directory(expected)) << expected;
  // The manifest names the program's pid (the same %p).
  const nlohmann::json manifest = nlohmann::json::parse(ReadFile(expected + "/gprof-run.json"));
  EXPECT_EQ(std::to_string(manifest.at("pid").get<long>()), pid);
}

TEST_F(LauncherTest, DefaultOutputDirectoryIsUnderGprofTraces) {
  const ProcessResult r = Launch({"-q", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> dirs = ListDir(dir_ + "/gprof_traces");
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_EQ(dirs[0].rfind("gprof_launch_probe.", 0), 0u) << dirs[0];
  EXPECT_TRUE(Exists(dir_ + "/gprof_traces/" + dirs[0] + "/table.txt"));
}

TEST_F(LauncherTest, NeverOverwritesAnExistingProfile) {
  ProcessResult r = Launch({"-q", "-o", "fixed", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first_manifest = ReadFile(dir_ + "/fixed/gprof-run.json");
  ASSERT_FALSE(first_manifest.empty());

  r = Launch({"-q", "-o", "fixed", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("already holds a profile"));
  EXPECT_THAT(r.err, HasSubstr("fixed-1"));
  EXPECT_EQ(ReadFile(dir_ + "/fixed/gprof-run.json"), first_manifest);
  EXPECT_TRUE(Exists(dir_ + "/fixed-1/table.txt"));

  r = Launch({"-q", "-o", "fixed", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Exists(dir_ + "/fixed-2/table.txt"));
  // One dump per directory: nothing was written over.
  for (const char* d : {"/fixed", "/fixed-1", "/fixed-2"}) {
    int dumps = 0;
    for (const std::string& f : ListDir(dir_ + d)) dumps += f.ends_with(".gpdump");
    EXPECT_EQ(dumps, 1) << d;
  }
}

// ---- Outputs after the run ---------------------------------------------------------------------

TEST_F(LauncherTest, RunRendersTheProgramsDumpAndPrintsTableAndClosingLine) {
  const ProcessResult r = Launch({"-o", "out", kProbe, "dump", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = dir_ + "/out";
  const std::string table = ReadFile(out + "/table.txt");
  EXPECT_THAT(table, HasSubstr("train_step"));
  EXPECT_THAT(r.err, HasSubstr(table));  // the same table on stderr
  EXPECT_TRUE(Exists(out + "/trace.json"));
  EXPECT_THAT(r.err, HasSubstr("1 process"));
  EXPECT_THAT(r.err, HasSubstr("2 ranges"));
  EXPECT_THAT(r.err, HasSubstr("1 kernel"));
  EXPECT_THAT(r.err, HasSubstr("cupti_dropped_records=7"));  // losses are named
  EXPECT_THAT(r.err, HasSubstr("libcupti.so.13"));
  EXPECT_THAT(r.err, HasSubstr(out + "/trace.json"));
  EXPECT_EQ(RunProcess({LauncherPath(), "check", out + "/trace.json"}).exit_code, 0);
  // The same trace as Perfetto protobuf: a Trace starts with packet (field 1, length-delimited).
  const std::string pftrace = ReadFile(out + "/trace.pftrace");
  ASSERT_FALSE(pftrace.empty());
  EXPECT_EQ(pftrace[0], '\x0a');
  EXPECT_NE(pftrace.find("train_step"), std::string::npos);  // interned range name
  EXPECT_THAT(r.err, HasSubstr(out + "/trace.pftrace"));
}

TEST_F(LauncherTest, TraceFormatJsonGzWritesOnlyTheGzipTraceWhichCheckReads) {
  const ProcessResult r = Launch({"--trace-format", "json.gz", "-o", "out", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = dir_ + "/out";
  EXPECT_TRUE(Exists(out + "/trace.json.gz"));
  EXPECT_FALSE(Exists(out + "/trace.json"));
  EXPECT_FALSE(Exists(out + "/trace.pftrace"));
  EXPECT_THAT(r.err, HasSubstr("trace " + out + "/trace.json.gz"));
  // gzip's magic bytes, and `check` inflates it.
  const std::string gz = ReadFile(out + "/trace.json.gz");
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  const ProcessResult check = RunProcess({LauncherPath(), "check", out + "/trace.json.gz"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  // report re-renders with all three.
  const ProcessResult all =
      RunProcess({LauncherPath(), "report", out, "--trace-format", "json,json.gz,pftrace"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_TRUE(Exists(out + "/trace.json"));
  EXPECT_TRUE(Exists(out + "/trace.pftrace"));
}

TEST_F(LauncherTest, BadTraceFormatExits2BeforeTheProgramStarts) {
  const ProcessResult r = Launch({"--trace-format", "json,xml", "-o", "out", kProbe, "dump"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'xml' is not one of json, json.gz, pftrace"));
  EXPECT_FALSE(Exists(dir_ + "/out"));
}

TEST_F(LauncherTest, QuietWritesTheTableButDoesNotPrintIt) {
  const ProcessResult r = Launch({"--quiet", "-o", "out", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string table = ReadFile(dir_ + "/out/table.txt");
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(r.err.find(table), std::string::npos);
}

TEST_F(LauncherTest, NoDumpIsSaidPlainlyAndTheStatusIsKept) {
  const ProcessResult r = Launch({"-o", "out", kProbe, "exit", "3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("no dump"));
}

TEST_F(LauncherTest, CorruptDumpFromTheProgramIsReportedAndTheStatusIsKept) {
  const ProcessResult r = Launch({"-o", "out", kProbe, "corrupt-dump"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr(".gpdump"));
  EXPECT_THAT(r.err, HasSubstr("not rendered"));
}

// ---- report and check ----------------------------------------------------------------------------

void WriteManifestFor(const std::string& dir, long pid) {
  std::ofstream(dir + "/gprof-run.json")
      << nlohmann::json{{"tool", "gprof-run"}, {"pid", pid}, {"command_line", {"train"}}}.dump();
}

TEST_F(LauncherTest, ReportRendersEveryDumpAndCheckAcceptsTheTraces) {
  const std::string out = dir_ + "/profile";
  fs::create_directories(out);
  ASSERT_EQ(WriteDump(SampleProfile(1234, "train"), out + "/train.1234.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(1300, "worker"), out + "/worker.1300.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(1234, "train"), out + "/train.1234.cycle1.steps2-4.gpdump"), "");
  WriteManifestFor(out, 1234);

  const ProcessResult r = RunProcess({LauncherPath(), "report", out, "--sort-by", "count"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"table.txt", "trace.json", "trace.pftrace", "worker.1300.table.txt",
                        "worker.1300.trace.json", "worker.1300.pftrace",
                        "train.1234.cycle1.steps2-4.table.txt",
                        "train.1234.cycle1.steps2-4.trace.json",
                        "train.1234.cycle1.steps2-4.pftrace"}) {
    EXPECT_TRUE(Exists(out + "/" + f)) << f;
  }
  EXPECT_THAT(ReadFile(out + "/table.txt"), HasSubstr("forward"));
  EXPECT_THAT(r.err, HasSubstr("2 processes"));
  const ProcessResult c = RunProcess({LauncherPath(), "check", out + "/trace.json",
                                      out + "/worker.1300.trace.json",
                                      out + "/train.1234.cycle1.steps2-4.trace.json"});
  EXPECT_EQ(c.exit_code, 0) << c.out;
}

TEST_F(LauncherTest, ReportWithoutManifestTreatsTheOnlyWholeRunAsMain) {
  const std::string out = dir_ + "/profile";
  fs::create_directories(out);
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), out + "/app.77.gpdump"), "");
  const ProcessResult r = RunProcess({LauncherPath(), "report", out, "--row-limit", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Exists(out + "/table.txt"));
  EXPECT_TRUE(Exists(out + "/trace.json"));
}

// Native stacks dropped for a full host buffer (--backtrace, StackCounters::dropped) are a loss
// in the closing line like the counters: two processes with 3 and 4 drops give
// stacks_dropped=7 (they are also in host_events_dropped, 5 + 0 here).
TEST_F(LauncherTest, ClosingLineCountsDroppedStacksAsALoss) {
  const std::string out = dir_ + "/profile";
  fs::create_directories(out);
  Profile a = SampleProfile(1234, "train");
  a.stack_counters = {10, 3};
  a.counters.host_events_dropped = 5;
  Profile b = SampleProfile(1300, "worker");
  b.stack_counters = {2, 4};
  ASSERT_EQ(WriteDump(a, out + "/train.1234.gpdump"), "");
  ASSERT_EQ(WriteDump(b, out + "/worker.1300.gpdump"), "");
  WriteManifestFor(out, 1234);
  const ProcessResult r = RunProcess({LauncherPath(), "report", out, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("LOSSES: host_events_dropped=5, stacks_dropped=7;")) << r.err;
  // Without drops the line says "no losses".
  Profile c = SampleProfile(1234, "train");
  c.stack_counters = {10, 0};
  ASSERT_EQ(WriteDump(c, out + "/train.1234.gpdump"), "");
  fs::remove(out + "/worker.1300.gpdump");
  const ProcessResult clean = RunProcess({LauncherPath(), "report", out, "-q"});
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_THAT(clean.err, HasSubstr("; no losses;")) << clean.err;
}

TEST_F(LauncherTest, ReportNamesACorruptDumpAndStillRendersTheOthers) {
  const std::string out = dir_ + "/profile";
  fs::create_directories(out);
  ASSERT_EQ(WriteDump(SampleProfile(1234, "train"), out + "/train.1234.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(1300, "worker"), out + "/worker.1300.gpdump"), "");
  // Cut the worker's dump in half: truncated.
  const std::string worker = ReadFile(out + "/worker.1300.gpdump");
  std::ofstream(out + "/worker.1300.gpdump", std::ios::trunc | std::ios::binary)
      << worker.substr(0, worker.size() / 2);
  WriteManifestFor(out, 1234);

  Profile scratch;
  std::string read_error;
  ASSERT_FALSE(ReadDump(out + "/worker.1300.gpdump", &scratch, &read_error));
  const ProcessResult r = RunProcess({LauncherPath(), "report", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(read_error));  // ReadDump's own message
  EXPECT_TRUE(Exists(out + "/table.txt"));
  EXPECT_TRUE(Exists(out + "/trace.json"));
  EXPECT_FALSE(Exists(out + "/worker.1300.table.txt"));
}

TEST_F(LauncherTest, ReportExitCodes) {
  const std::string empty = dir_ + "/empty";
  fs::create_directories(empty);
  ProcessResult r = RunProcess({LauncherPath(), "report", empty});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no dump"));
  EXPECT_EQ(RunProcess({LauncherPath(), "report", dir_ + "/nope"}).exit_code, 2);
  EXPECT_EQ(RunProcess({LauncherPath(), "report"}).exit_code, 2);
  EXPECT_EQ(RunProcess({LauncherPath(), "report", empty, "--sort-by", "x"}).exit_code, 2);
}

TEST_F(LauncherTest, CheckExitCodes) {
  EXPECT_EQ(RunProcess({LauncherPath(), "check"}).exit_code, 2);
  EXPECT_EQ(RunProcess({LauncherPath(), "check", "--strict", "x.json"}).exit_code, 2);

  const std::string garbage = dir_ + "/garbage.json";
  std::ofstream(garbage) << "{ this is not json";
  ProcessResult r = RunProcess({LauncherPath(), "check", garbage});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("garbage.json"));

  const std::string negative = dir_ + "/negative.json";
  std::ofstream(negative) << R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":-5,"dur":1}]})";
  r = RunProcess({LauncherPath(), "check", negative});
  EXPECT_EQ(r.exit_code, 1) << r.out;

  const std::string clean = dir_ + "/clean.json";
  std::ofstream(clean)
      << R"({"traceEvents":[{"ph":"X","name":"a","cat":"user_annotation","pid":1,"tid":1,"ts":1.0,"dur":2.0}]})";
  r = RunProcess({LauncherPath(), "check", clean});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = RunProcess({LauncherPath(), "check", clean, negative});
  EXPECT_EQ(r.exit_code, 1) << r.out;
}

// ---- Help ----------------------------------------------------------------------------------------

TEST_F(LauncherTest, HelpListsAFlagForEveryConfigKey) {
  const ProcessResult r = Launch({"--help"});
  ASSERT_EQ(r.exit_code, 0);
  for (const ConfigKey& key : ConfigKeys()) {
    bool has_flag = false;
    size_t start = 0;
    while (start < r.out.size()) {
      size_t end = r.out.find('\n', start);
      if (end == std::string::npos) end = r.out.size();
      const std::string line = r.out.substr(start, end - start);
      has_flag = has_flag || (line.find("--") != std::string::npos &&
                              line.find(std::string(key.name) + ":") != std::string::npos);
      start = end + 1;
    }
    EXPECT_TRUE(has_flag) << key.name << " has no flag in --help";
  }
  for (const char* flag : {"--sort-by", "--row-limit", "--force", "--preload", "--quiet",
                           "--help-env", "--version", "report", "check"}) {
    EXPECT_THAT(r.out, HasSubstr(flag));
  }
}

TEST_F(LauncherTest, HelpEnvListsEveryKeyAndVersionPrints) {
  ProcessResult r = Launch({"--help-env"});
  ASSERT_EQ(r.exit_code, 0);
  for (const ConfigKey& key : ConfigKeys()) {
    EXPECT_THAT(r.out, HasSubstr(std::string(key.name) + " (")) << key.name;
  }
  r = Launch({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("gprof-run 0."));
}

// What a user checks before profiling on their stack: the version (CMake's project version), the
// CUPTI it decodes (every CUDA 13 minor from API 130000, its layout checks run up to 13.5's
// 130500; CUDA 12.4 to 12.9, API 22 to 28: config/cupti_support.h) and where libcupti is looked
// for, in the order collector/cupti/loader.cpp tries: the process's own, GPROF_CUPTI_LIB, the pip
// wheels, CUDA_HOME, the build's toolkit, the linker path.
TEST_F(LauncherTest, VersionNamesTheCuptiItDecodesAndWhereItLooksForLibcuptiInOrder) {
  ProcessResult r = Launch({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "gprof-run " GPROF_TEST_VERSION);
  EXPECT_THAT(r.out, HasSubstr("libcupti.so.13, CUPTI API 130000 (13.0.0)"));
  EXPECT_THAT(r.out, HasSubstr("tested up to 130500 (13.5.0)"));
  EXPECT_THAT(r.out, HasSubstr("libcupti.so.12, CUPTI API 22 (CUDA 12.4)"));
  EXPECT_THAT(r.out, HasSubstr("tested up to 28 (CUDA 12.9 Update 1)"));
  size_t at = 0;
  for (const char* where : {"already loaded", "GPROF_CUPTI_LIB", "$VIRTUAL_ENV", "~/.local",
                            "$CUDA_HOME", "toolkit gprof-run was built with", "dynamic linker"}) {
    const size_t found = r.out.find(where, at);
    ASSERT_NE(found, std::string::npos) << "'" << where << "' missing or out of order in\n" << r.out;
    at = found;
  }
  EXPECT_THAT(r.out, HasSubstr("\nbuilt with"));  // the toolkit and its folders, or "without" it
}

// ---- Python programs: the start-up hook first on PYTHONPATH ---------------------------------------

// The Python CMake found (tests/launcher/CMakeLists.txt); its basename is python3 or python3.X.
const std::string kPython = GPROF_TEST_PYTHON3;
const std::string kPrintPythonPath =
    "import os, sys; print(os.environ.get('PYTHONPATH', '<unset>')); "
    "print('hook ran' if '_gprof_run_hook' in sys.modules else 'no hook')";

std::string HookDir() { return fs::canonical(BinaryDir() + "/lib/gprof-run/python").string(); }

TEST_F(LauncherTest, PythonProgramGetsTheHookFirstOnPythonPathKeepingTheExistingOne) {
  ASSERT_TRUE(Exists(HookDir() + "/sitecustomize.py"));
  ProcessResult r = Launch({"-q", kPython, "-c", kPrintPythonPath});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, HookDir() + "\nhook ran\n");  // and the hook printed nothing

  ProcessOptions o = options_;
  o.set_env["PYTHONPATH"] = "/existing/one:/existing/two";
  r = Launch({"-q", kPython, "-c", kPrintPythonPath}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, HookDir() + ":/existing/one:/existing/two\nhook ran\n");
}

TEST_F(LauncherTest, NoPythonHookLeavesPythonPathAlone) {
  ProcessResult r = Launch({"-q", "--no-python-hook", kPython, "-c", kPrintPythonPath});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<unset>\nno hook\n");

  ProcessOptions o = options_;
  o.set_env["PYTHONPATH"] = "/existing/one";
  r = Launch({"-q", "--no-python-hook", kPython, "-c", kPrintPythonPath}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "/existing/one\nno hook\n");
}

TEST_F(LauncherTest, ScriptWithPythonShebangGetsTheHook) {
  const std::string script = dir_ + "/train.py";
  std::ofstream(script) << "#!" << kPython << "\n" << kPrintPythonPath << "\n";
  ::chmod(script.c_str(), 0755);
  ProcessResult r = Launch({"-q", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, HookDir() + "\nhook ran\n");

  // Through env(1), as most scripts say it.
  ProcessOptions o = options_;
  o.set_env["PATH"] = fs::path(kPython).parent_path().string() + ":/usr/bin:/bin";
  std::ofstream(script, std::ios::trunc)
      << "#!/usr/bin/env " << fs::path(kPython).filename().string() << "\n"
      << kPrintPythonPath << "\n";
  r = Launch({"-q", script}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, HookDir() + "\nhook ran\n");
}

TEST_F(LauncherTest, NonPythonProgramGetsNoPythonPath) {
  ProcessResult r = Launch({"-q", kProbe, "env", "PYTHONPATH"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "PYTHONPATH unset\n");

  ProcessOptions o = options_;
  o.set_env["PYTHONPATH"] = "/existing/one";
  r = Launch({"-q", kProbe, "env", "PYTHONPATH"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "PYTHONPATH=/existing/one\n");

  // A shell script is not Python, even when it runs python itself.
  const std::string script = dir_ + "/run.sh";
  std::ofstream(script) << "#!/bin/sh\necho \"PYTHONPATH=${PYTHONPATH-unset}\"\n";
  ::chmod(script.c_str(), 0755);
  r = Launch({"-q", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "PYTHONPATH=unset\n");
}

TEST_F(LauncherTest, MissingPythonHookWarnsAndThePythonProgramStillRuns) {
  // An install without lib/gprof-run/python: gprof-run copied into a bare prefix.
  const std::string prefix = dir_ + "/prefix";
  fs::create_directories(prefix + "/bin");
  fs::copy_file(LauncherPath(), prefix + "/bin/gprof-run");
  const ProcessResult r = RunProcess({prefix + "/bin/gprof-run", "-q", kPython, "-c",
                                      kPrintPythonPath}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<unset>\nno hook\n");
  EXPECT_THAT(r.err, HasSubstr("Python start-up hook is missing"));
  EXPECT_THAT(r.err, HasSubstr(prefix + "/bin/../lib/gprof-run/python"));
  EXPECT_THAT(r.err, HasSubstr("--no-python-hook"));
}

TEST_F(LauncherTest, HelpListsNoPythonHook) {
  const ProcessResult r = Launch({"--help"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--no-python-hook"));
  EXPECT_THAT(r.out, HasSubstr("PYTHONPATH"));
}

}  // namespace
}  // namespace gprof::testing

namespace gprof::testing {
namespace {

// A misspelled flag of the launcher or of a subcommand names the closest real one.
TEST_F(LauncherTest, MisspelledFlagsGetDidYouMeanFromTheLauncherAndTheSubcommands) {
  ProcessResult r = Launch({"--recrod-shapes", kProbe, "exit", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --recrod-shapes (did you mean --record-shapes?)"));
  r = RunProcess({LauncherPath(), "report", dir_, "--sort-bi", "count"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --sort-bi (did you mean --sort-by?)"));
  r = RunProcess({LauncherPath(), "stats", dir_, "--fromat=csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --fromat=csv (did you mean --format?)"));
  r = RunProcess({LauncherPath(), "merge", dir_, "--row-limt", "3"});
  EXPECT_THAT(r.err, HasSubstr("(did you mean --row-limit?)"));
}

// No dump: the closing line lists gprof-run's own failure to write among the causes instead of
// blaming the program alone ("the program wrote no dump" was the old wording).
TEST_F(LauncherTest, NoDumpLineDoesNotBlameTheProgramAlone) {
  const ProcessResult r = Launch({"-o", "out", kProbe, "exit", "0"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("no dump was written"));
  EXPECT_THAT(r.err, HasSubstr("gprof-run could not write the dump"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("the program wrote no dump")));
}

// A quiet terminal: stderr gets the top 20 rows (torch's row_limit) or --row-limit N, and a line
// pointing at table.txt, which always keeps every row: `report DIR --row-limit 10` no longer
// shortens it. The profile has 40 ranges range_00..range_39 besides the sample's rows.
size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST_F(LauncherTest, StderrShowsTheTopRowsAndTableTxtKeepsThemAll) {
  const std::string out = dir_ + "/profile";
  fs::create_directories(out);
  Profile p = SampleProfile(77, "app");
  const uint32_t tid = 77;
  for (int i = 0; i < 40; ++i) {
    const uint64_t start = p.info.start_ns + 6'000'000 + static_cast<uint64_t>(i) * 100'000;
    const std::string name = std::string("range_") + (i < 10 ? "0" : "") + std::to_string(i);
    p.ranges.push_back({start, start + static_cast<uint64_t>(i + 1) * 1000,
                        p.strings.Intern(name), tid, 0, 0, 0});
  }
  ASSERT_EQ(WriteDump(p, out + "/app.77.gpdump"), "");

  ProcessResult r = RunProcess({LauncherPath(), "report", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountOf(ReadFile(out + "/table.txt"), "range_"), 40u);
  EXPECT_LE(CountOf(r.err, "range_"), 20u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gprof-run: the top 20 of "));
  EXPECT_THAT(r.err, HasSubstr(out + "/table.txt has all of them"));

  r = RunProcess({LauncherPath(), "report", out, "--row-limit", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LE(CountOf(r.err, "range_"), 10u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gprof-run: the top 10 of "));
  EXPECT_EQ(CountOf(ReadFile(out + "/table.txt"), "range_"), 40u);  // not shortened

  r = RunProcess({LauncherPath(), "report", out, "--row-limit", "-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountOf(r.err, "range_"), 40u);
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("rows are printed")));
}

}  // namespace
}  // namespace gprof::testing
