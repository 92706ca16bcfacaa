// One call in the target (see ptrace_internal.h): registers set up for the function, run until
// it returns into the fault at address 0, stopped again after a timeout.
#include "launcher/attach/ptrace_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

namespace gprof {
namespace ptrace_detail {

CallResult Injection::Call(const char* what, uint64_t fn, uint64_t arg0, uint64_t arg1) {
  CallResult result;
  const uint64_t return_address = 0;
  if (::pwrite(mem_fd_, &return_address, sizeof(return_address), static_cast<off_t>(call_rsp_)) !=
      static_cast<ssize_t>(sizeof(return_address))) {
    result.text = "cannot write to the stack of " + Who() + ": " + ErrnoText(errno);
    return result;
  }
  user_regs_struct regs = saved_regs_;
  regs.rip = fn;
  regs.rsp = call_rsp_;
  regs.rdi = arg0;
  regs.rsi = arg1;
  regs.rax = 0;
  regs.orig_rax = ~0ULL;  // -1: not in a syscall, so no restart logic when it resumes
  regs.eflags &= ~(kFlagTrap | kFlagDirection);
  if (!Ptrace(PTRACE_SETREGS, nullptr, &regs, &result.text, "PTRACE_SETREGS") ||
      !Ptrace(PTRACE_CONT, nullptr, nullptr, &result.text, "PTRACE_CONT")) {
    return result;
  }
  for (;;) {
    const Event ev = WaitEvent(pid_, our_child_, deadline_);
    if (ev.kind == Event::kGone) return {CallResult::kGone, 0, 0, ev.text};
    if (ev.kind == Event::kFailed) return {CallResult::kFailed, 0, 0, ev.text};
    if (ev.kind == Event::kTimedOut) return StopAfterTimeout(what);
    int sig = 0;
    const StopKind kind = ClassifyStop(ev.status, &sig);
    if (kind == StopKind::kTrap) {
      disturbed_ = true;
      if (!Ptrace(PTRACE_CONT, nullptr, nullptr, &result.text, "PTRACE_CONT")) return result;
      continue;
    }
    if (kind == StopKind::kGroupStop) {
      disturbed_ = true;  // stays stopped until SIGCONT; the timeout still runs
      if (!Ptrace(PTRACE_LISTEN, nullptr, nullptr, &result.text, "PTRACE_LISTEN")) return result;
      continue;
    }
    siginfo_t si;
    std::memset(&si, 0, sizeof(si));
    if (!Ptrace(PTRACE_GETSIGINFO, nullptr, &si, &result.text, "PTRACE_GETSIGINFO")) return result;
    if (IsSynchronousFault(sig, si)) {
      user_regs_struct now{};
      if (!Ptrace(PTRACE_GETREGS, nullptr, &now, &result.text, "PTRACE_GETREGS")) return result;
      if (sig == SIGSEGV && now.rip == 0) return {CallResult::kReturned, now.rax, 0, ""};
      return {CallResult::kCrashed, 0, 0,
              std::string("the call to ") + what + " in " + Who() + " crashed with " +
                  ::strsignal(sig) + " at " + Hex(now.rip) + "; its registers and stack were restored"};
    }
    disturbed_ = true;
    if (!Ptrace(PTRACE_CONT, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)),
                &result.text, "PTRACE_CONT")) {
      return result;
    }
  }
}

// The call did not return in time (a lock the interrupted leader holds, a library that waits):
// stop it again so that everything can be put back.
CallResult Injection::StopAfterTimeout(const char* what) {
  CallResult result;
  disturbed_ = true;
  const std::string late = std::string("the call to ") + what + " in " + Who() +
                           " did not return within " + std::to_string(timeout_.count()) + " ms";
  if (!Ptrace(PTRACE_INTERRUPT, nullptr, nullptr, &result.text, "PTRACE_INTERRUPT")) return result;
  const Clock::time_point deadline = Clock::now() + timeout_;
  for (;;) {
    const Event ev = WaitEvent(pid_, our_child_, deadline);
    if (ev.kind == Event::kGone) return {CallResult::kGone, 0, 0, ev.text};
    if (ev.kind == Event::kFailed) return {CallResult::kFailed, 0, 0, ev.text};
    if (ev.kind == Event::kTimedOut) {
      return {CallResult::kFailed, 0, 0,
              late + " and does not stop; it is left to run our call and released when gprof-run "
                     "exits"};
    }
    int sig = 0;
    const StopKind kind = ClassifyStop(ev.status, &sig);
    if (kind != StopKind::kSignal) {
      return {CallResult::kTimedOut, 0, 0,
              late + " (is a lock held by the interrupted thread?); its registers and stack were "
                     "restored, though locks our call took may stay taken"};
    }
    siginfo_t si;
    std::memset(&si, 0, sizeof(si));
    if (!Ptrace(PTRACE_GETSIGINFO, nullptr, &si, &result.text, "PTRACE_GETSIGINFO")) return result;
    user_regs_struct now{};
    if (!Ptrace(PTRACE_GETREGS, nullptr, &now, &result.text, "PTRACE_GETREGS")) return result;
    if (IsSynchronousFault(sig, si)) {
      if (sig == SIGSEGV && now.rip == 0) return {CallResult::kReturned, now.rax, 0, ""};
      return {CallResult::kCrashed, 0, 0, late + " and then crashed with " + ::strsignal(sig)};
    }
    // Stopped at the delivery of a signal someone sent: restore here and let PTRACE_DETACH
    // deliver it at the program's own registers.
    return {CallResult::kTimedOut, 0, sig,
            late + "; its registers and stack were restored, though locks our call took may stay "
                   "taken"};
  }
}

std::string Injection::ReadTargetString(uint64_t address) {
  std::string out;
  while (out.size() < kMaxString) {
    char chunk[256];
    const size_t to_page_end = 4096 - (address % 4096);
    const size_t want = std::min(sizeof(chunk), to_page_end);
    const ssize_t n = ::pread(mem_fd_, chunk, want, static_cast<off_t>(address));
    if (n <= 0) break;
    const void* nul = std::memchr(chunk, '\0', static_cast<size_t>(n));
    if (nul != nullptr) {
      out.append(chunk, static_cast<size_t>(static_cast<const char*>(nul) - chunk));
      return out;
    }
    out.append(chunk, static_cast<size_t>(n));
    address += static_cast<uint64_t>(n);
  }
  return out;
}

}  // namespace ptrace_detail

}  // namespace gprof
