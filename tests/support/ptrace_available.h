// Whether this environment lets a process ptrace (for the attach tests: they skip without it).
#pragma once

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace gprof::testing {

// "" when PTRACE_SEIZE of a child works here, else why not. Probed once.
inline std::string PtraceUnavailable() {
  static const std::string reason = [] {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::string("pipe2 failed");
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(fds[1]);
      char c;
      (void)!::read(fds[0], &c, 1);
      ::_exit(0);
    }
    ::close(fds[0]);
    std::string why;
    if (::ptrace(PTRACE_SEIZE, child, nullptr, nullptr) != 0) {
      why = std::string("ptrace(PTRACE_SEIZE) on a child failed (") + std::strerror(errno) +
            "): this environment does not allow ptrace (no CAP_SYS_PTRACE, "
            "kernel.yama.ptrace_scope, or a seccomp filter)";
    }
    ::close(fds[1]);
    int status = 0;
    ::waitpid(child, &status, __WALL);
    return why;
  }();
  return reason;
}

}  // namespace gprof::testing
