// The ptrace injector's parts (see ptrace_inject.h and docs/ATTACH.md), one file per phase:
// attach.cpp (refusals, seizing, saving, the strings), remote_call.cpp (one call in the target),
// dlopen.cpp (the target's libc and the dlopen/dlsym/entry sequence), detach.cpp (restoring).
// Launcher process only; every ptrace request of one InjectAndCall comes from the thread that
// called it, the one that attached.
//
// The sequence, on the target's thread group leader only (other threads keep running):
//   PTRACE_SEIZE + PTRACE_INTERRUPT (no SIGSTOP: a job-control stop would be visible to the
//   target's parent) -> save the general registers, the x87/SSE registers and the XSAVE area ->
//   write the three strings below the stack pointer, past the 128-byte red zone -> for each of
//   dlopen, [dlerror], dlsym, [dlerror], entry: registers = saved ones with rip = the function,
//   rdi/rsi = its arguments, rsp 16-byte aligned at the call with a return address of 0 pushed,
//   orig_rax = -1 -> PTRACE_CONT until the call returns into the SIGSEGV at rip 0 -> write the
//   stack bytes and all registers back -> PTRACE_DETACH, which suppresses that SIGSEGV.
//
// Signals that reach the leader while we hold it are never swallowed: one that arrives before we
// changed anything, or while one of our calls runs, is passed on at once (PTRACE_CONT with it),
// so the program's handler or the default action runs exactly as it would have (a handler then
// runs on top of our call, as it would on top of the program's own code); one that stops us from
// restoring after a timeout is delivered by PTRACE_DETACH at the restored registers.
//
// Syscall restart: a leader interrupted inside a blocking syscall stops with rax = -ERESTART*
// and orig_rax = the syscall. Our calls run with orig_rax = -1, so the kernel applies no restart
// logic to them; the restored registers give it back its own, and the kernel then restarts the
// syscall (or returns EINTR) exactly as after a signal that had no handler.
#pragma once

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "launcher/attach/ptrace_inject.h"

namespace gprof {
namespace ptrace_detail {

using Clock = std::chrono::steady_clock;

inline std::string ErrnoText(int err) { return std::strerror(err); }

inline std::string Hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, value);
  return buf;
}

// /proc (attach.cpp).
bool ReadProcFile(const std::string& path, std::string* out, int* err);
std::string StatusField(const std::string& status, const std::string& key);
std::vector<uint64_t> Numbers(const std::string& value, int base);

struct MapEntry {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;
  unsigned dev_major = 0;
  unsigned dev_minor = 0;
  uint64_t inode = 0;
  std::string perms;
  std::string path;  // without the " (deleted)" the kernel appends to a replaced file
};

// --- the target's libc.so.6 ELF file: where dlopen, dlsym and dlerror are -----------------------

struct LibcSymbols {
  uint64_t load_bias = 0;  // added to a symbol's st_value gives its address in the target
  uint64_t dlopen = 0;
  uint64_t dlsym = 0;
  uint64_t dlerror = 0;
};

struct TargetLibc {
  std::string path;
  LibcSymbols symbols;
};

// The target's mappings and libc (dlopen.cpp).
std::vector<MapEntry> ParseMaps(const std::string& text);
std::string LocateLibc(pid_t pid, const std::vector<MapEntry>& maps, TargetLibc* out);

// --- waiting for the tracee ---------------------------------------------------------------------

struct Event {
  enum Kind { kStop, kGone, kTimedOut, kFailed } kind = kFailed;
  int status = 0;    // waitpid status, for kStop
  std::string text;  // kGone: how it ended ("exited with status 3"); kFailed: what failed
};
Event WaitEvent(pid_t pid, bool our_child, Clock::time_point deadline);  // attach.cpp

enum class StopKind {
  kTrap,       // PTRACE_EVENT_STOP with SIGTRAP: our PTRACE_INTERRUPT, or a wake-up after LISTEN
  kGroupStop,  // PTRACE_EVENT_STOP with a stop signal: job control stopped the process
  kSignal,     // signal-delivery-stop: `sig` is about to be delivered
};
StopKind ClassifyStop(int status, int* sig);                // attach.cpp
bool IsSynchronousFault(int sig, const siginfo_t& si);      // attach.cpp

// Kernel-internal syscall return values (include/linux/errno.h) that user space sees only in a
// ptrace-stop of a thread interrupted inside a syscall.
constexpr long long kErestartNoIntr = -513;
constexpr long long kErestartRestartBlock = -516;

constexpr unsigned long long kFlagTrap = 1ULL << 8;        // TF
constexpr unsigned long long kFlagDirection = 1ULL << 10;  // DF: clear at a call (x86-64 ABI)
constexpr unsigned long long kUserCs64 = 0x33;             // __USER_CS: 64-bit user code
constexpr uint64_t kRedZone = 128;
constexpr size_t kMaxString = 4096;

// --- one injection ------------------------------------------------------------------------------

struct CallResult {
  enum Kind { kReturned, kGone, kTimedOut, kCrashed, kFailed } kind = kFailed;
  uint64_t value = 0;   // rax, for kReturned
  int pending_sig = 0;  // kTimedOut: a signal whose delivery-stop we restore in; delivered at detach
  std::string text;
};

class Injection {
 public:
  Injection(pid_t pid, bool our_child, int timeout_ms)
      : pid_(pid), our_child_(our_child), timeout_(std::chrono::milliseconds(std::max(timeout_ms, 1))) {}
  Injection(const Injection&) = delete;
  Injection& operator=(const Injection&) = delete;
  ~Injection() {
    if (mem_fd_ >= 0) ::close(mem_fd_);
  }

  InjectOutcome Run(const TargetLibc& libc, const std::string& library, const std::string& entry,
                    const std::string& arg);

 private:
  std::string Who() const { return "process " + std::to_string(pid_); }
  std::string Attach();
  std::string SaveState();
  std::string WriteStrings(const std::string& library, const std::string& entry,
                           const std::string& arg);
  CallResult Call(const char* what, uint64_t fn, uint64_t arg0, uint64_t arg1);
  CallResult StopAfterTimeout(const char* what);
  std::string ReadTargetString(uint64_t address);
  std::string Restore(int deliver_sig);
  bool Ptrace(__ptrace_request request, void* addr, void* data, std::string* error,
              const char* name);

  const pid_t pid_;
  const bool our_child_;
  const std::chrono::milliseconds timeout_;
  Clock::time_point deadline_;
  int mem_fd_ = -1;
  user_regs_struct saved_regs_{};
  user_fpregs_struct saved_fpregs_{};
  std::vector<uint8_t> saved_xstate_;  // empty: the kernel has no NT_X86_XSTATE
  uint64_t scratch_lo_ = 0;            // lowest stack byte we write; saved_stack_ starts there
  std::vector<uint8_t> saved_stack_;
  uint64_t call_rsp_ = 0;
  uint64_t library_at_ = 0, entry_at_ = 0, arg_at_ = 0;
  // Any stop during our calls other than their returns (a signal passed on, a group stop, our
  // timeout interrupt): a syscall inside them may have replaced the kernel's restart block.
  bool disturbed_ = false;
};

}  // namespace ptrace_detail
}  // namespace gprof
