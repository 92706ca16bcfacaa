// Lifecycle tests: real processes with the real injection library, checked through the dumps
// they leave (model/dump.h) and their exit status. No launcher: the environment is set here.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "model/dump.h"
#include "tests/support/process.h"

namespace gprof {
namespace {

using testing::ProcessOptions;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kProg = GPROF_LIFECYCLE_PROG;
const std::string kLib = GPROF_INJECT_LIB;

ProcessOptions InjectInto(const std::string& out_dir) {
  ProcessOptions o;
  o.set_env["NVTX_INJECTION64_PATH"] = kLib;
  o.set_env["CUDA_INJECTION64_PATH"] = kLib;
  o.set_env["GPROF_OUTPUT_DIR"] = out_dir;
  o.unset_env = {"LD_PRELOAD", "GPROF_LOG_LEVEL", "GPROF_SCHEDULE", "GPROF_NVTX", "GPROF_CUDA"};
  return o;
}

std::vector<std::string> Dumps(const std::string& dir) {
  std::vector<std::string> dumps;
  for (const std::string& name : testing::ListDir(dir)) {
    if (name.size() > 7 && name.substr(name.size() - 7) == ".gpdump") dumps.push_back(name);
  }
  std::sort(dumps.begin(), dumps.end());
  return dumps;
}

Profile Load(const std::string& path) {
  Profile p;
  std::string error;
  EXPECT_TRUE(ReadDump(path, &p, &error)) << error;
  return p;
}

std::string Str(const Profile& p, StringId id) { return std::string(p.strings.Get(id)); }

std::vector<HostRange> RangesNamed(const Profile& p, const std::string& name) {
  std::vector<HostRange> out;
  for (const HostRange& r : p.ranges) {
    if (Str(p, r.name) == name) out.push_back(r);
  }
  return out;
}

size_t CountMarks(const Profile& p, const std::string& name) {
  return static_cast<size_t>(std::count_if(p.marks.begin(), p.marks.end(), [&](const HostMark& m) {
    return Str(p, m.name) == name;
  }));
}

std::string ThreadName(const Profile& p, uint32_t tid) {
  for (const ThreadInfo& t : p.threads) {
    if (t.tid == tid) return Str(p, t.name);
  }
  return "<no thread " + std::to_string(tid) + ">";
}

// The innermost enclosing range named `parent` on the same thread, or nullptr.
const HostRange* EnclosingNamed(const Profile& p, const HostRange& child, const std::string& parent) {
  for (const HostRange& r : p.ranges) {
    if (r.tid == child.tid && Str(p, r.name) == parent && r.start_ns <= child.start_ns &&
        child.end_ns <= r.end_ns) {
      return &r;
    }
  }
  return nullptr;
}

int ChildPid(const std::string& out, const std::string& mode) {
  std::smatch m;
  const std::regex re("GPROF_LIFECYCLE " + mode + " child=(\\d+) status=(\\d+)");
  if (!std::regex_search(out, m, re)) return -1;
  return std::stoi(m[1]);
}

// The number after "KEY=" in the program's "GPROF_LIFECYCLE <mode> ..." line, or -1.
long Printed(const std::string& out, const std::string& mode, const std::string& key) {
  std::smatch m;
  const std::regex re("GPROF_LIFECYCLE " + mode + " .*\\b" + key + "=(\\d+)");
  if (!std::regex_search(out, m, re)) return -1;
  return std::stol(m[1]);
}

std::set<uint32_t> TidsOf(const std::vector<HostRange>& ranges) {
  std::set<uint32_t> tids;
  for (const HostRange& r : ranges) tids.insert(r.tid);
  return tids;
}

std::string Describe(const ProcessResult& r) {
  return "exit=" + std::to_string(r.exit_code) + " signal=" + std::to_string(r.term_signal) +
         "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

TEST(Library, ExportsOnlyTheInjectionEntryPoints) {
  FILE* nm = popen(("nm -D --defined-only '" + kLib + "'").c_str(), "r");
  ASSERT_NE(nm, nullptr);
  std::set<std::string> symbols;
  char line[4096];
  while (std::fgets(line, sizeof line, nm) != nullptr) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    const size_t space = s.find_last_of(' ');
    symbols.insert(space == std::string::npos ? s : s.substr(space + 1));
  }
  ASSERT_EQ(pclose(nm), 0);
  // gprof_run_attach: the deliberately published entry of `gprof-run attach` (docs/ATTACH.md).
  // gprof_run_cupti_*: the Python hook's hand-over around torch.profiler; the three cupti*: the
  // --preload interposition for the program's own CUPTI clients (inject/cupti_interpose.cpp), and
  // dlsym, which hands those three to a client that looks them up (inject/dlsym_interpose.cpp).
  EXPECT_EQ(symbols, (std::set<std::string>{"InitializeInjection", "InitializeInjectionNvtx2",
                                             "__itt_api_init", "__itt_string_handle_create",
                                             "__itt_task_begin", "__itt_task_end",
                                             "gprof_run_attach", "gprof_run_python_attach",
                                             "gprof_run_cupti_hand_over",
                                             "gprof_run_cupti_take_back",
                                             "cuptiActivityRegisterCallbacks",
                                             "cuptiActivityEnable", "cuptiActivityDisable",
                                             "dlsym"}));
}

// The library's thread-locals are static TLS (initial-exec), and a dlopen'ed library gets only
// glibc's static TLS surplus (1664 bytes by default, shared with every other dlopen'ed library):
// a 2 KB array once made dlopen fail with "cannot allocate memory in static TLS block" inside a
// Python process with torch loaded. Keep the segment well under the surplus.
TEST(Library, ThreadLocalsFitInGlibcsStaticTlsSurplus) {
  FILE* readelf = popen(("readelf -lW '" + kLib + "'").c_str(), "r");
  ASSERT_NE(readelf, nullptr);
  char line[4096];
  long memsz = -1;
  while (std::fgets(line, sizeof line, readelf) != nullptr) {
    unsigned long off, va, pa, filesz, mem;
    char type[32];
    if (std::sscanf(line, " %31s 0x%lx 0x%lx 0x%lx 0x%lx 0x%lx", type, &off, &va, &pa, &filesz,
                    &mem) == 6 &&
        std::string(type) == "TLS") {
      memsz = static_cast<long>(mem);
    }
  }
  ASSERT_EQ(pclose(readelf), 0);
  ASSERT_GE(memsz, 0) << "no TLS segment found";
  EXPECT_LE(memsz, 256) << "static TLS of libgprof_inject.so grew to " << memsz << " bytes";
}

TEST(NvtxExample, TrainingLoopRangesThreadsDomainsAndMarks) {
  const std::string dir = testing::MakeTempDir("nvtx_training");
  const ProcessResult r = RunProcess({GPROF_NVTX_TRAINING, "4"}, InjectInto(dir));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("GPROF_EXAMPLE_DONE nvtx_training"), std::string::npos);
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  EXPECT_TRUE(std::regex_match(dumps[0], std::regex(R"(nvtx_training\.\d+\.gpdump)"))) << dumps[0];
  const Profile p = Load(dir + "/" + dumps[0]);
  EXPECT_EQ(dumps[0], "nvtx_training." + std::to_string(p.info.pid) + ".gpdump");
  EXPECT_EQ(p.info.program, "nvtx_training");
  EXPECT_NE(p.info.command_line.find("nvtx_training 4"), std::string::npos) << p.info.command_line;
  EXPECT_EQ(p.info.gpu_status, "not started: the program never initialized CUDA");
  EXPECT_LE(p.info.start_ns, p.info.end_ns);

  for (int step = 0; step < 4; ++step) {
    EXPECT_EQ(RangesNamed(p, "ProfilerStep#" + std::to_string(step)).size(), 1u) << step;
  }
  EXPECT_TRUE(RangesNamed(p, "ProfilerStep#4").empty());
  for (const char* child : {"forward", "backward", "optimizer.step"}) {
    const auto ranges = RangesNamed(p, child);
    ASSERT_EQ(ranges.size(), 4u) << child;
    for (const HostRange& c : ranges) {
      const HostRange* step = nullptr;
      for (int s = 0; s < 4 && step == nullptr; ++s) {
        step = EnclosingNamed(p, c, "ProfilerStep#" + std::to_string(s));
      }
      EXPECT_NE(step, nullptr) << child << " is not inside a ProfilerStep";
      EXPECT_GT(c.end_ns, c.start_ns) << child;
      EXPECT_EQ(ThreadName(p, c.tid), "main");
    }
  }
  const auto allreduce = RangesNamed(p, "allreduce");
  ASSERT_EQ(allreduce.size(), 4u);
  for (const HostRange& a : allreduce) {
    EXPECT_NE(EnclosingNamed(p, a, "backward"), nullptr);
    ASSERT_LT(a.domain, p.domains.size());
    EXPECT_EQ(Str(p, p.domains[a.domain]), "gprof.example");
  }
  const auto loads = RangesNamed(p, "load_batch");
  ASSERT_EQ(loads.size(), 4u);
  EXPECT_EQ(ThreadName(p, loads[0].tid), "data-loader");
  EXPECT_NE(loads[0].tid, allreduce[0].tid);

  const auto epoch = RangesNamed(p, "epoch");
  ASSERT_EQ(epoch.size(), 1u);
  EXPECT_TRUE(epoch[0].flags & kRangeStartEnd);
  EXPECT_FALSE(epoch[0].flags & kRangeOpenAtEnd);

  EXPECT_EQ(CountMarks(p, "log"), 4u);
  EXPECT_EQ(CountMarks(p, "checkpoint"), 1u);
  for (const HostMark& m : p.marks) {
    EXPECT_EQ(ThreadName(p, m.tid), "logger");
    if (Str(p, m.name) == "checkpoint") {
      EXPECT_EQ(Str(p, p.domains[m.domain]), "gprof.example");
    }
  }
  EXPECT_EQ(p.counters.nvtx_unmatched_pops, 0u);
  EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, 0u);
  EXPECT_EQ(p.counters.host_events_dropped, 0u);
}

TEST(PythonExample, TrainScriptWithPypiNvtx) {
  const std::string python = testing::PythonPath();
  const ProcessResult probe = RunProcess({python, "-c", "import nvtx"});
  if (probe.exit_code != 0) {
    GTEST_SKIP() << "no python with the nvtx package at " << python
                 << " (set GPROF_TEST_PYTHON or run the setup script)";
  }
  const std::string dir = testing::MakeTempDir("train_py");
  const ProcessResult r = RunProcess(
      {python, testing::SourceDir() + "/examples/python/train.py", "3"}, InjectInto(dir));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("GPROF_EXAMPLE_DONE train.py"), std::string::npos);
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  const Profile p = Load(dir + "/" + dumps[0]);
  EXPECT_EQ(p.info.program, "train.py");
  EXPECT_EQ(dumps[0], "train.py." + std::to_string(p.info.pid) + ".gpdump");
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(RangesNamed(p, "ProfilerStep#" + std::to_string(step)).size(), 1u) << step;
  }
  for (const char* child : {"forward", "backward", "optimizer.step"}) {
    const auto ranges = RangesNamed(p, child);
    ASSERT_EQ(ranges.size(), 3u) << child;
    for (const HostRange& c : ranges) {
      bool inside = false;
      for (int s = 0; s < 3; ++s) {
        inside = inside || EnclosingNamed(p, c, "ProfilerStep#" + std::to_string(s)) != nullptr;
      }
      EXPECT_TRUE(inside) << child << " is not inside a ProfilerStep";
    }
  }
  const auto allreduce = RangesNamed(p, "allreduce");
  ASSERT_EQ(allreduce.size(), 3u);
  for (const HostRange& a : allreduce) {
    EXPECT_NE(EnclosingNamed(p, a, "backward"), nullptr);
    EXPECT_EQ(Str(p, p.domains[a.domain]), "gprof.example");
  }
  const auto loads = RangesNamed(p, "load_batch");
  ASSERT_EQ(loads.size(), 3u);
  EXPECT_NE(loads[0].tid, allreduce[0].tid);  // the loader thread
  EXPECT_EQ(CountMarks(p, "checkpoint"), 1u);
  EXPECT_EQ(p.counters.nvtx_unmatched_pops, 0u);
  EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, 0u);
}

// Python owns SIGINT (KeyboardInterrupt). An uncaught one makes Python finalize and then kill
// itself with SIGINT, skipping C atexit handlers: the dump must still be complete.
TEST(PythonExample, UncaughtKeyboardInterruptStillLeavesADump) {
  const std::string python = testing::PythonPath();
  if (RunProcess({python, "-c", "import nvtx"}).exit_code != 0) {
    GTEST_SKIP() << "no python with the nvtx package at " << python;
  }
  const std::string dir = testing::MakeTempDir("py_sigint");
  ProcessOptions o = InjectInto(dir);
  o.signal_after = std::chrono::milliseconds(3000);
  o.signal_to_send = SIGINT;
  const ProcessResult r = RunProcess(
      {python, "-c",
       "import nvtx, time\n"
       "with nvtx.annotate('before'):\n    pass\n"
       "nvtx.push_range('waiting')\n"
       "print('READY', flush=True)\n"
       "time.sleep(60)\n"},
      o);
  ASSERT_NE(r.out.find("READY"), std::string::npos) << Describe(r);
  EXPECT_NE(r.err.find("KeyboardInterrupt"), std::string::npos) << Describe(r);
  EXPECT_TRUE(r.signaled && r.term_signal == SIGINT) << Describe(r);
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  const Profile p = Load(dir + "/" + dumps[0]);
  EXPECT_EQ(RangesNamed(p, "before").size(), 1u);
  const auto waiting = RangesNamed(p, "waiting");
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_TRUE(waiting[0].flags & kRangeOpenAtEnd);
}

TEST(Lifecycle, PopWithoutPushAndRangesOpenAtExitAreFlagged) {
  const std::string dir = testing::MakeTempDir("unbalanced");
  const ProcessResult r = RunProcess({kProg, "unbalanced"}, InjectInto(dir));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u);
  const Profile p = Load(dir + "/" + dumps[0]);
  EXPECT_EQ(p.counters.nvtx_unmatched_pops, 1u);
  EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, 1u);
  const auto open = RangesNamed(p, "left-open");
  ASSERT_EQ(open.size(), 1u);
  EXPECT_TRUE(open[0].flags & kRangeOpenAtEnd);
  EXPECT_LE(open[0].end_ns, p.info.end_ns);
}

TEST(Lifecycle, ForkWithoutExecChildWritesNothingParentIsComplete) {
  const std::string dir = testing::MakeTempDir("fork");
  const ProcessResult r = RunProcess({kProg, "fork"}, InjectInto(dir));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const int child = ChildPid(r.out, "fork");
  ASSERT_GT(child, 0) << r.out;
  EXPECT_NE(r.out.find("status=0"), std::string::npos) << r.out;
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << "only the parent writes a dump";
  const Profile p = Load(dir + "/" + dumps[0]);
  EXPECT_NE(p.info.pid, static_cast<uint32_t>(child));
  EXPECT_EQ(RangesNamed(p, "parent-before").size(), 1u);
  EXPECT_EQ(RangesNamed(p, "parent-after").size(), 1u);
  EXPECT_TRUE(RangesNamed(p, "child-range").empty());
}

TEST(Lifecycle, ExecedChildProfilesItselfIntoItsOwnDump) {
  const std::string dir = testing::MakeTempDir("exec");
  const ProcessResult r = RunProcess({kProg, "exec"}, InjectInto(dir));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const int child = ChildPid(r.out, "exec");
  ASSERT_GT(child, 0) << r.out;
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 2u) << Describe(r);
  const std::string child_dump = "lifecycle_prog." + std::to_string(child) + ".gpdump";
  ASSERT_TRUE(std::find(dumps.begin(), dumps.end(), child_dump) != dumps.end()) << child_dump;
  const Profile c = Load(dir + "/" + child_dump);
  EXPECT_EQ(c.info.pid, static_cast<uint32_t>(child));
  EXPECT_EQ(RangesNamed(c, "outer").size(), 2u);
  EXPECT_EQ(RangesNamed(c, "inner").size(), 2u);
  EXPECT_EQ(CountMarks(c, "basic-mark"), 1u);
  EXPECT_TRUE(RangesNamed(c, "parent-range").empty());
  const std::string parent_dump = dumps[0] == child_dump ? dumps[1] : dumps[0];
  const Profile parent = Load(dir + "/" + parent_dump);
  EXPECT_EQ(c.info.parent_pid, parent.info.pid);
  EXPECT_EQ(RangesNamed(parent, "parent-range").size(), 1u);
  EXPECT_TRUE(RangesNamed(parent, "outer").empty());
}

class SignalTest : public ::testing::TestWithParam<int> {};

TEST_P(SignalTest, LeavesACompleteDumpAndTheSignalsExitStatus) {
  const int sig = GetParam();
  const std::string dir = testing::MakeTempDir("signal" + std::to_string(sig));
  ProcessOptions o = InjectInto(dir);
  o.signal_after = std::chrono::milliseconds(2000);
  o.signal_to_send = sig;
  o.timeout = std::chrono::milliseconds(40000);
  const ProcessResult r = RunProcess({kProg, "wait"}, o);
  ASSERT_NE(r.out.find("READY"), std::string::npos) << Describe(r);
  EXPECT_TRUE(r.signaled) << Describe(r);
  EXPECT_EQ(r.term_signal, sig) << Describe(r);
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  const Profile p = Load(dir + "/" + dumps[0]);
  const auto before = RangesNamed(p, "before-signal");
  ASSERT_EQ(before.size(), 1u);
  EXPECT_FALSE(before[0].flags & kRangeOpenAtEnd);
  const auto waiting = RangesNamed(p, "waiting");
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_TRUE(waiting[0].flags & kRangeOpenAtEnd);
  EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, 1u);
}

INSTANTIATE_TEST_SUITE_P(IntTermHup, SignalTest, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(sigabbrev_np(info.param));
                         });

TEST(Lifecycle, EarlyUnderscoreExitKeepsItsStatusAndWritesNoDump) {
  const std::string dir = testing::MakeTempDir("exit_early");
  const ProcessResult r = RunProcess({kProg, "exit-early"}, InjectInto(dir));
  EXPECT_FALSE(r.signaled) << Describe(r);
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_TRUE(Dumps(dir).empty()) << "_exit runs no atexit handler, so no dump is written";
}

TEST(Lifecycle, CrashKeepsItsSignal) {
  const std::string dir = testing::MakeTempDir("crash");
  const ProcessResult r = RunProcess({kProg, "crash"}, InjectInto(dir));
  EXPECT_TRUE(r.signaled) << Describe(r);
  EXPECT_EQ(r.term_signal, SIGSEGV) << Describe(r);
  EXPECT_TRUE(Dumps(dir).empty()) << "a crash is not intercepted: no dump";
}

TEST(Lifecycle, ProgramThatNeverUsesNvtxOrCudaIsUnaffected) {
  const std::string dir = testing::MakeTempDir("no_nvtx") + "/not-created";
  const ProcessResult r = RunProcess({kProg, "no-nvtx"}, InjectInto(dir));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("GPROF_LIFECYCLE no-nvtx done"), std::string::npos);
  EXPECT_TRUE(testing::ListDir(dir).empty());
  EXPECT_NE(::access(dir.c_str(), F_OK), 0) << "the output directory should not even be created";
}

// Issue 17: a thread's buffer slot goes to a later thread once it has ended. 10,000 threads over
// the run, never more than a wave of them at once, are more than the 8192 slots: before slots
// were reused, the later threads' events were dropped. The whole-run dump at exit holds all of
// them, each under the tid of its thread.
TEST(Lifecycle, TenThousandThreadsOverARunLoseNothing) {
  const std::string dir = testing::MakeTempDir("threads_churn");
  const ProcessResult r = RunProcess({kProg, "threads-churn", "10000"}, InjectInto(dir));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const long distinct = Printed(r.out, "threads-churn", "distinct_tids");
  ASSERT_GT(distinct, 0) << r.out;
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  const Profile p = Load(dir + "/" + dumps[0]);
  EXPECT_EQ(p.counters.host_events_dropped, 0u);
  const auto churn = RangesNamed(p, "churn");
  EXPECT_EQ(churn.size(), 10000u);
  EXPECT_EQ(CountMarks(p, "churn-mark"), 10000u);
  const std::set<uint32_t> tids = TidsOf(churn);
  EXPECT_EQ(tids.size(), static_cast<size_t>(distinct));
  // Each mark inside a churn range of its own thread.
  std::map<uint32_t, std::vector<const HostRange*>> by_tid;
  for (const HostRange& c : churn) by_tid[c.tid].push_back(&c);
  size_t marks_inside = 0;
  for (const HostMark& m : p.marks) {
    for (const HostRange* c : by_tid[m.tid]) {
      if (c->start_ns <= m.ts_ns && m.ts_ns <= c->end_ns) {
        ++marks_inside;
        break;
      }
    }
  }
  EXPECT_EQ(marks_inside, 10000u);
  for (uint32_t tid : tids) {
    EXPECT_TRUE(std::any_of(p.threads.begin(), p.threads.end(),
                            [&](const ThreadInfo& t) { return t.tid == tid; }))
        << "thread " << tid << " is missing from the thread list";
  }
  EXPECT_EQ(p.counters.nvtx_unmatched_pops, 0u);
  EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, 0u);
}

// 64 threads recording at once, started together: every thread's ranges are all there, and each
// round's outer range holds its own two inner ranges (pairing stayed per thread).
TEST(Lifecycle, SixtyFourConcurrentThreadsWithNvtxRangesLoseNothing) {
  const std::string dir = testing::MakeTempDir("threads_concurrent");
  const ProcessResult r = RunProcess({kProg, "threads-concurrent", "64"}, InjectInto(dir));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const long distinct = Printed(r.out, "threads-concurrent", "distinct_tids");
  const long rounds = Printed(r.out, "threads-concurrent", "rounds");
  ASSERT_EQ(distinct, 64) << r.out;
  ASSERT_GT(rounds, 0) << r.out;
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  const Profile p = Load(dir + "/" + dumps[0]);
  EXPECT_EQ(p.counters.host_events_dropped, 0u);
  EXPECT_EQ(p.counters.nvtx_unmatched_pops, 0u);
  EXPECT_EQ(p.counters.nvtx_ranges_open_at_end, 0u);
  auto by_tid = [](const std::vector<HostRange>& ranges) {
    std::map<uint32_t, std::vector<HostRange>> out;
    for (const HostRange& x : ranges) out[x.tid].push_back(x);
    for (auto& [tid, v] : out) {
      std::sort(v.begin(), v.end(), [](const HostRange& a, const HostRange& b) {
        return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
      });
    }
    return out;
  };
  auto outers = by_tid(RangesNamed(p, "conc-outer"));
  auto inners = by_tid(RangesNamed(p, "conc-inner"));
  std::map<uint32_t, std::vector<uint64_t>> marks;
  for (const HostMark& m : p.marks) {
    if (Str(p, m.name) == "conc-mark") marks[m.tid].push_back(m.ts_ns);
  }
  ASSERT_EQ(outers.size(), 64u);
  ASSERT_EQ(inners.size(), 64u);
  ASSERT_EQ(marks.size(), 64u);
  const size_t n = static_cast<size_t>(rounds);
  for (auto& [tid, o] : outers) {
    const std::vector<HostRange>& in = inners[tid];
    std::vector<uint64_t>& mk = marks[tid];
    std::sort(mk.begin(), mk.end());
    ASSERT_EQ(o.size(), n) << "thread " << tid;
    ASSERT_EQ(in.size(), 2 * n) << "thread " << tid;
    ASSERT_EQ(mk.size(), n) << "thread " << tid;
    for (size_t i = 0; i < n; ++i) {
      const HostRange& a = in[2 * i];
      const HostRange& b = in[2 * i + 1];
      EXPECT_TRUE(o[i].start_ns <= a.start_ns && a.end_ns <= b.start_ns &&
                  b.end_ns <= o[i].end_ns)
          << "thread " << tid << " round " << i << ": the inner ranges are not nested in order";
      EXPECT_TRUE(a.start_ns <= mk[i] && mk[i] <= a.end_ns)
          << "thread " << tid << " round " << i << ": the mark is not inside the first inner";
      if (i + 1 < n) {
        EXPECT_LE(o[i].end_ns, o[i + 1].start_ns) << "thread " << tid;
      }
    }
  }
}

// The same churn under schedule windows (10 steps each, a wave of threads per step): the window
// thread cuts at every window end while slots change hands, and the windows together hold every
// thread's range and mark.
TEST(Lifecycle, ScheduleWindowsOverTenThousandThreadsLoseNothing) {
  const std::string dir = testing::MakeTempDir("threads_churn_windows");
  ProcessOptions o = InjectInto(dir);
  o.set_env["GPROF_SCHEDULE"] = "active=10";
  const ProcessResult r = RunProcess({kProg, "threads-churn", "10000", "steps"}, o);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const long distinct = Printed(r.out, "threads-churn", "distinct_tids");
  ASSERT_GT(distinct, 0) << r.out;
  const auto dumps = Dumps(dir);
  // 100 steps: ten full windows, and the partial one that the last step mark opens.
  ASSERT_GE(dumps.size(), 10u) << Describe(r);
  size_t ranges = 0, marks = 0;
  uint64_t dropped = 0;
  std::set<uint32_t> tids;
  for (const std::string& d : dumps) {
    EXPECT_NE(d.find(".cycle"), std::string::npos) << d;
    const Profile p = Load(dir + "/" + d);
    const auto churn = RangesNamed(p, "churn");
    ranges += churn.size();
    marks += CountMarks(p, "churn-mark");
    dropped += p.counters.host_events_dropped;
    const std::set<uint32_t> t = TidsOf(churn);
    tids.insert(t.begin(), t.end());
  }
  EXPECT_EQ(ranges, 10000u);
  EXPECT_EQ(marks, 10000u);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(tids.size(), static_cast<size_t>(distinct));
}

// The flushes while the program's threads still record (scripts/sanitize runs these under TSan
// too): the exit flush (atexit, on the main thread), the signal flush (the flush thread, woken by
// a handler on whichever thread took the signal) and the signal flush with schedule windows (the
// window thread stopped and its last window saved). Each dump is written, and the dumps hold
// ranges of every thread; a thread inside a range when collection stopped leaves it open.
std::set<uint32_t> BusyTids(const std::string& dir, const std::vector<std::string>& dumps) {
  std::set<uint32_t> tids;
  for (const std::string& d : dumps) {
    const Profile p = Load(dir + "/" + d);
    const std::set<uint32_t> t = TidsOf(RangesNamed(p, "busy"));
    tids.insert(t.begin(), t.end());
    EXPECT_EQ(p.counters.host_events_dropped, 0u) << d;
    EXPECT_LE(p.counters.nvtx_ranges_open_at_end, 8u) << d;
  }
  return tids;
}

TEST(Lifecycle, ExitFlushWhileThreadsStillRecordHasEveryThread) {
  const std::string dir = testing::MakeTempDir("busy_exit");
  const ProcessResult r = RunProcess({kProg, "threads-busy", "8", "exit"}, InjectInto(dir));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ASSERT_NE(r.out.find("READY threads=8"), std::string::npos) << Describe(r);
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  EXPECT_EQ(BusyTids(dir, dumps).size(), 8u);
}

TEST(Lifecycle, SignalFlushWhileThreadsStillRecordHasEveryThread) {
  const std::string dir = testing::MakeTempDir("busy_signal");
  ProcessOptions o = InjectInto(dir);
  o.signal_after = std::chrono::milliseconds(2000);
  o.signal_to_send = SIGTERM;
  o.timeout = std::chrono::milliseconds(40000);
  const ProcessResult r = RunProcess({kProg, "threads-busy", "8", "wait"}, o);
  ASSERT_NE(r.out.find("READY threads=8"), std::string::npos) << Describe(r);
  EXPECT_TRUE(r.signaled && r.term_signal == SIGTERM) << Describe(r);
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << Describe(r);
  EXPECT_EQ(BusyTids(dir, dumps).size(), 8u);
}

TEST(Lifecycle, SignalDuringScheduleWindowsWhileThreadsRecordHasEveryThread) {
  const std::string dir = testing::MakeTempDir("busy_signal_windows");
  ProcessOptions o = InjectInto(dir);
  o.set_env["GPROF_SCHEDULE"] = "wait=2,active=3";
  o.signal_after = std::chrono::milliseconds(2000);
  o.signal_to_send = SIGTERM;
  o.timeout = std::chrono::milliseconds(40000);
  const ProcessResult r = RunProcess({kProg, "threads-busy", "8", "wait", "steps"}, o);
  ASSERT_NE(r.out.find("READY threads=8"), std::string::npos) << Describe(r);
  EXPECT_TRUE(r.signaled && r.term_signal == SIGTERM) << Describe(r);
  const auto dumps = Dumps(dir);
  ASSERT_GE(dumps.size(), 1u) << Describe(r);
  for (const std::string& d : dumps) EXPECT_NE(d.find(".cycle"), std::string::npos) << d;
  EXPECT_EQ(BusyTids(dir, dumps).size(), 8u);
}

TEST(Lifecycle, LdPreloadModeRunsTheSameSingleInit) {
  const std::string dir = testing::MakeTempDir("preload");
  ProcessOptions o = InjectInto(dir);
  o.unset_env.erase(std::remove(o.unset_env.begin(), o.unset_env.end(), "LD_PRELOAD"),
                    o.unset_env.end());
  o.set_env["LD_PRELOAD"] = kLib;
  const ProcessResult r = RunProcess({kProg, "basic"}, o);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << "one init, one dump";
  const Profile p = Load(dir + "/" + dumps[0]);
  EXPECT_EQ(RangesNamed(p, "outer").size(), 2u);
  EXPECT_EQ(RangesNamed(p, "inner").size(), 2u);

  const std::string quiet_dir = testing::MakeTempDir("preload_quiet");
  o.set_env["GPROF_OUTPUT_DIR"] = quiet_dir;
  const ProcessResult q = RunProcess({kProg, "no-nvtx"}, o);
  EXPECT_EQ(q.exit_code, 0) << Describe(q);
  EXPECT_EQ(q.err, "");
  EXPECT_TRUE(Dumps(quiet_dir).empty());
}

TEST(Lifecycle, BadConfigValueWarnsAndKeepsProfiling) {
  const std::string dir = testing::MakeTempDir("bad_config");
  ProcessOptions o = InjectInto(dir);
  o.set_env["GPROF_HOST_BUFFER_MIB"] = "lots";
  const ProcessResult r = RunProcess({kProg, "basic"}, o);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.err.find("GPROF_HOST_BUFFER_MIB"), std::string::npos) << r.err;
  ASSERT_EQ(Dumps(dir).size(), 1u);
}

}  // namespace
}  // namespace gprof
