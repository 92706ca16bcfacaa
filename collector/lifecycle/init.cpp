// The injection library's one init (shared by the CUDA and NVTX entry points), fork handling and
// the Python exit hook. See runtime.h for the entry points and runtime_state.h for the state.
//
// Rules (in-process code): everything here is cold. Init runs exactly once per process, on
// whichever application thread first calls CUDA or NVTX; concurrent callers wait for it. The
// pthread_atfork child handler takes no lock and frees nothing: it flips two atomics, resets our
// signal handlers and writes a fork marker (openat/write/close only). State is built at init and
// deliberately never freed.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "collector/control/control_server.h"
#include "collector/cupti/gpu_collector.h"
#include "collector/host/cpu_sampler.h"
#include "collector/host/host_collection.h"
#include "collector/host/nvtx_hooks.h"
#include "collector/host/thread_buffer.h"
#include "collector/lifecycle/flush.h"
#include "collector/lifecycle/process_identity.h"
#include "collector/lifecycle/runtime.h"
#include "collector/lifecycle/runtime_state.h"
#include "collector/lifecycle/signals.h"
#include "collector/lifecycle/spill.h"
#include "collector/lifecycle/thread_cpu.h"
#include "collector/windows/window_thread.h"
#include "config/config.h"
#include "model/dump.h"
#include "model/output_file.h"
#include "support/log.h"

namespace gprof::collector::lifecycle {

std::atomic<int> g_init_state{kFresh};
std::atomic<int> g_gpu_state{kGpuNone};
// An attach found CUDA not started (GpuStartResult::waiting_for_cuda): CUDA_INJECTION64_PATH was
// set to this library so that the driver's cuInit runs our InitializeInjection, and is unset again
// once it has (children started after that do not inherit it). The environment is changed as the
// NVTX_INJECTION64_PATH of OnAttach is: setenv can race a getenv of another thread (glibc), a
// risk taken once per attach.
std::atomic<bool> g_gpu_waits_for_cuda{false};
std::atomic<bool> g_injection_path_set{false};
constexpr const char* kGpuWaitsForCuda =
    "waiting: CUDA not started yet; GPU work is recorded from the process's first CUDA call";
Runtime* g_rt = nullptr;
pid_t g_pid = 0;
bool g_windows_active = false;

bool IsInitProcess() {
  return g_init_state.load(std::memory_order_acquire) == kDone && !HostInert() &&
         ::getpid() == g_pid;
}

namespace {

void AtExit() { FlushAtExit(); }

// The output directory as an absolute path, fixed at init: a program that changes directory
// later still writes where it was started (docs/RELIABILITY.md, "chdir").
std::string AbsoluteDir(const std::string& dir) {
  if (!dir.empty() && dir[0] == '/') return dir;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return dir;  // kept relative: the best there is
  return dir.empty() || dir == "." ? std::string(cwd) : std::string(cwd) + "/" + dir;
}

// ---- Fork -----------------------------------------------------------------------------------

// The fork markers' directory and "<program>." (model/dump.h kForkMarkerExtension), built at
// init so that the fork child only appends digits; an empty name: no markers.
char g_fork_marker_dir[2048];
char g_fork_marker_name[256];
size_t g_fork_marker_len = 0;

void PrepareForkMarker(const std::string& dir, const std::string& program) {
  const std::string d = dir.empty() ? std::string(".") : dir;
  const std::string name = program + ".";
  if (d.size() + 1 > sizeof g_fork_marker_dir || name.size() + 32 > sizeof g_fork_marker_name) {
    return;  // no room for the directory, or for pid + extension
  }
  std::memcpy(g_fork_marker_dir, d.c_str(), d.size() + 1);
  std::memcpy(g_fork_marker_name, name.data(), name.size());
  g_fork_marker_len = name.size();
}

// Appends the decimal digits of `v` at `out`; returns the end.
char* AppendDigits(char* out, uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *out++ = digits[--n];
  return out;
}

// The fork child's marker: async-signal-safe calls only (OpenOutputDirAt's walk, openat, write,
// close), no allocation; created with O_EXCL|O_NOFOLLOW in a directory that passed the output
// rules (model/output_file.h), never through a link. Failure (no output directory, a refused
// one) is ignored: the marker only makes the launcher's list complete.
void WriteForkMarker() {
  if (g_fork_marker_len == 0) return;
  char name[sizeof g_fork_marker_name + 16];
  std::memcpy(name, g_fork_marker_name, g_fork_marker_len);
  char* end = AppendDigits(name + g_fork_marker_len, static_cast<uint64_t>(::getpid()));
  const char* ext = kForkMarkerExtension;
  while (*ext != '\0') *end++ = *ext++;
  *end = '\0';
  OutputDirError error;
  const int dir = OpenOutputDirAt(g_fork_marker_dir, /*create=*/false, &error);
  if (dir < 0) return;
  const int fd = ::openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  ::close(dir);
  if (fd < 0) return;
  char text[24];
  char* t = AppendDigits(text, static_cast<uint64_t>(::getppid()));
  *t++ = '\n';
  ssize_t ignored = ::write(fd, text, static_cast<size_t>(t - text));
  (void)ignored;
  ::close(fd);
}

// Runs in the child right after fork() (one thread, locks possibly held by vanished threads):
// go inert for good, take no lock, free nothing; leave a marker so the launcher can list it.
void AtForkChild() {
  g_host_inert.store(true, std::memory_order_relaxed);
  SetHostCollectionEnabled(false);
  ResetSignalsInForkChild();
  ForgetCpuSamplingInForkChild();
  WriteForkMarker();
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

// For the control server's `status`: GPU collection's one-line state.
std::string GpuStatusText() {
  if (g_rt != nullptr && !g_rt->config.cuda) return "off: GPROF_CUDA=0";
  if (g_gpu_state.load(std::memory_order_acquire) != kGpuStarted) {
    return g_gpu_waits_for_cuda.load(std::memory_order_acquire) ? kGpuWaitsForCuda : "";
  }
  return g_rt->gpu.status;
}

bool InitOnce(const std::map<std::string, std::string>& env) {
  auto* rt = new Runtime;  // never freed
  ParseResult parsed = ParseConfig(env);
  rt->config = std::move(parsed.config);
  rt->config.output_dir = AbsoluteDir(rt->config.output_dir);
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
  PrepareForkMarker(rt->config.output_dir, rt->info.program);
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
      WithFlushSignalsBlocked([&] { return StartWindows(rt->config, rt->info.start_ns, &WriteWindow); });
  // A whole run is written in segments as it goes (spill.h); windows write their own dumps.
  if (!g_windows_active) StartSpill(*rt);
  WithFlushSignalsBlocked([&] { StartCpuSampling(rt->config); return true; });
  WithFlushSignalsBlocked([] { return StartThreadCpuSampler(); });  // its first round: the start
  if (rt->config.start_paused && g_windows_active) {
    ControlIdentity identity;
    identity.session = rt->config.session.empty() ? rt->info.program : rt->config.session;
    identity.program = rt->info.program;
    identity.command = rt->info.command_line;
    identity.output_dir = rt->config.output_dir;
    identity.gpu_status = &GpuStatusText;
    WithFlushSignalsBlocked([&] { return StartControlServer(rt->config, identity); });
  }
  log::Debug("initialized in pid " + std::to_string(g_pid) + " (" + rt->info.program + ")");
  return true;
}

}  // namespace

// `env`: the settings to initialize with (`gprof-run attach` passes its own); nullptr: this
// process's environment.
bool EnsureInitWith(const std::map<std::string, std::string>* env) {
  if (HostInert()) return false;
  int state = g_init_state.load(std::memory_order_acquire);
  if (state == kDone) return true;
  if (state == kFresh &&
      g_init_state.compare_exchange_strong(state, kRunning, std::memory_order_acq_rel)) {
    bool ok = false;
    try {
      ok = InitOnce(env != nullptr ? *env : ReadEnvironment());
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

bool EnsureInit() { return EnsureInitWith(nullptr); }

}  // namespace gprof::collector::lifecycle

namespace gprof::collector {

using namespace lifecycle;  // NOLINT: this file's own namespace

namespace {

std::string ThisLibraryPath() {
  Dl_info self{};
  if (::dladdr(reinterpret_cast<void*>(&ThisLibraryPath), &self) == 0 || self.dli_fname == nullptr) {
    return "";
  }
  return self.dli_fname;
}

// Starts GPU collection once (the first caller wins). `late`: CUDA ran before us (attach). Returns
// false when a late start found the driver not initialized (nothing started, nothing claimed).
bool StartGpuOnceOrWait(bool late) {
  Runtime& rt = *g_rt;
  if (!rt.config.cuda) return true;
  int expected = kGpuNone;
  if (!g_gpu_state.compare_exchange_strong(expected, kGpuStarting, std::memory_order_acq_rel)) {
    return true;
  }
  GpuStartResult result =
      WithFlushSignalsBlocked([&] { return StartGpuCollection(rt.config, late); });
  if (result.waiting_for_cuda) {
    g_gpu_state.store(kGpuNone, std::memory_order_release);  // the driver's injection may start it
    return false;
  }
  // libcupti is C++: when it was loaded just now (dlopen; not NEEDED by the program), its static
  // destructors were registered with __cxa_atexit after init's atexit(AtExit), so they would run
  // first at exit and the flush would then call into destroyed CUPTI state (REFERENCE.md
  // section 1: 27 .init_array entries, __cxa_atexit imported). Registering the flush again now
  // puts it before them; the earlier registration stays (the flush is idempotent) for a libcupti
  // that was already in the process.
  if (!result.cupti_library.empty() && std::atexit(&AtExit) != 0) {
    log::Warn("cannot register the exit handler again after loading CUPTI: the exit flush may "
              "run after CUPTI's own teardown");
  }
  if (!result.collecting) log::Warn("GPU collection is off: " + result.status);
  rt.gpu = std::move(result);
  g_gpu_state.store(kGpuStarted, std::memory_order_release);
  g_gpu_waits_for_cuda.store(false, std::memory_order_release);
  return true;
}

void StartGpuOnce(bool late) {
  if (StartGpuOnceOrWait(late) || !late) return;
  // An attach before the program's first CUDA call: have the driver inject this library at cuInit.
  // Set before the second look, so a cuInit between the two either sees the path or is seen.
  if (std::getenv("CUDA_INJECTION64_PATH") == nullptr) {
    const std::string self = ThisLibraryPath();
    if (!self.empty() && ::setenv("CUDA_INJECTION64_PATH", self.c_str(), 0) == 0) {
      g_injection_path_set.store(true, std::memory_order_release);
    }
  }
  if (StartGpuOnceOrWait(late)) return;
  g_gpu_waits_for_cuda.store(true, std::memory_order_release);
  log::Info(g_injection_path_set.load()
                ? "the process has not started CUDA: GPU collection starts at its first CUDA call"
                : "the process has not started CUDA, and its CUDA_INJECTION64_PATH names another "
                  "tool: its GPU work is not recorded");
}

}  // namespace

int OnCudaInjection() noexcept {
  try {
    if (g_injection_path_set.exchange(false, std::memory_order_acq_rel)) {
      ::unsetenv("CUDA_INJECTION64_PATH");  // set by an attach (StartGpuOnce): its work is done
    }
    if (!EnsureInit()) return 1;
    StartGpuOnce(/*late=*/false);
  } catch (...) {
    log::Error("starting GPU collection failed; the profile has host events only");
  }
  return 1;
}

int OnAttach(const char* settings) noexcept {
  try {
    if (g_init_state.load(std::memory_order_acquire) == kDone) {
      // Loaded before: by an earlier attach (its session goes on), or by gprof-run itself.
      if (g_rt != nullptr && g_rt->config.start_paused) return kAttachOk;
      return kAttachAlreadyProfiled;
    }
    // The process's own environment, with the launcher's settings (validated there) on top.
    std::map<std::string, std::string> env = ReadEnvironment();
    for (auto it = env.begin(); it != env.end();) {
      it = it->first.rfind("GPROF_", 0) == 0 ? env.erase(it) : std::next(it);
    }
    const std::string text = settings != nullptr ? settings : "";
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(at, end - at);
      if (const size_t eq = line.find('='); eq != std::string::npos && eq > 0) {
        env[line.substr(0, eq)] = line.substr(eq + 1);
      }
      at = end + 1;
    }
    env["GPROF_START_PAUSED"] = "1";
    if (!EnsureInitWith(&env) || g_rt == nullptr) return kAttachInitFailed;
    if (!g_windows_active || !ControlServerRunning()) return kAttachNoSession;
    StartGpuOnce(/*late=*/true);
    // NVTX clients that have not made their first call yet read this when they do (nvtx3's
    // injection loader); those that already made one stay without a tool.
    Dl_info self{};
    if (::dladdr(reinterpret_cast<void*>(&OnAttach), &self) != 0 && self.dli_fname != nullptr) {
      ::setenv("NVTX_INJECTION64_PATH", self.dli_fname, 0);
    }
    return kAttachOk;
  } catch (...) {
    return kAttachInitFailed;
  }
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

}  // namespace gprof::collector
