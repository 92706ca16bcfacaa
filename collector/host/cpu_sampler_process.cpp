// --cpu-sampling's default backend (cpu_sampler.h): starting and stopping the sampler process
// (gprof-cpu-sampler, cpu_sampler_main.cpp; protocol in cpu_sampler_process.h), which opens the
// perf events on the program's threads and reads their rings outside the program.
//
// Rules: StartProcessSampler and StopProcessSampler run on the thread that starts or stops
// sampling (a program thread, cold); ForgetProcessSamplerInForkChild in a fork child (one thread:
// closes two descriptors, nothing else).
//
// How it starts: clone(CLONE_VM | CLONE_VFORK) on a stack of its own, as glibc's posix_spawn
// does (no copy of the program's memory, no copy-on-write faults for the program afterwards,
// safe in a multithreaded process), twice: an intermediate child with exit signal 0 starts the
// sampler the same way (which then execs) and exits at once. So the sampler is not the program's
// child (the program's wait()/waitpid(-1) must never wait for it: an exec'd child is an ordinary
// child whatever its exit signal, and a program that waits for all its children would wait
// forever for a sampler that waits for the program), and the intermediate, which never execs,
// stays a "clone child": no SIGCHLD for the program, invisible to its wait() (that needs
// __WCLONE or __WALL); we reap it with __WCLONE. Every signal is blocked across the clones, and
// the sampler keeps them blocked. Our descriptors are close-on-exec in the program; only the
// sampler's copies are made inheritable, and it closes every other descriptor it inherits.
//
// Permission: opening per-thread events on another process needs ptrace-read access to it
// (perf_event_open checks PTRACE_MODE_READ_REALCREDS): same user, the program dumpable, and under
// Yama's ptrace_scope 1 the program naming its sampler (PR_SET_PTRACER, before the "go"; one
// name per process, so with the Python sampler process the later of the two wins). Where it is
// refused, the sampler answers why and exits, and cpu_sampler.cpp samples in process instead.
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "collector/host/cpu_perf_rings.h"
#include "collector/host/cpu_sample_queue.h"
#include "collector/host/cpu_sampler.h"
#include "collector/host/cpu_sampler_process.h"

namespace gprof::collector::cpu_sampling_internal {
namespace {

constexpr int kStartTimeoutMs = 5000;
constexpr int kStopTimeoutMs = 5000;
constexpr size_t kSpawnStack = 64 * 1024;

struct ProcessSampler {
  pid_t child = -1;
  int control = -1;  // write end: closing it stops the sampler
  int answers = -1;  // read end: EOF when the sampler has exited
};
ProcessSampler g_process;  // Start and Stop only (cold, serialized by cpu_sampler.cpp)

extern "C" char** environ;

struct Spawn {
  const char* path;
  char* const* argv;
  int inherit[3];      // descriptors the sampler gets (close-on-exec cleared in its copy only)
  char* sampler_stack;  // the top of the sampler's stack
  pid_t sampler;        // written by the intermediate child (shared memory), -1 if not started
};

// The children run on stacks of their own, sharing the program's memory until execve or exit:
// only system calls (and no sanitizer bookkeeping: it would be done in the program's memory,
// for threads that do not exist).
__attribute__((no_sanitize("address", "thread"))) int SamplerChild(void* arg) {
  const auto* s = static_cast<const Spawn*>(arg);
  for (int fd : s->inherit) ::fcntl(fd, F_SETFD, 0);
  ::execve(s->path, s->argv, environ);
  return 127;  // the clone's child exits with it
}

__attribute__((no_sanitize("address", "thread"))) int IntermediateChild(void* arg) {
  auto* s = static_cast<Spawn*>(arg);
  // Returns once the sampler has exec'd (CLONE_VFORK); its parent (this child) then exits, and
  // it is the init process's (or a subreaper's) to reap.
  s->sampler = ::clone(&SamplerChild, s->sampler_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, s);
  return 0;
}

// Waits up to `ms` for `fd` to be readable or closed.
bool WaitReadable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  int r;
  do {
    r = ::poll(&p, 1, ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

// The sampler is not our child: its end is the answer pipe's EOF (its last descriptor closes).
void Abandon(ProcessSampler* s) {
  ::close(s->control);
  if (!WaitReadable(s->answers, kStopTimeoutMs)) ::kill(s->child, SIGKILL);
  ::close(s->answers);
  *s = ProcessSampler{};
}

pid_t SpawnSampler(const std::string& exe, uint32_t hz, bool refuse, int control, int answers,
                   std::string* why) {
  const std::string args[] = {exe,
                              std::to_string(::getpid()),
                              std::to_string(hz),
                              std::to_string(control),
                              std::to_string(answers),
                              std::to_string(Queue().fd()),
                              std::to_string(kCpuSampleQueueSlots),
                              refuse ? "1" : "0"};
  char* argv[9];
  for (size_t i = 0; i < 8; ++i) argv[i] = const_cast<char*>(args[i].c_str());
  argv[8] = nullptr;
  void* stacks = ::mmap(nullptr, 2 * kSpawnStack, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stacks == MAP_FAILED) {
    *why = std::string("mmap: ") + std::strerror(errno);
    return -1;
  }
  Spawn spawn{exe.c_str(), argv, {control, answers, Queue().fd()},
              static_cast<char*>(stacks) + 2 * kSpawnStack, -1};
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  // Exit signal 0 (the low byte of the flags): no SIGCHLD, invisible to the program's wait().
  const pid_t intermediate = ::clone(&IntermediateChild, static_cast<char*>(stacks) + kSpawnStack,
                                     CLONE_VM | CLONE_VFORK, &spawn);
  const int clone_errno = errno;
  if (intermediate > 0) {
    int status = 0;
    while (::waitpid(intermediate, &status, __WCLONE) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::munmap(stacks, 2 * kSpawnStack);  // both children have exec'd or exited (CLONE_VFORK)
  if (intermediate < 0) {
    *why = std::string("clone: ") + std::strerror(clone_errno);
    return -1;
  }
  if (spawn.sampler < 0) *why = "clone of the sampler process failed";
  return spawn.sampler;
}

}  // namespace

bool StartProcessSampler(uint32_t hz, bool refuse_for_test, const std::string& exe,
                         std::string* why) noexcept {
  try {
    if (Queue().fd() < 0) {
      *why = "the sample queue is not shared memory (memfd_create refused)";
      return false;
    }
    if (::access(exe.c_str(), X_OK) != 0) {
      *why = exe + ": " + std::strerror(errno);
      return false;
    }
    int control[2], answers[2];
    if (::pipe2(control, O_CLOEXEC) != 0) {
      *why = std::string("pipe: ") + std::strerror(errno);
      return false;
    }
    if (::pipe2(answers, O_CLOEXEC) != 0) {
      *why = std::string("pipe: ") + std::strerror(errno);
      ::close(control[0]);
      ::close(control[1]);
      return false;
    }
    const pid_t child = SpawnSampler(exe, hz, refuse_for_test, control[0], answers[1], why);
    ::close(control[0]);
    ::close(answers[1]);
    if (child < 0) {
      ::close(control[1]);
      ::close(answers[0]);
      return false;
    }
    g_process = ProcessSampler{child, control[1], answers[0]};
    // Under Yama's ptrace_scope 1 only an ancestor may read a process, unless it names its reader.
    ::prctl(PR_SET_PTRACER, static_cast<unsigned long>(child), 0, 0, 0);
    const char go = 'g';
    StartAnswer answer{static_cast<int32_t>(PerfRingsError::kOpen), 0};
    const bool answered = ::write(g_process.control, &go, 1) == 1 &&
                          WaitReadable(g_process.answers, kStartTimeoutMs) &&
                          ::read(g_process.answers, &answer, sizeof answer) == sizeof answer;
    if (answered && answer.error == static_cast<int32_t>(PerfRingsError::kNone)) return true;
    *why = !answered ? std::string("the sampler process did not answer")
                     : std::string(PerfRingsErrorText(static_cast<PerfRingsError>(answer.error))) +
                           " to the sampler process: " + std::strerror(answer.err_no);
    Abandon(&g_process);
    return false;
  } catch (...) {
    *why = "out of memory";
    return false;
  }
}

void StopProcessSampler() noexcept {
  if (g_process.child <= 0) return;
  Abandon(&g_process);  // it disables the events and reads every ring once more, then exits
}

void ForgetProcessSamplerInForkChild() noexcept {
  // A fork child must not keep the sampler alive (it holds the control pipe's write end), and
  // the sampler is not its child to wait for.
  if (g_process.control >= 0) ::close(g_process.control);
  if (g_process.answers >= 0) ::close(g_process.answers);
  g_process = ProcessSampler{};
}

}  // namespace gprof::collector::cpu_sampling_internal
