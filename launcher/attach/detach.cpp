// Detaching (see ptrace_internal.h): the stack bytes and every register put back, then
// PTRACE_DETACH, delivering a signal that arrived while we held the leader.
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

std::string Injection::Restore(int deliver_sig) {
  std::string error;
  if (!saved_stack_.empty() &&
      ::pwrite(mem_fd_, saved_stack_.data(), saved_stack_.size(), static_cast<off_t>(scratch_lo_)) !=
          static_cast<ssize_t>(saved_stack_.size())) {
    error = "cannot restore the stack of " + Who() + ": " + ErrnoText(errno);
  }
  bool fp_ok = false;
  if (!saved_xstate_.empty()) {
    iovec iov{saved_xstate_.data(), saved_xstate_.size()};
    fp_ok = ::ptrace(PTRACE_SETREGSET, pid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) == 0;
  }
  if (!fp_ok && !Ptrace(PTRACE_SETFPREGS, nullptr, &saved_fpregs_, &error, "PTRACE_SETFPREGS")) {
    // error says what failed; the general registers matter more, go on.
  }
  user_regs_struct regs = saved_regs_;
  // Interrupted inside nanosleep, poll or a timed futex wait, the kernel resumes such a syscall
  // from the thread's restart block, which a syscall of ours may have replaced if it was itself
  // interrupted: restart the original syscall from its start instead (same arguments; a relative
  // timeout then counts again from now, i.e. it may sleep longer, never shorter).
  if (disturbed_ && static_cast<long long>(regs.orig_rax) >= 0 &&
      static_cast<long long>(regs.rax) == kErestartRestartBlock) {
    regs.rax = static_cast<unsigned long long>(kErestartNoIntr);
  }
  std::string regs_error;
  if (!Ptrace(PTRACE_SETREGS, nullptr, &regs, &regs_error, "PTRACE_SETREGS")) {
    error = regs_error;
  }
  std::string detach_error;
  if (!Ptrace(PTRACE_DETACH, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(deliver_sig)),
              &detach_error, "PTRACE_DETACH") &&
      error.empty()) {
    error = detach_error;
  }
  return error;
}

}  // namespace ptrace_detail

}  // namespace gprof
