// --start-paused sessions end to end, on the CUDA/CUPTI stand-in: examples/cuda/service runs
// under `gprof-run --start-paused` while each test drives `gprof-run sessions`, `capture`,
// `pause` and `resume` from other processes. Each capture is checked against what the service
// itself did (its request#N ranges and its own request count), not against gprof-run's numbers.
// Built twice: sessions_test (label standin) proves the collector and the launcher agree with the
// stand-in; sessions_gpu_test (label gpu, GPROF_SESSIONS_ON_GPU) runs the same checks with the
// real driver and CUPTI and skips where cuInit fails.
//
// Every test points XDG_RUNTIME_DIR at its own directory, so its sockets are its own.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "model/dump.h"
#include "tests/support/gpu_available.h"
#include "tests/support/process.h"
#include "tests/support/ptrace_available.h"

namespace gprof::testing {
namespace {

namespace fs = std::filesystem;

#ifdef GPROF_SESSIONS_ON_GPU
constexpr bool kOnGpu = true;
#else
constexpr bool kOnGpu = false;
#endif

std::string StandInCupti() { return StandInLibDir() + "/libcupti.so.13"; }

// The real-GPU twin skips where there is no GPU.
#define SKIP_WITHOUT_THE_DEVICE()                                      \
  do {                                                                 \
    std::string why_;                                                  \
    if (kOnGpu && !GpuAvailable(&why_)) {                              \
      GTEST_SKIP() << "no usable GPU: " << why_;                       \
    }                                                                  \
  } while (0)

// The pid of the process whose command line starts with `exe` (any, when "") and holds `arg`,
// waiting up to 10 s for it to appear; -1 when none does.
long PidWithArgument(const std::string& arg, const std::string& exe = "") {
  for (int i = 0; i < 1000; ++i) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string cmd = ReadFile("/proc/" + name + "/cmdline");
      if (cmd.find(arg) != std::string::npos && cmd.rfind(exe, 0) == 0) return std::stol(name);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// One service under gprof-run --start-paused, run on a thread of the test.
class Service {
 public:
  // `under_gprof`: started by gprof-run --start-paused `flags`; else started plainly (for attach).
  // `nvtx_late`: the service makes no NVTX call until nvtx_file() exists.
  // `service_flags` go before the service's own arguments (--sync-every N, --cuda-after FILE).
  Service(const std::string& tag, const std::vector<std::string>& flags,
          const std::map<std::string, std::string>& env = {}, bool under_gprof = true,
          bool nvtx_late = false, const std::vector<std::string>& service_flags = {}) {
    root_ = MakeTempDir(tag);
    out_ = root_ + "/out";
    xdg_ = root_ + "/xdg";
    fs::create_directories(xdg_);
    ::chmod(xdg_.c_str(), 0700);
    stop_ = root_ + "/stop";
    std::vector<std::string> argv;
    if (under_gprof) {
      argv = {LauncherPath(), "-o", out_};
      if (!kOnGpu) argv.insert(argv.end(), {"--cupti-lib", StandInCupti()});
      argv.push_back("--start-paused");
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.push_back("--");
    }
    argv.push_back(GPROF_SERVICE_PROG);
    argv.insert(argv.end(), service_flags.begin(), service_flags.end());
    argv.insert(argv.end(), {stop_, "200"});
    if (nvtx_late) argv.push_back(nvtx_file());
    ProcessOptions o = Options();
    for (const auto& [k, v] : env) o.set_env[k] = v;
    o.timeout = std::chrono::milliseconds(120000);
    thread_ = std::thread([this, argv, o] { result_ = RunProcess(argv, o); });
  }
  ~Service() { Stop(); }
  ProcessOptions Options() const {
    ProcessOptions o;
    o.unset_env = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GPROF_OUTPUT_DIR",
                   "GPROF_CUPTI_LIB", "GPROF_SCHEDULE", "GPROF_LOG_LEVEL", "LD_PRELOAD",
                   "GPROF_START_PAUSED", "GPROF_SESSION"};
    if (!kOnGpu) o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
    o.set_env["XDG_RUNTIME_DIR"] = xdg_;
    return o;
  }
  // Runs gprof-run with `args` as a client of this service's sessions.
  ProcessResult Client(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {LauncherPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, Options());
  }
  // Waits until the service's session listens (its first CUDA call starts it).
  long WaitForSession() {
    const std::string dir = xdg_ + "/gprof-run";
    for (int i = 0; i < 1000; ++i) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() > 5 && name.substr(name.size() - 5) == ".sock") {
          return std::stol(name.substr(0, name.size() - 5));
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  // The service's own request count (written every 100 requests).
  long Requests() const {
    const std::string text = ReadFile(stop_ + ".count");
    return text.rfind("requests=", 0) == 0 ? std::stol(text.substr(9)) : 0;
  }
  void WaitForRequests(long n) const {
    for (int i = 0; i < 2000 && Requests() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  const ProcessResult& Stop() {
    if (thread_.joinable()) {
      std::FILE* f = std::fopen(stop_.c_str(), "w");
      if (f != nullptr) std::fclose(f);
      thread_.join();
    }
    return result_;
  }
  // The service's pid once it runs (its count file is written by it; /proc tells its pid).
  long PlainPid() const { return PidWithArgument(stop_, GPROF_SERVICE_PROG); }
  std::string nvtx_file() const { return root_ + "/nvtx"; }
  const std::string& out() const { return out_; }
  const std::string& xdg() const { return xdg_; }

 private:
  std::string root_, out_, xdg_, stop_;
  std::thread thread_;
  ProcessResult result_;
};

Profile ReadProfile(const std::string& path) {
  Profile p;
  std::string error;
  EXPECT_TRUE(ReadDump(path, &p, &error)) << error;
  return p;
}

// The request numbers of the request#N ranges in `p`, sorted.
std::vector<long> RequestNumbers(const Profile& p) {
  std::set<long> n;
  for (const HostRange& r : p.ranges) {
    const std::string name(p.strings.Get(r.name));
    if (name.rfind("request#", 0) == 0) n.insert(std::stol(name.substr(8)));
  }
  return {n.begin(), n.end()};
}

// Sends `bytes` to the socket as a raw client and returns everything the server answers.
std::string RawRequest(const std::string& sock, const std::string& bytes) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    [[maybe_unused]] ssize_t w = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    char buf[512];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return reply;
}

std::string Describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// The service's stdout is the same as without gprof-run, but for its counts.
void ExpectServiceUntouched(const ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.out.rfind("service: requests=", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nGPROF_EXAMPLE_DONE service\n"), std::string::npos) << r.out;
}

// capture --duration by session name: the capture covers exactly that long, holds a run of
// consecutive requests each with its kernel, none lost, and none from before it was asked for.
TEST(Sessions, CaptureByNameHoldsOnlyTheRequestsOfItsInterval) {
  SKIP_WITHOUT_THE_DEVICE();
  Service svc("sessions_duration", {"--session", "svc-a"});
  const long pid = svc.WaitForSession();
  ASSERT_GT(pid, 0) << Describe(svc.Stop());
  svc.WaitForRequests(200);
  const long before = svc.Requests();
  const ProcessResult listed = svc.Client({"sessions"});
  EXPECT_EQ(listed.exit_code, 0) << Describe(listed);
  EXPECT_NE(listed.out.find(std::to_string(pid)), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("svc-a"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("paused"), std::string::npos) << listed.out;
  // Bad requests are answered and closed; the session goes on.
  const std::string sock = svc.xdg() + "/gprof-run/" + std::to_string(pid) + ".sock";
  EXPECT_EQ(RawRequest(sock, "=x\n"), "error\tmessage=malformed request\n");
  EXPECT_EQ(RawRequest(sock, std::string(20000, 'a')), "error\tmessage=request too long\n");
  EXPECT_EQ(RawRequest(sock, "launch\tmissiles=1\n"), "error\tmessage=unknown request 'launch'\n");

  const ProcessResult cap = svc.Client({"capture", "svc-a", "--duration", "300ms", "--quiet"});
  ASSERT_EQ(cap.exit_code, 0) << Describe(cap);
  const long after = svc.Requests();
  const std::string dump = svc.out() + "/service." + std::to_string(pid) + ".capture1.gpdump";
  EXPECT_NE(cap.err.find("capture 1 saved: " + dump), std::string::npos) << cap.err;
  EXPECT_TRUE(fs::exists(svc.out() + "/service." + std::to_string(pid) + ".capture1.table.txt"));
  EXPECT_TRUE(fs::exists(svc.out() + "/service." + std::to_string(pid) + ".capture1.trace.json"));

  const Profile p = ReadProfile(dump);
  EXPECT_EQ(p.info.end_ns - p.info.start_ns, 300'000'000u);  // the cut is exact
  const std::vector<long> reqs = RequestNumbers(p);
  ASSERT_GE(reqs.size(), 10u);  // 300 ms of 200 us requests on the stand-in: hundreds
  EXPECT_EQ(reqs.back() - reqs.front() + 1, static_cast<long>(reqs.size())) << "consecutive";
  // The service's count file lags by at most 100 requests.
  EXPECT_GE(reqs.front(), before);
  EXPECT_LE(reqs.back(), after + 100);
  // Each captured request launched its kernel inside the window (a request cut at the window's
  // end may have its range start inside and its launch outside: at most one).
  EXPECT_GE(p.kernels.size() + 1, reqs.size());
  EXPECT_LE(p.kernels.size(), reqs.size() + 1);
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  EXPECT_EQ(p.counters.gpu_records_incomplete, 0u);

  ExpectServiceUntouched(svc.Stop());
  EXPECT_FALSE(fs::exists(svc.xdg() + "/gprof-run/" + std::to_string(pid) + ".sock"))
      << "the socket is removed at exit";
}

// A capture on a busy GPU: each kernel runs 4 ms on the stand-in (CUDASIM_KERNEL_NS) and the
// service synchronizes only after every 50th request, so the GPU runs up to 200 ms behind the
// host and the capture's last kernels are still queued when its 300 ms end. The capture waits
// for them (held until their records arrive, docs/ATTACH.md): every launch call inside the
// capture has its kernel, finished, and none is counted incomplete or without records. The
// service launches one kernel per request through <<<>>> (__cudaLaunchKernel in CUDA 13), so
// kernels = those calls. (On the stand-in this
// proves the collector agrees with the stand-in's CUPTI buffers; the GPU twin runs it as is.)
TEST(Sessions, CaptureOnABusyGpuHoldsEveryKernelLaunchedInsideIt) {
  SKIP_WITHOUT_THE_DEVICE();
  Service svc("sessions_busy", {"--session", "svc-b"}, {{"CUDASIM_KERNEL_NS", "serve=4000000"}},
              true, false, {"--sync-every", "50"});
  const long pid = svc.WaitForSession();
  ASSERT_GT(pid, 0) << Describe(svc.Stop());
  svc.WaitForRequests(100);
  const ProcessResult cap = svc.Client({"capture", "svc-b", "--duration", "300ms", "--quiet"});
  ASSERT_EQ(cap.exit_code, 0) << Describe(cap);
  const Profile p = ReadProfile(svc.out() + "/service." + std::to_string(pid) + ".capture1.gpdump");
  size_t launches = 0;
  for (const ApiCall& c : p.api_calls) {
    for (const ApiName& n : p.api_names) {
      if (n.cbid == c.cbid && n.domain == c.domain &&
          p.strings.Get(n.name).rfind("__cudaLaunchKernel", 0) == 0) {
        ++launches;
      }
    }
  }
  ASSERT_GT(launches, 0u);
  EXPECT_EQ(p.kernels.size(), launches);
  for (const Kernel& k : p.kernels) EXPECT_GT(k.end_ns, k.start_ns);
  EXPECT_EQ(p.counters.gpu_records_incomplete, 0u);
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  EXPECT_EQ(p.counters.cupti_errors, 0u);
  ExpectServiceUntouched(svc.Stop());
}

// capture --steps N by pid, with the service's requests as steps: exactly N whole requests,
// numbered 0..N-1 within the capture; then a second capture of the same process is capture 2.
TEST(Sessions, CaptureOfStepsByPidAndASecondCapture) {
  SKIP_WITHOUT_THE_DEVICE();
  Service svc("sessions_steps", {"--step", "nvtx:request#*"});
  const long pid = svc.WaitForSession();
  ASSERT_GT(pid, 0) << Describe(svc.Stop());
  const ProcessResult cap = svc.Client({"capture", std::to_string(pid), "--steps", "5",
                                        "--quiet", "--no-html"});
  ASSERT_EQ(cap.exit_code, 0) << Describe(cap);
  const std::string stem = svc.out() + "/service." + std::to_string(pid);
  const Profile p = ReadProfile(stem + ".capture1.gpdump");
  const std::vector<long> reqs = RequestNumbers(p);
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_EQ(reqs.back() - reqs.front(), 4);
  EXPECT_EQ(p.kernels.size(), 5u);
  EXPECT_EQ(p.info.first_step, 0u);
  EXPECT_EQ(p.info.last_step, 4u);
  EXPECT_FALSE(fs::exists(stem + ".capture1.report.html"));  // --no-html

  const ProcessResult second = svc.Client({"capture", std::to_string(pid), "--duration", "50ms",
                                           "--quiet"});
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  const Profile q = ReadProfile(stem + ".capture2.gpdump");
  EXPECT_EQ(q.info.cycle, 1u);
  ASSERT_FALSE(RequestNumbers(q).empty());
  EXPECT_GT(RequestNumbers(q).front(), reqs.back());
  ExpectServiceUntouched(svc.Stop());
}

// resume runs until pause, which saves and renders the capture; a second pause has nothing to
// save; asking for a capture while one runs is refused with the way out.
TEST(Sessions, ResumeUntilPause) {
  SKIP_WITHOUT_THE_DEVICE();
  Service svc("sessions_resume", {"--session", "svc-r"});
  ASSERT_GT(svc.WaitForSession(), 0) << Describe(svc.Stop());
  const ProcessResult resumed = svc.Client({"resume", "svc-r"});
  ASSERT_EQ(resumed.exit_code, 0) << Describe(resumed);
  EXPECT_NE(resumed.err.find("capture 1 of svc-r"), std::string::npos) << resumed.err;
  const ProcessResult busy = svc.Client({"capture", "svc-r", "--duration", "1s"});
  EXPECT_EQ(busy.exit_code, 1) << Describe(busy);
  EXPECT_NE(busy.err.find("capture 1 is still running"), std::string::npos) << busy.err;
  const ProcessResult listed = svc.Client({"sessions"});
  EXPECT_NE(listed.out.find("capturing"), std::string::npos) << listed.out;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const ProcessResult paused = svc.Client({"pause", "svc-r", "--quiet"});
  ASSERT_EQ(paused.exit_code, 0) << Describe(paused);
  EXPECT_NE(paused.err.find("capture 1 saved"), std::string::npos) << paused.err;
  const ProcessResult again = svc.Client({"pause", "svc-r"});
  EXPECT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_NE(again.err.find("was not capturing"), std::string::npos) << again.err;
  ExpectServiceUntouched(svc.Stop());
  std::vector<std::string> dumps;
  for (const std::string& name : ListDir(svc.out())) {
    if (fs::path(name).extension() == ".gpdump") dumps.push_back(name);
  }
  ASSERT_EQ(dumps.size(), 1u) << "paused between captures: no whole-run dump";
  EXPECT_NE(dumps[0].find(".capture1.gpdump"), std::string::npos) << dumps[0];
  const Profile p = ReadProfile(svc.out() + "/" + dumps[0]);
  EXPECT_GE(p.info.end_ns - p.info.start_ns, 200'000'000u);
  EXPECT_FALSE(RequestNumbers(p).empty());
}

// A client of another uid is refused (SO_PEERCRED) and the refusal is logged by the program.
// The socket directory is opened up by the test so that the other uid can reach the socket at
// all: the peer check is what is under test. Needs root, to become another uid.
TEST(Sessions, ClientOfAnotherUidIsRefusedAndLogged) {
  SKIP_WITHOUT_THE_DEVICE();
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another uid (setuid in a child)";
  Service svc("sessions_uid", {});
  const long pid = svc.WaitForSession();
  ASSERT_GT(pid, 0) << Describe(svc.Stop());
  const std::string sock = svc.xdg() + "/gprof-run/" + std::to_string(pid) + ".sock";
  ASSERT_EQ(::chmod((svc.xdg() + "/gprof-run").c_str(), 0711), 0);
  ASSERT_EQ(::chmod(svc.xdg().c_str(), 0711), 0);
  ASSERT_EQ(::chmod(sock.c_str(), 0777), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string reply = "setuid failed";
    if (::setgid(65534) == 0 && ::setuid(65534) == 0) {
      reply = "connect failed";
      const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        // The server answers a refused client at once and closes: the request may meet a closed
        // socket (EPIPE, not SIGPIPE), and the reply is read either way.
        const char req[] = "status\n";
        [[maybe_unused]] ssize_t w = ::send(fd, req, sizeof req - 1, MSG_NOSIGNAL);
        char buf[512] = {};
        const ssize_t n = ::read(fd, buf, sizeof buf - 1);
        reply = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "no reply";
      }
    }
    [[maybe_unused]] ssize_t w = ::write(pipe_fds[1], reply.data(), reply.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string reply;
  char buf[512];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0) reply.append(buf, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(reply.rfind("error\tmessage=refused: only uid 0 may control this process", 0), 0u)
      << "[" << reply << "] wait status " << status;
  // The session still serves its own user (once the directory is closed again: clients refuse a
  // session directory open to others).
  ASSERT_EQ(::chmod((svc.xdg() + "/gprof-run").c_str(), 0700), 0);
  const ProcessResult listed = svc.Client({"sessions"});
  EXPECT_NE(listed.out.find(std::to_string(pid)), std::string::npos) << listed.out;
  const ProcessResult& done = svc.Stop();
  ExpectServiceUntouched(done);
  EXPECT_NE(done.err.find("refused a control request from uid 65534"), std::string::npos)
      << done.err;
}

// Refusals, each one line and exit 1: a dead pid, a live process that is no session, an unknown
// name; bad arguments are usage errors (2). A socket left by a process that is gone is removed
// by `gprof-run sessions`.
TEST(Sessions, RefusalsAndStaleSockets) {
  const std::string root = MakeTempDir("sessions_refusals");
  const std::string xdg = root + "/xdg";
  fs::create_directories(xdg + "/gprof-run");
  ::chmod(xdg.c_str(), 0700);
  ::chmod((xdg + "/gprof-run").c_str(), 0700);
  ProcessOptions o;
  o.set_env["XDG_RUNTIME_DIR"] = xdg;
  // A pid that is gone: a child that has exited and been reaped.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = xdg + "/gprof-run/" + std::to_string(gone) + ".sock";
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);  // left behind, as after a SIGKILL
  }
  const ProcessResult listed = RunProcess({LauncherPath(), "sessions"}, o);
  EXPECT_EQ(listed.exit_code, 0) << Describe(listed);
  EXPECT_NE(listed.err.find("removed 1 socket(s) of programs that are gone"), std::string::npos)
      << listed.err;
  EXPECT_NE(listed.out.find("no paused sessions"), std::string::npos) << listed.out;
  EXPECT_TRUE(ListDir(xdg + "/gprof-run").empty());

  const ProcessResult dead =
      RunProcess({LauncherPath(), "capture", std::to_string(gone), "--duration", "1s"}, o);
  EXPECT_EQ(dead.exit_code, 1) << Describe(dead);
  EXPECT_NE(dead.err.find("no paused session with pid " + std::to_string(gone) +
                          ": no such process"),
            std::string::npos)
      << dead.err;
  const ProcessResult self =
      RunProcess({LauncherPath(), "capture", std::to_string(::getpid()), "--steps", "2"}, o);
  EXPECT_EQ(self.exit_code, 1) << Describe(self);
  EXPECT_NE(self.err.find("not started with gprof-run --start-paused"), std::string::npos)
      << self.err;
  const ProcessResult name = RunProcess({LauncherPath(), "pause", "nobody-here"}, o);
  EXPECT_EQ(name.exit_code, 1) << Describe(name);
  EXPECT_NE(name.err.find("no paused session named nobody-here"), std::string::npos) << name.err;
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"capture", "x"},
                                             {"capture", "x", "--duration", "1s", "--steps", "2"},
                                             {"capture", "x", "--steps", "0"},
                                             {"capture"},
                                             {"resume", "x", "--duration", "1s"}}) {
    std::vector<std::string> argv = {LauncherPath()};
    argv.insert(argv.end(), bad.begin(), bad.end());
    const ProcessResult r = RunProcess(argv, o);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
  }
  // --start-paused with a schedule is a usage error before the program starts.
  const ProcessResult mixed = RunProcess({LauncherPath(), "--start-paused", "--active", "1", "--",
                                          "/bin/echo", "ran"},
                                         o);
  EXPECT_EQ(mixed.exit_code, 2) << Describe(mixed);
  EXPECT_TRUE(mixed.out.empty()) << mixed.out;
  EXPECT_NE(mixed.err.find("cannot be combined with GPROF_SCHEDULE"), std::string::npos)
      << mixed.err;
}

// A paused program that is never captured ends as it would without gprof-run, and the run says
// that nothing was asked for (not that the program wrote no dump).
TEST(Sessions, NeverCapturedRunSaysNothingWasAskedFor) {
  SKIP_WITHOUT_THE_DEVICE();
  Service svc("sessions_never", {});
  ASSERT_GT(svc.WaitForSession(), 0) << Describe(svc.Stop());
  svc.WaitForRequests(100);
  const ProcessResult& r = svc.Stop();
  ExpectServiceUntouched(r);
  EXPECT_NE(r.err.find("no capture was asked for (--start-paused): nothing was recorded"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(ListDir(svc.xdg() + "/gprof-run").empty());
}

// gprof-run attach on a service gprof-run did not start: it injects the library (ptrace), starts
// a paused session late and records one capture; the service goes on untouched, a second attach
// reuses the session, and capture works on it too. The capture holds only kernels launched
// inside it: fewer than the service served meanwhile (its own count), every launch with its GPU
// record, none lost. Its NVTX ranges are not seen: the service made its first NVTX call before
// the attach (docs/ATTACH.md).
TEST(Attach, AttachToAServiceGprofRunDidNotStartCapturesAndLeavesItRunning) {
  SKIP_WITHOUT_THE_DEVICE();
  if (const std::string why = PtraceUnavailable(); !why.empty()) GTEST_SKIP() << why;
  Service svc("attach_service", {}, {}, /*under_gprof=*/false);
  const long pid = svc.PlainPid();
  ASSERT_GT(pid, 0) << Describe(svc.Stop());
  svc.WaitForRequests(200);
  const long before = svc.Requests();
  std::vector<std::string> attach = {"attach", std::to_string(pid), "--duration", "300ms",
                                     "-o", svc.out(), "--quiet", "--session", "late"};
  if (!kOnGpu) attach.insert(attach.end(), {"--cupti-lib", StandInCupti()});
  const ProcessResult r = svc.Client(attach);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const long after = svc.Requests();
  EXPECT_NE(r.err.find("attached to process " + std::to_string(pid)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Not seen: work launched before the capture"), std::string::npos) << r.err;
  const std::string dump = svc.out() + "/service." + std::to_string(pid) + ".capture1.gpdump";
  const Profile p = ReadProfile(dump);
  EXPECT_EQ(p.info.end_ns - p.info.start_ns, 300'000'000u);
  ASSERT_FALSE(p.kernels.empty());
  EXPECT_LE(static_cast<long>(p.kernels.size()), after - before + 100);
  for (const Kernel& k : p.kernels) {
    EXPECT_GE(k.start_ns + 1'000'000, p.info.start_ns);  // launched inside: starts after it opened
  }
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  EXPECT_FALSE(p.devices.empty()) << "the late session learns the device (EnableAndDump)";
  EXPECT_TRUE(RequestNumbers(p).empty()) << "NVTX initialized before the attach stays unseen";

  // The session is listed under its name, and a second attach reuses it.
  const ProcessResult listed = svc.Client({"sessions"});
  EXPECT_NE(listed.out.find("late"), std::string::npos) << listed.out;
  std::vector<std::string> again = {"attach", std::to_string(pid), "--steps", "0"};
  EXPECT_EQ(svc.Client(again).exit_code, 2);  // usage: steps must be >= 1
  again = {"attach", std::to_string(pid), "--duration", "50ms", "--quiet", "--no-html"};
  const ProcessResult second = svc.Client(again);
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  EXPECT_NE(second.err.find("already has a gprof-run session"), std::string::npos) << second.err;
  EXPECT_TRUE(fs::exists(svc.out() + "/service." + std::to_string(pid) + ".capture2.gpdump"));

  ExpectServiceUntouched(svc.Stop());
}

// An attached Python program older than 3.14: attach captures its CUDA work and says that torch's
// op ranges cannot be turned on after start-up (sys.remote_exec, PEP 768, is 3.14+). The target
// is a Python that loaded the stand-in's CUDA runtime through ctypes and then idles.
TEST(Attach, PythonBefore314SaysWhyTorchOpsStayOff) {
  if (kOnGpu) GTEST_SKIP() << "the stand-in's runtime is loaded by name";
  if (const std::string why = PtraceUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string root = MakeTempDir("attach_python");
  const std::string ready = root + "/ready";
  const std::string code =
      "import ctypes, os, sys, time\n"
      "rt = ctypes.CDLL('libcudart.so.13')\n"
      "n = ctypes.c_int(0)\n"
      "assert rt.cudaGetDeviceCount(ctypes.byref(n)) == 0\n"
      "open(sys.argv[1], 'w').close()\n"
      "while not os.path.exists(sys.argv[1] + '.stop'): time.sleep(0.01)\n"
      "print('python target done', n.value)\n";
  ProcessOptions o;
  o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
  o.set_env["XDG_RUNTIME_DIR"] = root;
  ProcessResult target;
  std::thread t([&] { target = RunProcess({PythonPath(), "-c", code, ready}, o); });
  for (int i = 0; i < 1000 && !fs::exists(ready); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const long pid = PidWithArgument(ready);
  ProcessResult r;
  if (pid > 0) {
    r = RunProcess({LauncherPath(), "attach", std::to_string(pid), "--duration", "100ms", "-o",
                    root + "/out", "--quiet", "--cupti-lib", StandInCupti()},
                   o);
  }
  std::FILE* f = std::fopen((ready + ".stop").c_str(), "w");
  if (f != nullptr) std::fclose(f);
  t.join();
  ASSERT_GT(pid, 0);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.err.find("torch's op ranges cannot be turned on in it after start-up (that needs "
                       "sys.remote_exec, Python 3.14+, PEP 768)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(target.exit_code, 0) << Describe(target);
  EXPECT_EQ(target.out, "python target done 1\n");
}

// A library whose NVTX starts after the attach finds gprof-run's library (NVTX_INJECTION64_PATH
// set by the attach entry) and its ranges are in the next capture: whole request#N ranges, each
// around its kernel.
TEST(Attach, NvtxThatStartsAfterTheAttachIsRecorded) {
  SKIP_WITHOUT_THE_DEVICE();
  if (const std::string why = PtraceUnavailable(); !why.empty()) GTEST_SKIP() << why;
  Service svc("attach_nvtx", {}, {}, /*under_gprof=*/false, /*nvtx_late=*/true);
  const long pid = svc.PlainPid();
  ASSERT_GT(pid, 0) << Describe(svc.Stop());
  svc.WaitForRequests(100);
  std::vector<std::string> attach = {"attach", std::to_string(pid), "--duration", "20ms",
                                     "-o", svc.out(), "--quiet", "--no-html"};
  if (!kOnGpu) attach.insert(attach.end(), {"--cupti-lib", StandInCupti()});
  const ProcessResult first = svc.Client(attach);
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  std::FILE* f = std::fopen(svc.nvtx_file().c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  const long from = svc.Requests();
  svc.WaitForRequests(from + 300);  // NVTX starts within 100 requests of the file
  const ProcessResult cap = svc.Client({"capture", std::to_string(pid), "--duration", "200ms",
                                        "--quiet", "--no-html"});
  ASSERT_EQ(cap.exit_code, 0) << Describe(cap);
  const Profile p = ReadProfile(svc.out() + "/service." + std::to_string(pid) + ".capture2.gpdump");
  const std::vector<long> reqs = RequestNumbers(p);
  ASSERT_GE(reqs.size(), 10u);
  EXPECT_EQ(reqs.back() - reqs.front() + 1, static_cast<long>(reqs.size()));
  EXPECT_LE(p.kernels.size(), reqs.size() + 1);
  ExpectServiceUntouched(svc.Stop());
}

// gprof-run attach to a process that has loaded CUDA's libraries but not started CUDA (as torch on
// the CPU has loaded its libcupti): no call into libcupti before the process's driver starts. The
// stand-in aborts the process on one (CUDASIM_CUPTI_BEFORE_DRIVER=abort: torch 2.15's libcupti
// 13.2 overflows its stack in cuptiGetVersion where no driver ran), so the service surviving the
// attach is the check. The attach says GPU work is recorded from the first CUDA call; once the
// service starts CUDA, the driver runs gprof-run's InitializeInjection (CUDA_INJECTION64_PATH, set
// by the attach) and a capture then holds its kernels, each with its launch. Verified on the
// stand-in only (the real driver reads CUDA_INJECTION64_PATH at cuInit: REFERENCE.md section 1).
TEST(Attach, BeforeTheProcessStartsCudaNoCuptiCallAndGpuWorkIsRecordedOnceItDoes) {
  if (kOnGpu) GTEST_SKIP() << "checks the stand-in's abort on an early CUPTI call";
  if (const std::string why = PtraceUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string cuda_file = MakeTempDir("attach_late_cuda_file") + "/cuda";
  Service svc("attach_late_cuda", {}, {{"CUDASIM_CUPTI_BEFORE_DRIVER", "abort"}},
              /*under_gprof=*/false, /*nvtx_late=*/false, {"--cuda-after", cuda_file});
  const long pid = svc.PlainPid();
  ASSERT_GT(pid, 0) << Describe(svc.Stop());
  const std::vector<std::string> attach = {"attach", std::to_string(pid), "--duration", "50ms",
                                           "-o", svc.out(), "--quiet", "--no-html",
                                           "--cupti-lib", StandInCupti()};
  const ProcessResult first = svc.Client(attach);
  ASSERT_EQ(first.exit_code, 0) << Describe(first) << Describe(svc.Stop());
  EXPECT_NE(first.err.find("process " + std::to_string(pid) +
                           ": CUDA not started yet; GPU work is recorded from the process's "
                           "first CUDA call"),
            std::string::npos)
      << first.err;
  const std::string stem = svc.out() + "/service." + std::to_string(pid);
  EXPECT_TRUE(ReadProfile(stem + ".capture1.gpdump").kernels.empty());

  std::FILE* f = std::fopen(cuda_file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  svc.WaitForRequests(200);
  const ProcessResult cap = svc.Client({"capture", std::to_string(pid), "--duration", "200ms",
                                        "--quiet", "--no-html"});
  ASSERT_EQ(cap.exit_code, 0) << Describe(cap);
  const Profile p = ReadProfile(stem + ".capture2.gpdump");
  EXPECT_EQ(p.info.gpu_status, "collected");
  EXPECT_FALSE(p.kernels.empty());
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  ExpectServiceUntouched(svc.Stop());
}

// A process whose CUPTI another tool holds: attach says GPU collection is off there and names the
// tool, exit 1; the process runs on untouched.
TEST(Attach, RefusesAProcessWhoseCuptiAnotherToolHoldsNamingIt) {
  SKIP_WITHOUT_THE_DEVICE();
  if (const std::string why = PtraceUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string root = MakeTempDir("attach_held");
  const std::string stop = root + "/stop";
  ProcessOptions o;
  if (!kOnGpu) o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
  o.set_env["XDG_RUNTIME_DIR"] = root;
  o.unset_env = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"};
  ProcessResult holder;
  std::thread t([&] { holder = RunProcess({GPROF_CUPTI_HOLDER, stop}, o); });
  for (int i = 0; i < 1000 && !fs::exists(stop + ".ready"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const long pid = PidWithArgument(stop);
  ProcessResult r;
  if (pid > 0) {
    std::vector<std::string> argv = {LauncherPath(), "attach", std::to_string(pid), "--duration",
                                     "100ms", "-o", root + "/out"};
    if (!kOnGpu) argv.insert(argv.end(), {"--cupti-lib", StandInCupti()});
    r = RunProcess(argv, o);
  }
  std::FILE* f = std::fopen(stop.c_str(), "w");
  if (f != nullptr) std::fclose(f);
  t.join();
  ASSERT_GT(pid, 0);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("GPU collection is off in process " + std::to_string(pid) +
                       ": CUPTI is already used by Nsight Systems (nsys)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(holder.exit_code, 0) << Describe(holder);
  EXPECT_EQ(holder.out.rfind("cupti_holder: subscribed=1 launches=", 0), 0u) << holder.out;
}

// Refusals of attach, each one line and exit 1, the target untouched: a dead pid, a process that
// has not loaded CUDA.
TEST(Attach, RefusesDeadPidsAndProcessesWithoutCuda) {
  if (const std::string why = PtraceUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string root = MakeTempDir("attach_refusals");
  ProcessOptions o;
  o.set_env["XDG_RUNTIME_DIR"] = root;
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const ProcessResult dead =
      RunProcess({LauncherPath(), "attach", std::to_string(gone), "--duration", "1s"}, o);
  EXPECT_EQ(dead.exit_code, 1) << Describe(dead);
  EXPECT_NE(dead.err.find("no process with pid " + std::to_string(gone)), std::string::npos)
      << dead.err;
  // A plain sleeping child: no CUDA in it.
  const pid_t plain = ::fork();
  if (plain == 0) {
    ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const ProcessResult nocuda =
      RunProcess({LauncherPath(), "attach", std::to_string(plain), "--duration", "1s"}, o);
  EXPECT_EQ(nocuda.exit_code, 1) << Describe(nocuda);
  EXPECT_NE(nocuda.err.find("has not loaded CUDA"), std::string::npos) << nocuda.err;
  EXPECT_EQ(::kill(plain, 0), 0) << "the process is left running";
  ::kill(plain, SIGKILL);
  ::waitpid(plain, nullptr, 0);
  EXPECT_EQ(RunProcess({LauncherPath(), "attach", "x", "--duration", "1s"}, o).exit_code, 2);
}

}  // namespace
}  // namespace gprof::testing
