// --cpu-sampling's timer backend (cpu_sampler.h): ITIMER_PROF and a SIGPROF handler.
//
// Rules (runs inside the profiled program): the handler runs on whichever program thread the
// kernel charged the CPU time to, at any instruction: it calls only async-signal-safe code
// (clock_gettime, gettid, the unwinder below, the queue's lock-free push), saves and restores
// errno, allocates nothing and takes no lock of ours.
//
// Why ITIMER_PROF: one process-wide CPU-time timer whose signal the kernel delivers to the thread
// that was running (complete_signal prefers the current thread), so threads are sampled in
// proportion to the CPU they use, including threads created later, with no hook on thread
// creation (a timer_create per thread with SIGEV_THREAD_ID would need one).
//
// Why _Unwind_Backtrace: it walks .eh_frame, present in every x86-64 module, so stacks go through
// code built without frame pointers, and it starts from the signal frame (libgcc recognizes the
// kernel's sigreturn trampoline and reports the interrupted PC with ip_before_insn set, which is
// where the handler's own frames end). It is safe in a signal handler where libgcc finds FDEs
// with _dl_find_object (glibc >= 2.35, libgcc >= 12: lock-free, no allocation); WarmNativeStack
// at init does libgcc's one-time set-up outside any handler. Its caveats: on older systems the
// lookup takes the loader's lock (a sample that interrupts dlopen would wait for itself), and with
// libgcc 12 a JIT's __register_frame_info takes libgcc's object mutex. glibc's backtrace() is the
// same unwinder plus a dlopen of libgcc_s on first use (malloc); libunwind is not a dependency.
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <unwind.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <string>

#include "collector/host/cpu_sample_queue.h"
#include "collector/host/cpu_sampler.h"
#include "collector/host/native_stack.h"

namespace gprof::collector::cpu_sampling_internal {
namespace {

std::atomic<bool> g_timer_on{false};
// The process's CPU time at the previous sample: each sample stands for the CPU time since
// (ITIMER_PROF is checked at scheduler ticks, so it fires at most once per tick, and a sample
// may stand for several periods).
std::atomic<uint64_t> g_last_cpu_ns{0};

uint64_t ClockNs(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct SignalWalk {
  uint64_t pcs[kMaxStackDepth];
  uint32_t n = 0;
  bool past_signal_frame = false;
};

_Unwind_Reason_Code SignalFrame(_Unwind_Context* ctx, void* arg) {
  auto* w = static_cast<SignalWalk*>(arg);
  int before_insn = 0;
  const uint64_t pc = _Unwind_GetIPInfo(ctx, &before_insn);
  if (pc == 0) return _URC_END_OF_STACK;
  if (!w->past_signal_frame) {
    if (before_insn == 0) return _URC_NO_REASON;  // the handler's own frames
    w->past_signal_frame = true;
    // The interrupted PC is exact; the symbolizer looks every PC up at pc - 1 (return
    // addresses), so hand it pc + 1 to land on the instruction itself.
    w->pcs[w->n++] = pc + 1;
  } else {
    w->pcs[w->n++] = pc;
  }
  return w->n == kMaxStackDepth ? _URC_END_OF_STACK : _URC_NO_REASON;
}

void OnSigprof(int, siginfo_t*, void*) {
  const int saved_errno = errno;
  if (g_timer_on.load(std::memory_order_relaxed)) {
    SignalWalk walk;
    _Unwind_Backtrace(&SignalFrame, &walk);
    if (walk.n == 0) {
      Queue().CountDropped(1);
    } else {
      const uint64_t cpu = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
      const uint64_t last = g_last_cpu_ns.exchange(cpu, std::memory_order_relaxed);
      Queue().TryPush(ClockNs(CLOCK_REALTIME), static_cast<uint32_t>(::syscall(SYS_gettid)),
                      cpu > last ? cpu - last : 0, walk.pcs, walk.n);
    }
  }
  errno = saved_errno;
}

itimerval Period(uint32_t hz) {
  itimerval it{};
  const uint64_t us = hz >= 1000000 ? 1 : 1000000 / hz;
  it.it_interval.tv_sec = static_cast<time_t>(us / 1000000);
  it.it_interval.tv_usec = static_cast<suseconds_t>(us % 1000000);
  it.it_value = it.it_interval;
  return it;
}

}  // namespace

bool StartTimerSampler(uint32_t hz, std::string* why) noexcept {
  struct sigaction old{};
  if (::sigaction(SIGPROF, nullptr, &old) != 0) {
    *why = "sigaction failed";
    return false;
  }
  const bool has_handler = (old.sa_flags & SA_SIGINFO) != 0
                               ? old.sa_sigaction != nullptr
                               : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
  if (has_handler) {
    *why = "the program has a SIGPROF handler of its own (a profiler of its own?)";
    return false;
  }
  itimerval current{};
  if (::getitimer(ITIMER_PROF, &current) == 0 &&
      (current.it_value.tv_sec != 0 || current.it_value.tv_usec != 0)) {
    *why = "the program's ITIMER_PROF is already running";
    return false;
  }
  WarmNativeStack();
  struct sigaction sa{};
  sa.sa_sigaction = &OnSigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGPROF, &sa, nullptr) != 0) {
    *why = "sigaction(SIGPROF) failed";
    return false;
  }
  g_last_cpu_ns.store(ClockNs(CLOCK_PROCESS_CPUTIME_ID), std::memory_order_relaxed);
  g_timer_on.store(true, std::memory_order_release);
  const itimerval it = Period(hz);
  if (::setitimer(ITIMER_PROF, &it, nullptr) != 0) {
    g_timer_on.store(false, std::memory_order_release);
    *why = "setitimer(ITIMER_PROF) failed";
    return false;
  }
  return true;
}

// The handler stays installed (a no-op from here on): a SIGPROF already pending when the timer
// stops would otherwise end the program (SIGPROF's default action).
void StopTimerSampler() noexcept {
  const itimerval off{};
  ::setitimer(ITIMER_PROF, &off, nullptr);
  g_timer_on.store(false, std::memory_order_release);
}

}  // namespace gprof::collector::cpu_sampling_internal
