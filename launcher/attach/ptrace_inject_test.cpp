// Process tests of the ptrace injector (ptrace_inject.h). attach_target (tests/attach) runs as a
// grandchild (so that, as for `gprof-run attach PID`, it is not the injector's child), is driven
// through its stdin, gets attach_probe injected while it sits in read(2) or nanosleep(2), and its
// whole transcript (stdout, stderr, exit status) is compared with a run without an injection. What
// the call did is read from the probe's file and the target's own output, not taken from the
// injector's answer. Every test skips when this environment does not allow ptrace.
#include "launcher/attach/ptrace_inject.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/ptrace_available.h"

extern char** environ;

namespace gprof {
namespace {

using testing::PtraceUnavailable;

constexpr char kEntry[] = "gprof_attach_probe_entry";
constexpr int kTimeoutMs = 10000;
constexpr int kSysRead = 0;
constexpr int kSysClockNanosleep = 230;  // glibc's nanosleep()
constexpr auto kWait = std::chrono::seconds(10);

std::string ProbePath() {
  char resolved[PATH_MAX];
  return ::realpath(GPROF_ATTACH_PROBE, resolved) != nullptr ? resolved : GPROF_ATTACH_PROBE;
}

// "" when ptrace works here, otherwise why not (the tests then skip with it).
#define SKIP_WITHOUT_PTRACE()                                                   \
  do {                                                                          \
    if (const std::string why = PtraceUnavailable(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

struct Transcript {
  std::string out;
  std::string err;
  int status = -1;  // waitpid status of the target; -1: it did not end in time
};

bool operator==(const Transcript& a, const Transcript& b) {
  return a.out == b.out && a.err == b.err && a.status == b.status;
}

std::ostream& operator<<(std::ostream& os, const Transcript& t) {
  return os << "{status " << t.status << ", out:\n" << t.out << "err:\n" << t.err << "}";
}

// A test program with pipes on its stdin, stdout and stderr. By default it is started through an
// intermediate process that waits for it and passes its status back, so that it is not our child.
class Target {
 public:
  explicit Target(const std::string& exe = GPROF_ATTACH_TARGET, bool our_child = false) {
    int in[2], out[2], err[2], report[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
        ::pipe2(report, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2: " << std::strerror(errno);
      return;
    }
    // The targets are plain programs: not with the ASan runtime that scripts/sanitize preloads.
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env.emplace_back(*e);
    }
    std::vector<char*> envp;
    for (std::string& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exe_copy = exe;
    char* argv[] = {exe_copy.data(), nullptr};
    auto exec_target = [&] {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::execve(argv[0], argv, envp.data());
      ::_exit(127);
    };
    const pid_t first = ::fork();
    if (first == 0) {
      if (our_child) exec_target();
      const pid_t target = ::fork();
      if (target == 0) exec_target();
      // The intermediate: hold no pipe end the test waits on, report the pid, then the status.
      for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], report[0]}) ::close(fd);
      int status = -1;
      (void)!::write(report[1], &target, sizeof(target));
      while (::waitpid(target, &status, 0) < 0 && errno == EINTR) {
      }
      (void)!::write(report[1], &status, sizeof(status));
      ::_exit(0);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    ::close(report[1]);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
    if (our_child) {
      ::close(report[0]);
      pid_ = first;
    } else {
      report_ = report[0];
      middle_ = first;
      if (::read(report_, &pid_, sizeof(pid_)) != sizeof(pid_)) ADD_FAILURE() << "no target pid";
    }
  }
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;
  ~Target() {
    if (!ended_ && pid_ > 0) {
      ::kill(pid_, SIGKILL);
      if (middle_ == 0) ::waitpid(pid_, nullptr, __WALL);
    }
    if (middle_ > 0) ::waitpid(middle_, nullptr, 0);
    for (int fd : {in_, out_, err_, report_}) {
      if (fd >= 0) ::close(fd);
    }
  }

  pid_t pid() const { return pid_; }

  void Send(const std::string& line) {
    const std::string text = line + "\n";
    ASSERT_EQ(::write(in_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }

  // The next line of stdout (it stays in the transcript), or "<timeout>".
  std::string NextLine() {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    for (;;) {
      const size_t nl = transcript_.out.find('\n', consumed_);
      if (nl != std::string::npos) {
        std::string line = transcript_.out.substr(consumed_, nl - consumed_);
        consumed_ = nl + 1;
        return line;
      }
      if (!ReadSome(out_, &transcript_.out, deadline)) return "<timeout>";
    }
  }

  // Waits until the target's leader sits in syscall `nr` (/proc/PID/syscall's first field).
  bool WaitInSyscall(int nr) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    const std::string want = std::to_string(nr) + " ";
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string now =
          gprof::testing::ReadFile("/proc/" + std::to_string(pid_) + "/syscall");
      if (now.compare(0, want.size(), want) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }

  // Reads stdout and stderr to their end and waits for the target's status.
  Transcript Finish() {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    ::close(in_);
    in_ = -1;
    bool out_open = true, err_open = true;
    while (out_open || err_open) {
      pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
      const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            deadline - std::chrono::steady_clock::now())
                                            .count());
      if (left <= 0 || ::poll(fds, 2, left) <= 0) break;
      char buf[4096];
      if (out_open && fds[0].revents != 0) {
        const ssize_t n = ::read(out_, buf, sizeof(buf));
        if (n <= 0) out_open = false; else transcript_.out.append(buf, static_cast<size_t>(n));
      }
      if (err_open && fds[1].revents != 0) {
        const ssize_t n = ::read(err_, buf, sizeof(buf));
        if (n <= 0) err_open = false; else transcript_.err.append(buf, static_cast<size_t>(n));
      }
    }
    if (out_open || err_open) return transcript_;  // status stays -1
    int status = -1;
    if (middle_ > 0) {
      if (::read(report_, &status, sizeof(status)) != sizeof(status)) status = -1;
    } else {
      ::waitpid(pid_, &status, 0);
    }
    ended_ = status != -1;
    transcript_.status = status;
    return transcript_;
  }

 private:
  static bool ReadSome(int fd, std::string* into, std::chrono::steady_clock::time_point deadline) {
    const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          deadline - std::chrono::steady_clock::now())
                                          .count());
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) return false;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return false;
    into->append(buf, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  pid_t middle_ = 0;
  int in_ = -1, out_ = -1, err_ = -1, report_ = -1;
  bool ended_ = false;
  size_t consumed_ = 0;
  Transcript transcript_;
};

// attach_target through `commands` (each answers one line; "quit" ends it), no injection.
Transcript RunWithout(const std::vector<std::string>& commands,
                      const std::vector<int>& signal_after = {}) {
  Target t;
  EXPECT_EQ(t.NextLine(), "attach_target ready");
  for (size_t i = 0; i < commands.size(); ++i) {
    t.Send(commands[i]);
    if (commands[i] == "quit") break;
    t.NextLine();
    if (i < signal_after.size() && signal_after[i] != 0) {
      EXPECT_TRUE(t.WaitInSyscall(kSysRead));
      ::kill(t.pid(), signal_after[i]);
    }
  }
  return t.Finish();
}

std::map<std::string, std::string> ReadKeyValues(const std::string& path) {
  std::map<std::string, std::string> kv;
  std::istringstream in(gprof::testing::ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

// How many times the probe is mapped at file offset 0 (once per dlopen that really loaded it).
int ProbeLoads(pid_t pid) {
  std::istringstream in(gprof::testing::ReadFile("/proc/" + std::to_string(pid) + "/maps"));
  const std::string probe = ProbePath();
  std::string line;
  int loads = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode >> path;
    if (path == probe && std::stoull(offset, nullptr, 16) == 0) ++loads;
  }
  return loads;
}

bool WaitForFile(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  struct stat st {};
  while (::stat(path.c_str(), &st) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// The leader's registers and the bytes from its red zone up, seen by a tracer of our own.
struct Snapshot {
  user_regs_struct regs{};
  user_fpregs_struct fpregs{};
  std::string stack;  // [rsp - 128, rsp + 4096), or to the end of the stack
};

bool TakeSnapshot(pid_t pid, Snapshot* s) {
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) return false;
  int status = 0;
  bool ok = ::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr) == 0 &&
            ::waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status) &&
            (status >> 16) == PTRACE_EVENT_STOP &&
            ::ptrace(PTRACE_GETREGS, pid, nullptr, &s->regs) == 0 &&
            ::ptrace(PTRACE_GETFPREGS, pid, nullptr, &s->fpregs) == 0;
  if (ok) {
    const int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
    s->stack.resize(128 + 4096);
    // Near the top of the stack the read stops at its end: compare what there is.
    const ssize_t n = mem < 0 ? -1
                              : ::pread(mem, s->stack.data(), s->stack.size(),
                                        static_cast<off_t>(s->regs.rsp - 128));
    ok = n > 128;
    s->stack.resize(n > 0 ? static_cast<size_t>(n) : 0);
    if (mem >= 0) ::close(mem);
  }
  ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
  return ok;
}

class PtraceInject : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_PTRACE();
    dir_ = gprof::testing::MakeTempDir("ptrace_inject");
  }
  std::string dir_;
};

TEST_F(PtraceInject, TargetBlockedInReadRunsTheEntryAndPrintsTheSameAsWithoutInjection) {
  const std::vector<std::string> commands = {"work 3", "work 4", "quit"};
  const Transcript without = RunWithout(commands);
  ASSERT_TRUE(WIFEXITED(without.status) && WEXITSTATUS(without.status) == 0) << without;

  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  t.Send(commands[0]);
  t.NextLine();
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  EXPECT_EQ(AttachRefusal(t.pid()), "");
  const std::string file = dir_ + "/probe.txt";
  const InjectOutcome got = InjectAndCall(t.pid(), ProbePath(), kEntry, "write:" + file, kTimeoutMs);
  ASSERT_TRUE(got.ok) << got.error;
  const auto kv = ReadKeyValues(file);
  EXPECT_EQ(kv.at("pid"), std::to_string(t.pid()));  // it ran inside the target
  EXPECT_EQ(kv.at("call"), "1");
  EXPECT_EQ(kv.at("arg"), "write:" + file);
  EXPECT_EQ(got.entry_rc, 1000 + std::stoi(kv.at("call")));
  t.Send(commands[1]);
  t.NextLine();
  t.Send(commands[2]);
  EXPECT_EQ(t.Finish(), without);
}

TEST_F(PtraceInject, TargetInNanosleepSleepsItsFullTimeAndPrintsTheSameAsWithoutInjection) {
  const std::vector<std::string> commands = {"sleep 1000", "work 2", "quit"};
  const Transcript without = RunWithout(commands);
  ASSERT_NE(without.out.find("slept 1000 ok"), std::string::npos) << without;

  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  t.Send(commands[0]);
  ASSERT_TRUE(t.WaitInSyscall(kSysClockNanosleep));
  const std::string file = dir_ + "/probe.txt";
  const InjectOutcome got = InjectAndCall(t.pid(), ProbePath(), kEntry, "write:" + file, kTimeoutMs);
  ASSERT_TRUE(got.ok) << got.error;
  EXPECT_EQ(ReadKeyValues(file).at("pid"), std::to_string(t.pid()));
  EXPECT_EQ(t.NextLine(), "slept 1000 ok");  // the target's own clock: not cut short, no EINTR
  t.Send(commands[1]);
  t.NextLine();
  t.Send(commands[2]);
  EXPECT_EQ(t.Finish(), without);
}

TEST_F(PtraceInject, RegistersFpRegistersAndLiveStackAreTheSameAfterTheInjection) {
  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  t.Send("work 1");
  t.NextLine();
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  Snapshot before, after;
  ASSERT_TRUE(TakeSnapshot(t.pid(), &before));
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  const InjectOutcome got =
      InjectAndCall(t.pid(), ProbePath(), kEntry, "write:" + dir_ + "/probe.txt", kTimeoutMs);
  ASSERT_TRUE(got.ok) << got.error;
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  ASSERT_TRUE(TakeSnapshot(t.pid(), &after));
  EXPECT_EQ(after.regs.rip, before.regs.rip);
  EXPECT_EQ(after.regs.rsp, before.regs.rsp);
  EXPECT_EQ(after.regs.rax, before.regs.rax);
  EXPECT_EQ(after.regs.orig_rax, before.regs.orig_rax);
  EXPECT_EQ(std::memcmp(&after.regs, &before.regs, sizeof(before.regs)), 0);
  EXPECT_EQ(std::memcmp(&after.fpregs, &before.fpregs, sizeof(before.fpregs)), 0);
  EXPECT_TRUE(after.stack == before.stack) << "the red zone or the frames above it changed";
}

TEST_F(PtraceInject, InjectingTwiceCallsTheEntryTwiceAndMapsTheLibraryOnce) {
  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  EXPECT_EQ(ProbeLoads(t.pid()), 0);
  const std::string first = dir_ + "/first.txt", second = dir_ + "/second.txt";
  const InjectOutcome a = InjectAndCall(t.pid(), ProbePath(), kEntry, "write:" + first, kTimeoutMs);
  ASSERT_TRUE(a.ok) << a.error;
  EXPECT_EQ(ProbeLoads(t.pid()), 1);
  const InjectOutcome b = InjectAndCall(t.pid(), ProbePath(), kEntry, "write:" + second, kTimeoutMs);
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_EQ(ProbeLoads(t.pid()), 1);
  EXPECT_EQ(ReadKeyValues(first).at("call"), "1");
  EXPECT_EQ(ReadKeyValues(second).at("call"), "2");  // the same loaded copy counted on
  EXPECT_EQ(a.entry_rc, 1001);
  EXPECT_EQ(b.entry_rc, 1002);
  t.Send("quit");
  const Transcript end = t.Finish();
  EXPECT_TRUE(WIFEXITED(end.status) && WEXITSTATUS(end.status) == 0) << end;
  EXPECT_EQ(end.err, "");
}

TEST_F(PtraceInject, OtherThreadsKeepRunningWhileTheEntryRuns) {
  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  t.Send("thread");
  ASSERT_EQ(t.NextLine(), "thread started");
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  const std::string file = dir_ + "/ticks.txt";
  const InjectOutcome got = InjectAndCall(t.pid(), ProbePath(), kEntry, "ticks:" + file, kTimeoutMs);
  ASSERT_TRUE(got.ok) << got.error;
  const auto kv = ReadKeyValues(file);
  ASSERT_TRUE(kv.count("before") && kv.count("after")) << gprof::testing::ReadFile(file);
  // The ticker thread counted while the leader slept 100 ms inside the probe.
  EXPECT_GT(std::stoull(kv.at("after")), std::stoull(kv.at("before")));
  t.Send("quit");
  EXPECT_EQ(t.Finish().err, "");
}

TEST_F(PtraceInject, SigusrOneSentDuringTheCallReachesTheTargetsHandler) {
  const std::vector<std::string> commands = {"work 1", "work 2", "quit"};
  const Transcript without = RunWithout(commands, {SIGUSR1});
  ASSERT_NE(without.out.find("usr1=1"), std::string::npos) << without;

  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  t.Send(commands[0]);
  t.NextLine();
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  const std::string file = dir_ + "/probe.txt";
  InjectOutcome got;
  std::thread injector([&] {
    got = InjectAndCall(t.pid(), ProbePath(), kEntry, "sleep:1000:" + file, kTimeoutMs);
  });
  const bool started = WaitForFile(file + ".started");
  ::kill(t.pid(), SIGUSR1);
  injector.join();
  ASSERT_TRUE(started);
  ASSERT_TRUE(got.ok) << got.error;
  EXPECT_EQ(ReadKeyValues(file).at("call"), "1");
  t.Send(commands[1]);
  t.NextLine();
  t.Send(commands[2]);
  EXPECT_EQ(t.Finish(), without);  // usr1=1: delivered once, not swallowed, not doubled
}

TEST_F(PtraceInject, SigtermSentDuringTheCallEndsTheTargetAndTheErrorSaysSo) {
  Target t;  // not our child: the injector must hand its end on to its parent
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  const std::string file = dir_ + "/probe.txt";
  InjectOutcome got;
  std::thread injector([&] {
    got = InjectAndCall(t.pid(), ProbePath(), kEntry, "sleep:3000:" + file, kTimeoutMs);
  });
  const bool started = WaitForFile(file + ".started");
  ::kill(t.pid(), SIGTERM);
  injector.join();
  ASSERT_TRUE(started);
  EXPECT_FALSE(got.ok);
  EXPECT_NE(got.error.find("killed by signal 15"), std::string::npos) << got.error;
  const Transcript end = t.Finish();  // the intermediate parent got the status
  EXPECT_TRUE(WIFSIGNALED(end.status) && WTERMSIG(end.status) == SIGTERM) << end;
}

TEST_F(PtraceInject, TargetThatExitsInsideTheEntryIsReportedAndItsParentGetsTheStatus) {
  for (const bool our_child : {false, true}) {
    SCOPED_TRACE(our_child ? "our child" : "not our child");
    Target t(GPROF_ATTACH_TARGET, our_child);
    ASSERT_EQ(t.NextLine(), "attach_target ready");
    ASSERT_TRUE(t.WaitInSyscall(kSysRead));
    const InjectOutcome got = InjectAndCall(t.pid(), ProbePath(), kEntry, "exit:7", kTimeoutMs);
    EXPECT_FALSE(got.ok);
    EXPECT_NE(got.error.find("exited with status 7"), std::string::npos) << got.error;
    const Transcript end = t.Finish();
    EXPECT_TRUE(WIFEXITED(end.status) && WEXITSTATUS(end.status) == 7) << end;
  }
}

TEST_F(PtraceInject, CallThatOutlivesTheTimeoutIsAbandonedAndTheTargetContinues) {
  const std::vector<std::string> commands = {"work 1", "sleep 500", "work 2", "quit"};
  const Transcript without = RunWithout(commands);
  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  t.Send(commands[0]);
  t.NextLine();
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  const InjectOutcome in_read =
      InjectAndCall(t.pid(), ProbePath(), kEntry, "sleep:5000:" + dir_ + "/a.txt", 300);
  EXPECT_FALSE(in_read.ok);
  EXPECT_NE(in_read.error.find("did not return within 300 ms"), std::string::npos) << in_read.error;
  t.Send(commands[1]);
  ASSERT_TRUE(t.WaitInSyscall(kSysClockNanosleep));
  // In nanosleep, with the probe's own nanosleep interrupted on top of it.
  const InjectOutcome in_sleep =
      InjectAndCall(t.pid(), ProbePath(), kEntry, "sleep:5000:" + dir_ + "/b.txt", 300);
  EXPECT_FALSE(in_sleep.ok);
  EXPECT_EQ(t.NextLine(), "slept 500 ok");
  t.Send(commands[2]);
  t.NextLine();
  t.Send(commands[3]);
  EXPECT_EQ(t.Finish(), without);
}

TEST_F(PtraceInject, MissingLibraryFailsWithTheTargetsDlerrorText) {
  const std::string missing = dir_ + "/no_such_library.so";
  ASSERT_EQ(::dlopen(missing.c_str(), RTLD_NOW), nullptr);
  const std::string expected = ::dlerror();  // what glibc says, asked here
  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  const InjectOutcome got = InjectAndCall(t.pid(), missing, kEntry, "write:x", kTimeoutMs);
  EXPECT_FALSE(got.ok);
  EXPECT_NE(got.error.find(expected), std::string::npos) << got.error << "\nexpected: " << expected;
  t.Send("quit");
  const Transcript end = t.Finish();
  EXPECT_TRUE(WIFEXITED(end.status) && WEXITSTATUS(end.status) == 0) << end;
}

TEST_F(PtraceInject, MissingEntryFailsWithTheTargetsDlerrorText) {
  void* here = ::dlopen(ProbePath().c_str(), RTLD_NOW);
  ASSERT_NE(here, nullptr) << ::dlerror();
  ASSERT_EQ(::dlsym(here, "gprof_no_such_entry"), nullptr);
  const std::string expected = ::dlerror();
  ::dlclose(here);
  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  const InjectOutcome got =
      InjectAndCall(t.pid(), ProbePath(), "gprof_no_such_entry", "write:x", kTimeoutMs);
  EXPECT_FALSE(got.ok);
  EXPECT_NE(got.error.find(expected), std::string::npos) << got.error << "\nexpected: " << expected;
  t.Send("quit");
  EXPECT_EQ(t.Finish().err, "");
}

TEST_F(PtraceInject, DeadPidIsRefused) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::string expected =
      "no process with pid " + std::to_string(child) + " (it has exited, or never existed)";
  EXPECT_EQ(AttachRefusal(child), expected);
  const InjectOutcome got = InjectAndCall(child, ProbePath(), kEntry, "write:x", kTimeoutMs);
  EXPECT_FALSE(got.ok);
  EXPECT_EQ(got.error, expected);
}

TEST_F(PtraceInject, ProcessOfAnotherUidIsRefusedLikeTheKernelRefusesIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the attempt as uid 65534";
  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    std::string report = AttachRefusal(t.pid()) + "\n";
    report += InjectAndCall(t.pid(), ProbePath(), kEntry, "write:/tmp/never", kTimeoutMs).error + "\n";
    const int seize = ::ptrace(PTRACE_SEIZE, t.pid(), nullptr, nullptr) == 0 ? 0 : errno;
    report += std::to_string(seize) + "\n";
    (void)!::write(fds[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) report.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "setuid failed";
  std::istringstream lines(report);
  std::string refusal, inject_error, seize_errno;
  std::getline(lines, refusal);
  std::getline(lines, inject_error);
  std::getline(lines, seize_errno);
  EXPECT_EQ(seize_errno, std::to_string(EPERM));  // the kernel does refuse
  EXPECT_EQ(refusal, "process " + std::to_string(t.pid()) +
                         " runs as uid 0, gid 0 and gprof-run as uid 65534, gid 65534 without "
                         "CAP_SYS_PTRACE: run gprof-run attach as that user, or as root / with "
                         "CAP_SYS_PTRACE");
  EXPECT_EQ(inject_error, refusal);
  t.Send("quit");
  EXPECT_EQ(t.Finish().err, "");
}

TEST_F(PtraceInject, StaticallyLinkedTargetIsRefusedAndLeftAlone) {
  const std::string exe = GPROF_ATTACH_STATIC;
  if (exe.empty()) GTEST_SKIP() << "this toolchain cannot link a static program (-static failed)";
  Target t(exe);
  ASSERT_EQ(t.NextLine(), "attach_static ready");
  const std::string expected =
      "process " + std::to_string(t.pid()) +
      " has no glibc libc.so.6 mapped (statically linked, or another C library such as musl): "
      "gprof-run attach needs a dynamically linked glibc program; start it under gprof-run "
      "instead";
  EXPECT_EQ(AttachRefusal(t.pid()), expected);
  const InjectOutcome got = InjectAndCall(t.pid(), ProbePath(), kEntry, "write:x", kTimeoutMs);
  EXPECT_FALSE(got.ok);
  EXPECT_EQ(got.error, expected);
  t.Send("hello");
  EXPECT_EQ(t.NextLine(), "echo hello");
  t.Send("quit");
  const Transcript end = t.Finish();
  EXPECT_TRUE(WIFEXITED(end.status) && WEXITSTATUS(end.status) == 0) << end;
  EXPECT_EQ(end.out, "attach_static ready\necho hello\nattach_static done\n");
}

TEST_F(PtraceInject, StoppedAndAlreadyTracedTargetsAreRefused) {
  Target t;
  ASSERT_EQ(t.NextLine(), "attach_target ready");
  ASSERT_TRUE(t.WaitInSyscall(kSysRead));
  ASSERT_EQ(::ptrace(PTRACE_SEIZE, t.pid(), nullptr, nullptr), 0);
  EXPECT_EQ(AttachRefusal(t.pid()), "process " + std::to_string(t.pid()) +
                                        " is already traced by process " +
                                        std::to_string(::getpid()) +
                                        " (a debugger or another profiler): detach that first");
  int status = 0;
  ASSERT_EQ(::ptrace(PTRACE_INTERRUPT, t.pid(), nullptr, nullptr), 0);
  ASSERT_EQ(::waitpid(t.pid(), &status, __WALL), t.pid());
  ASSERT_EQ(::ptrace(PTRACE_DETACH, t.pid(), nullptr, nullptr), 0);

  ASSERT_EQ(::kill(t.pid(), SIGSTOP), 0);
  const std::string stopped = "process " + std::to_string(t.pid()) +
                              " is stopped (job control): resume it with `kill -CONT " +
                              std::to_string(t.pid()) + "` and try again";
  std::string refusal;
  for (int i = 0; i < 1000 && refusal != stopped; ++i) {
    refusal = AttachRefusal(t.pid());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(refusal, stopped);
  ASSERT_EQ(::kill(t.pid(), SIGCONT), 0);
  t.Send("quit");
  const Transcript end = t.Finish();
  EXPECT_TRUE(WIFEXITED(end.status) && WEXITSTATUS(end.status) == 0) << end;
}

TEST_F(PtraceInject, NonX86TargetRefusal) {
  GTEST_SKIP() << "no non-x86-64 program can run here (no 32-bit multilib or foreign binaries in "
                  "this image); the check reads /proc/PID/exe's ELF class and e_machine";
}

}  // namespace
}  // namespace gprof
