// Loads a shared library into a running process that is not our child and calls one C function
// in it, through ptrace (the mechanism behind `gprof-run attach PID`; docs/ATTACH.md). Launcher
// process only, x86-64 Linux with glibc >= 2.34 in the target (dlopen and dlsym in libc.so.6).
//
// One call is self-contained: it attaches, calls, restores and detaches on the calling thread
// (ptrace requests must come from the thread that attached), and holds no state afterwards.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace gprof {

struct InjectOutcome {
  bool ok = false;
  std::string error;     // one line a user can act on when !ok
  int64_t entry_rc = 0;  // what the entry function returned (an int, sign-extended)
};

// Makes running process `pid` call dlopen(library, RTLD_NOW) and then the C function `entry` of
// that library as `int entry(const char* arg)`, then restores its registers (general, x87/SSE and
// the full XSAVE state) and the stack bytes it wrote, and lets it continue. Only the thread group
// leader is stopped; other threads keep running. Blocks until done or `timeout_ms` (the wait for
// the calls; a target that does not stop at all is waited for once more as long before giving up).
// `library` is resolved in the target: give an absolute path visible in its mount namespace. The
// library stays loaded (one more dlopen reference per call); a second call for the same library
// reuses the loaded copy and calls `entry` again.
InjectOutcome InjectAndCall(pid_t pid, const std::string& library, const std::string& entry,
                            const std::string& arg, int timeout_ms);

// Why attaching to `pid` would be refused, found without touching it ("" when it looks possible):
// no such process, a zombie, another uid without CAP_SYS_PTRACE, kernel.yama.ptrace_scope, already
// traced, stopped by job control, not x86-64, no glibc libc.so.6 mapped, a glibc without dlopen.
// The texts are listed in docs/ATTACH.md.
std::string AttachRefusal(pid_t pid);

}  // namespace gprof
