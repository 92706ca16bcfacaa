// Lifecycle of the injection library (see runtime.h).
//
// Rules (in-process code): everything here is cold. The signal handler below does only
// async-signal-safe things (a lock-free atomic load, write, poll, sigaction, raise, getpid,
// syscall(SYS_gettid)); the real work runs on the flush thread started at init, and the handler
// never waits for a flush that is running on its own thread. Our threads (flush, window, CUPTI
// parser) are created with SIGINT/SIGTERM/SIGHUP blocked, so the handler never runs on a thread
// the flush needs. The pthread_atfork child handler takes no lock and frees nothing: it flips two
// atomics, closes two fds and restores default signal dispositions. State is built at init and
// deliberately never freed (no global constructors or destructors: the library may be preloaded,
// and atexit handlers of other libraries may still record after ours).
#include "collector/runtime.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "collector/gpu_collector.h"
#include "collector/host_collection.h"
#include "collector/nvtx_hooks.h"
#include "collector/profile_builder.h"
#include "collector/thread_buffer.h"
#include "collector/window_profile.h"
#include "collector/window_thread.h"
#include "config/config.h"
#include "model/dump.h"
#include "support/clock.h"
#include "support/log.h"

extern char** environ;

namespace gprof::collector {
namespace {

enum InitState : int { kFresh = 0, kRunning = 1, kDone = 2, kFailed = 3 };
enum GpuState : int { kGpuNone = 0, kGpuStarting = 1, kGpuStarted = 2 };
// g_flush_state: kFlushNone, kFlushDone, or (> 0) the tid of the thread running the exit flush.
// One atomic, so that the signal handler can tell "running on this very thread" without a race.
constexpr int kFlushNone = 0;
constexpr int kFlushDone = -1;

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kSignalFlushTimeoutMs = 20000;  // then the signal kills the program without a dump
constexpr const char* kGpuNotStarted = "not started: the program never initialized CUDA";

struct Runtime {
  Config config;
  ProfileInfo info;
  GpuStartResult gpu;  // written before gpu_state becomes kGpuStarted
  // Serializes dump writers (exit flush, window writes). Held while draining CUPTI: safe because
  // no hook or CUPTI callback ever takes it. Lock order: flush_mutex -> NvtxRegistry mutex.
  std::mutex flush_mutex;
};

// Constant-initialized globals only.
std::atomic<int> g_init_state{kFresh};
std::atomic<int> g_gpu_state{kGpuNone};
std::atomic<int> g_flush_state{kFlushNone};  // read by the signal handler: must be lock-free
static_assert(std::atomic<int>::is_always_lock_free);
Runtime* g_rt = nullptr;                 // published by the release store of kDone
pid_t g_pid = 0;                         // the pid that ran init
int g_wake_fds[2] = {-1, -1};            // signal handler -> flush thread
int g_done_fds[2] = {-1, -1};            // flush thread -> signal handler
bool g_handler_installed[NSIG] = {};
bool g_windows_active = false;           // schedule windows / capture ranges (set once at init)

std::map<std::string, std::string> ReadEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  return env;
}

std::vector<std::string> ReadCmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

std::string ReadExe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool MakeDirs(const std::string& dir) {
  if (dir.empty()) return true;
  std::string partial;
  std::stringstream ss(dir);
  std::string part;
  if (dir[0] == '/') partial = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    partial += part;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
    partial += "/";
  }
  return true;
}

ProfileInfo GatherProcessInfo(const std::map<std::string, std::string>& env) {
  ProfileInfo info;
  info.pid = static_cast<uint32_t>(::getpid());
  info.parent_pid = static_cast<uint32_t>(::getppid());
  const std::vector<std::string> argv = ReadCmdline();
  info.program = ProgramNameFrom(ReadExe(), argv);
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) info.command_line += ' ';
    info.command_line += argv[i];
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) info.hostname = host;
  RankFromEnv(env, &info.rank, &info.world_size);
  info.start_ns = NowNs();
  info.gpu_status = kGpuNotStarted;
  return info;
}

// ---- Exit flush -----------------------------------------------------------------------------

// The calling thread's tid by a raw syscall: async-signal-safe (no TLS, unlike CurrentTid()).
int CallerTid() { return static_cast<int>(::syscall(SYS_gettid)); }

bool IsInitProcess() { return g_init_state.load(std::memory_order_acquire) == kDone &&
                              !HostInert() && ::getpid() == g_pid; }

// Builds the profile of what was recorded since the last reset. Caller holds flush_mutex.
void BuildProfile(Runtime& rt, Profile* profile, uint64_t end_ns) {
  profile->info = rt.info;
  profile->info.end_ns = end_ns;
  BuildHostProfile(profile, end_ns);
  if (g_gpu_state.load(std::memory_order_acquire) == kGpuStarted) {
    profile->info.gpu_status = rt.gpu.status;
    profile->info.cupti_library = rt.gpu.cupti_library;
    DrainGpu(profile, /*forced=*/true);
  } else if (!rt.config.cuda) {
    profile->info.gpu_status = "off: GPROF_CUDA=0";
  }
}

// Writes `profile` to `path`, creating the directory; logs the outcome. Caller holds flush_mutex.
bool WriteProfile(const Profile& profile, const std::string& dir, const std::string& path) {
  if (!MakeDirs(dir)) {
    log::Warn("cannot create the output directory " + dir + ": " + std::strerror(errno) +
              "; no profile was written for pid " + std::to_string(profile.info.pid) +
              ". Set GPROF_OUTPUT_DIR to a writable directory.");
    return false;
  }
  const std::string error = WriteDump(profile, path);
  if (!error.empty()) {
    log::Warn("cannot write the profile: " + error);
    return false;
  }
  const Counters& c = profile.counters;
  if (c.host_events_dropped != 0) {
    // The count is this dump's own (BuildHostProfile): warn once per process; later windows that
    // lose events say so at info level, and every dump carries its count for the launcher.
    static bool warned = false;  // flush_mutex held
    const std::string message =
        std::to_string(c.host_events_dropped) + " NVTX/API events of " + path +
        " were dropped because the host buffer was full; raise GPROF_HOST_BUFFER_MIB to keep them";
    if (warned) {
      log::Info(message);
    } else {
      log::Warn(message);
      warned = true;
    }
  }
  log::Info("wrote " + path + " (" + std::to_string(profile.ranges.size()) + " ranges, " +
            std::to_string(profile.marks.size()) + " marks, " +
            std::to_string(c.nvtx_unmatched_pops) + " unmatched pops, " +
            std::to_string(c.nvtx_ranges_open_at_end) + " ranges open at end)");
  return true;
}

void FlushNow() {
  Runtime& rt = *g_rt;
  if (g_windows_active) {
    // Saves a partly recorded window; takes flush_mutex itself (through WriteWindow).
    FinishWindows(NowNs());
  }
  std::lock_guard<std::mutex> lock(rt.flush_mutex);
  SetHostCollectionEnabled(false);
  if (g_windows_active) {
    if (g_gpu_state.load(std::memory_order_acquire) == kGpuStarted) StopGpuCollection();
    return;  // windows were written as they completed; there is no whole-run profile
  }
  Profile profile;
  BuildProfile(rt, &profile, NowNs());
  if (g_gpu_state.load(std::memory_order_acquire) == kGpuStarted) StopGpuCollection();
  WriteProfile(profile, rt.config.output_dir, WholeRunDumpPath(rt.config.output_dir, rt.info));
}

void AtExit() {
  FlushAtExit();
}

// ---- Signals --------------------------------------------------------------------------------

void SignalHandler(int sig) {
  const int saved_errno = errno;
  // Wake the flush thread and wait for the dump only while a flush can still complete: none has
  // started (the flush thread runs it), or one runs on another thread. If the exit flush is
  // running on this very thread (the signal interrupted it), it cannot resume before this handler
  // returns: waiting would only delay death by the timeout, so die at once (no dump). Once the
  // flush is done there is nothing to wait for.
  const int flush = g_flush_state.load(std::memory_order_acquire);
  const bool flush_can_finish = flush == kFlushNone || (flush > 0 && flush != CallerTid());
  if (flush_can_finish && !HostInert() && ::getpid() == g_pid && g_wake_fds[1] >= 0 &&
      g_done_fds[0] >= 0) {
    const char c = static_cast<char>(sig);
    if (::write(g_wake_fds[1], &c, 1) == 1) {
      pollfd done{g_done_fds[0], POLLIN, 0};
      (void)::poll(&done, 1, kSignalFlushTimeoutMs);
    }
  }
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  // Blocked while this handler runs; delivered with the default action as soon as it returns,
  // so the program ends with the same status as without us.
  ::raise(sig);
  errno = saved_errno;
}

void* FlushThreadMain(void*) {
  char c;
  for (;;) {
    const ssize_t n = ::read(g_wake_fds[0], &c, 1);
    if (n == 1) break;
    if (n < 0 && errno == EINTR) continue;
    return nullptr;
  }
  FlushAtExit();
  const char done = 1;
  (void)!::write(g_done_fds[1], &done, 1);
  return nullptr;
}

// Runs `start` (which creates threads of ours) with the flush signals blocked on the calling
// thread; new threads inherit the mask, so a signal handler never runs on a thread that the flush
// has to wait for (the window thread, the CUPTI parser), which would hang the flush until timeout.
template <typename Start>
auto WithFlushSignalsBlocked(Start start) {
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int sig : kSignals) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  struct Restore {
    sigset_t mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{old_mask};
  return start();
}

void InstallSignalHandlers() {
  bool any = false;
  for (int sig : kSignals) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;  // program's own
    any = true;
  }
  if (!any) return;
  if (::pipe2(g_wake_fds, O_CLOEXEC) != 0 || ::pipe2(g_done_fds, O_CLOEXEC) != 0) {
    log::Warn(std::string("cannot create the signal flush pipes: ") + std::strerror(errno) +
              "; a SIGINT/SIGTERM/SIGHUP will end the program without a profile");
    return;
  }
  // The flush thread must never take the signal itself.
  pthread_t thread;
  const int rc = WithFlushSignalsBlocked([&] {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    const int created = pthread_create(&thread, &attr, &FlushThreadMain, nullptr);
    pthread_attr_destroy(&attr);
    return created;
  });
  if (rc != 0) {
    log::Warn(std::string("cannot start the signal flush thread: ") + std::strerror(rc) +
              "; a SIGINT/SIGTERM/SIGHUP will end the program without a profile");
    return;
  }
  pthread_setname_np(thread, "gprof-flush");
  for (int sig : kSignals) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = &SignalHandler;
    sigemptyset(&sa.sa_mask);
    for (int other : kSignals) sigaddset(&sa.sa_mask, other);
    sa.sa_flags = SA_RESTART;
    if (::sigaction(sig, &sa, nullptr) == 0) g_handler_installed[sig] = true;
  }
}

// ---- Fork -----------------------------------------------------------------------------------

// Runs in the child right after fork() (one thread, locks possibly held by vanished threads):
// go inert for good, take no lock, free nothing.
void AtForkChild() {
  g_host_inert.store(true, std::memory_order_relaxed);
  SetHostCollectionEnabled(false);
  for (int sig : kSignals) {
    if (!g_handler_installed[sig]) continue;
    struct sigaction current;
    if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == &SignalHandler) {
      struct sigaction dfl;
      std::memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      ::sigaction(sig, &dfl, nullptr);
    }
  }
  for (int* fds : {g_wake_fds, g_done_fds}) {
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) ::close(fds[i]);
      fds[i] = -1;
    }
  }
}

// ---- Python ---------------------------------------------------------------------------------

// Inside a Python interpreter an uncaught KeyboardInterrupt ends with Py_FinalizeEx, then
// signal(SIGINT, SIG_DFL) + kill(SIGINT): C atexit handlers never run. Py_AtExit callbacks run at
// the end of Py_FinalizeEx, so register the flush there too (it is idempotent). Called during
// init, which in Python runs inside an NVTX call with the GIL held.
void RegisterPythonFinalizeHook() {
  using PyAtExitFn = int (*)(void (*)(void));
  auto* py_at_exit = reinterpret_cast<PyAtExitFn>(::dlsym(RTLD_DEFAULT, "Py_AtExit"));
  if (py_at_exit == nullptr) return;
  if (py_at_exit(&AtExit) != 0) {
    log::Debug("Py_AtExit refused the flush hook; an uncaught KeyboardInterrupt leaves no profile");
  }
}

// ---- Init -----------------------------------------------------------------------------------

bool InitOnce() {
  auto* rt = new Runtime;  // never freed
  const std::map<std::string, std::string> env = ReadEnvironment();
  ParseResult parsed = ParseConfig(env);
  rt->config = std::move(parsed.config);
  log::SetLevel(rt->config.log_level);
  for (const ConfigError& e : parsed.errors) {
    log::Warn(FormatError(e) + " (the default is used)");
  }
  for (const std::string& w : parsed.warnings) log::Warn(w);
  rt->info = GatherProcessInfo(env);
  if (!rt->config.cuda) rt->info.gpu_status = "off: GPROF_CUDA=0";

  if (!InitThreadBuffers(static_cast<uint64_t>(rt->config.host_buffer_mib) << 20)) {
    log::Warn("cannot reserve " + std::to_string(rt->config.host_buffer_mib) +
              " MiB for host events; NVTX ranges and API calls will be missing from the profile "
              "(lower GPROF_HOST_BUFFER_MIB?)");
  }
  g_pid = ::getpid();
  g_rt = rt;
  if (pthread_atfork(nullptr, nullptr, &AtForkChild) != 0) {
    log::Warn("pthread_atfork failed; forked children could write profiles of their own");
  }
  if (std::atexit(&AtExit) != 0) {
    log::Warn("cannot register the exit handler: no profile will be written at exit");
  }
  InstallSignalHandlers();
  RegisterPythonFinalizeHook();
  if (rt->config.nvtx) SetHostCollectionEnabled(true);
  g_windows_active =
      WithFlushSignalsBlocked([&] { return StartWindows(rt->config, rt->info.start_ns); });
  log::Debug("initialized in pid " + std::to_string(g_pid) + " (" + rt->info.program + ")");
  return true;
}

// Runs InitOnce exactly once per process; concurrent callers wait for it. Returns true when the
// runtime is usable in this process.
bool EnsureInit() {
  if (HostInert()) return false;
  int state = g_init_state.load(std::memory_order_acquire);
  if (state == kDone) return true;
  if (state == kFresh &&
      g_init_state.compare_exchange_strong(state, kRunning, std::memory_order_acq_rel)) {
    bool ok = false;
    try {
      ok = InitOnce();
    } catch (const std::exception& e) {
      log::Error(std::string("initialization failed, profiling is off: ") + e.what());
    } catch (...) {
      log::Error("initialization failed, profiling is off");
    }
    if (!ok) {
      g_host_inert.store(true, std::memory_order_relaxed);
      SetHostCollectionEnabled(false);
    }
    g_init_state.store(ok ? kDone : kFailed, std::memory_order_release);
    return ok;
  }
  while ((state = g_init_state.load(std::memory_order_acquire)) == kRunning) sched_yield();
  return state == kDone;
}

}  // namespace

// ---- Public ---------------------------------------------------------------------------------

int OnCudaInjection() noexcept {
  try {
    if (!EnsureInit()) return 1;
    Runtime& rt = *g_rt;
    if (!rt.config.cuda) return 1;
    int expected = kGpuNone;
    if (!g_gpu_state.compare_exchange_strong(expected, kGpuStarting, std::memory_order_acq_rel)) {
      return 1;
    }
    GpuStartResult result = WithFlushSignalsBlocked([&] { return StartGpuCollection(rt.config); });
    if (!result.collecting) {
      log::Warn("GPU collection is off: " + result.status);
    }
    rt.gpu = std::move(result);
    g_gpu_state.store(kGpuStarted, std::memory_order_release);
  } catch (...) {
    log::Error("starting GPU collection failed; the profile has host events only");
  }
  return 1;
}

int OnNvtxInjection(const void* (*get_export_table)(uint32_t)) noexcept {
  try {
    if (!EnsureInit()) return 1;
    if (!g_rt->config.nvtx) return 1;
    if (!InstallNvtxHooks(get_export_table)) {
      log::Warn("this NVTX client's callback tables are unusable; its ranges are not recorded");
    }
  } catch (...) {
    log::Error("NVTX injection failed; NVTX ranges are not recorded");
  }
  return 1;
}

std::string WholeRunDumpPath(const std::string& dir, const ProfileInfo& info) {
  const std::string prefix = dir.empty() ? std::string() : dir + "/";
  return prefix + info.program + "." + std::to_string(info.pid) + kDumpExtension;
}

std::string WindowDumpPath(const std::string& dir, const ProfileInfo& info) {
  const std::string prefix = dir.empty() ? std::string() : dir + "/";
  return prefix + info.program + "." + std::to_string(info.pid) + ".cycle" +
         std::to_string(info.cycle) + ".steps" + std::to_string(info.first_step) + "-" +
         std::to_string(info.last_step) + kDumpExtension;
}

std::string ProgramNameFrom(const std::string& exe_path, const std::vector<std::string>& argv) {
  std::string exe = Basename(exe_path);
  if (exe.empty() && !argv.empty()) exe = Basename(argv[0]);
  if (exe.empty()) exe = "program";
  if (exe.rfind("python", 0) != 0) return exe;
  // Interpreter: name the profile after what it runs.
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-m" && i + 1 < argv.size()) return argv[i + 1];
    if (a == "-c" || a == "-") return exe;
    if (a == "-W" || a == "-X" || a == "-Q") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    const std::string script = Basename(a);
    return script.empty() ? exe : script;
  }
  return exe;
}

void RankFromEnv(const std::map<std::string, std::string>& env, int32_t* rank, int32_t* world) {
  auto number = [&](const char* key, int32_t* out) {
    auto it = env.find(key);
    if (it == env.end() || it->second.empty()) return false;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (end == nullptr || *end != '\0' || v < 0 || v > INT32_MAX) return false;
    *out = static_cast<int32_t>(v);
    return true;
  };
  *rank = -1;
  *world = -1;
  for (const char* key : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (number(key, rank)) break;
  }
  for (const char* key : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (number(key, world)) break;
  }
}

std::string WriteWindow(const WindowSpan& span, Profile* gpu_pending) noexcept {
  try {
    if (!IsInitProcess()) return {};
    Runtime& rt = *g_rt;
    std::lock_guard<std::mutex> lock(rt.flush_mutex);
    Profile profile;
    profile.info = rt.info;
    BuildHostProfile(&profile, span.end_ns);
    if (g_gpu_state.load(std::memory_order_acquire) == kGpuStarted) {
      profile.info.gpu_status = rt.gpu.status;
      profile.info.cupti_library = rt.gpu.cupti_library;
      DrainGpu(gpu_pending, /*forced=*/true);
      MoveGpuRecords(gpu_pending, &profile);
    }
    CutWindow(&profile, span.start_ns, span.end_ns, gpu_pending);
    // NVTX steps named ProfilerStep#N are already ranges in the profile; other sources get
    // ProfilerStep#N spans so that HTA and the table see iterations.
    const StepSource& step = rt.config.step;
    if (step.kind != StepSource::Kind::kNvtx || step.pattern.rfind("ProfilerStep", 0) != 0) {
      profile.steps = span.steps;
    }
    profile.info.start_ns = span.start_ns;
    profile.info.end_ns = span.end_ns;
    profile.info.cycle = span.cycle;
    profile.info.first_step = span.first_step;
    profile.info.last_step = span.last_step;
    profile.info.partial_window = span.partial;
    profile.counters.window_events_lost = span.events_lost;
    profile.counters.window_starts_late = span.starts_late;
    const std::string path = WindowDumpPath(rt.config.output_dir, profile.info);
    return WriteProfile(profile, rt.config.output_dir, path) ? path : std::string();
  } catch (const std::exception& e) {
    log::Error(std::string("writing a window profile failed: ") + e.what());
    return {};
  } catch (...) {
    log::Error("writing a window profile failed");
    return {};
  }
}

void FlushAtExit() noexcept {
  try {
    if (!IsInitProcess()) return;
    const int self = CallerTid();
    int expected = kFlushNone;
    if (!g_flush_state.compare_exchange_strong(expected, self, std::memory_order_acq_rel)) {
      if (expected == self) return;  // re-entered on the flushing thread: waiting would hang
      // Another thread is flushing (e.g. exit() racing a signal): let it finish, bounded.
      for (int i = 0; i < kSignalFlushTimeoutMs / 10 &&
                      g_flush_state.load(std::memory_order_acquire) > 0;
           ++i) {
        ::usleep(10 * 1000);
      }
      return;
    }
    FlushNow();
  } catch (const std::exception& e) {
    log::Error(std::string("writing the profile failed: ") + e.what());
  } catch (...) {
    log::Error("writing the profile failed");
  }
  g_flush_state.store(kFlushDone, std::memory_order_release);
}

}  // namespace gprof::collector
