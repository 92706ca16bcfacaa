// Attaching (see ptrace_internal.h): why an attach would be refused, read off /proc; waiting for
// the tracee; seizing the leader, saving its state and writing the strings the calls use.
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

// /proc files report size 0: read until EOF.
bool ReadProcFile(const std::string& path, std::string* out, int* err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return false;
  }
  out->clear();
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = errno;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// The value of "Key:\t..." in /proc/PID/status, "" when absent.
std::string StatusField(const std::string& status, const std::string& key) {
  const std::string needle = key + ":";
  size_t pos = 0;
  while (pos < status.size()) {
    size_t end = status.find('\n', pos);
    if (end == std::string::npos) end = status.size();
    if (status.compare(pos, needle.size(), needle) == 0) {
      size_t v = pos + needle.size();
      while (v < end && (status[v] == ' ' || status[v] == '\t')) ++v;
      return status.substr(v, end - v);
    }
    pos = end + 1;
  }
  return "";
}

// The first `count` whitespace-separated unsigned numbers of a status value ("Uid:" has four).
std::vector<uint64_t> Numbers(const std::string& value, int base) {
  std::vector<uint64_t> out;
  const char* p = value.c_str();
  for (;;) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(p, &end, base);
    if (end == p || errno != 0) break;
    out.push_back(v);
    p = end;
  }
  return out;
}

// "uid 1000", or "uid 1000 (effective 0, saved 0)" for a process whose ids differ (setuid).
std::string IdsText(const char* kind, const std::vector<uint64_t>& ids) {
  if (ids.size() < 3) return std::string(kind) + " ?";
  std::string text = std::string(kind) + " " + std::to_string(ids[0]);
  if (ids[1] != ids[0] || ids[2] != ids[0]) {
    text += " (effective " + std::to_string(ids[1]) + ", saved " + std::to_string(ids[2]) + ")";
  }
  return text;
}

bool HaveCapSysPtrace() {
  std::string status;
  int err = 0;
  if (!ReadProcFile("/proc/self/status", &status, &err)) return false;
  const std::vector<uint64_t> caps = Numbers(StatusField(status, "CapEff"), 16);
  return !caps.empty() && ((caps[0] >> CAP_SYS_PTRACE) & 1) != 0;
}

// Yama's ptrace_scope 1 still lets a process trace its descendants.
bool IsOurDescendant(pid_t pid) {
  const pid_t self = ::getpid();
  for (int hops = 0; hops < 256 && pid > 1; ++hops) {
    std::string status;
    int err = 0;
    if (!ReadProcFile("/proc/" + std::to_string(pid) + "/status", &status, &err)) return false;
    const std::vector<uint64_t> ppid = Numbers(StatusField(status, "PPid"), 10);
    if (ppid.empty()) return false;
    if (static_cast<pid_t>(ppid[0]) == self) return true;
    pid = static_cast<pid_t>(ppid[0]);
  }
  return false;
}

// Polls (waitpid has no timeout) for the next stop or the end of `pid`. The end of our own child
// is only peeked at (WNOWAIT) so that its status stays with the code that started it; the end of
// another process is reaped, which hands it on to its real parent.
Event WaitEvent(pid_t pid, bool our_child, Clock::time_point deadline) {
  for (;;) {
    siginfo_t si;
    std::memset(&si, 0, sizeof(si));
    if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) !=
        0) {
      if (errno == EINTR) continue;
      if (errno == ECHILD) return {Event::kGone, 0, "is gone"};
      return {Event::kFailed, 0, "waitid: " + ErrnoText(errno)};
    }
    if (si.si_pid == pid) {
      if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
        std::string text = si.si_code == CLD_EXITED
                               ? "exited with status " + std::to_string(si.si_status)
                               : "was killed by signal " + std::to_string(si.si_status) + " (" +
                                     ::strsignal(si.si_status) + ")";
        if (!our_child) {
          int st = 0;
          ::waitpid(pid, &st, __WALL | WNOHANG);
        }
        return {Event::kGone, 0, text};
      }
      int st = 0;
      const pid_t w = ::waitpid(pid, &st, __WALL | WNOHANG);
      if (w == pid && WIFSTOPPED(st)) return {Event::kStop, st, ""};
      if (w < 0 && errno != EINTR) return {Event::kFailed, 0, "waitpid: " + ErrnoText(errno)};
      continue;
    }
    if (Clock::now() >= deadline) return {Event::kTimedOut, 0, ""};
    const timespec pause{0, 200 * 1000};
    ::nanosleep(&pause, nullptr);
  }
}

StopKind ClassifyStop(int status, int* sig) {
  *sig = WSTOPSIG(status);
  if ((status >> 16) == PTRACE_EVENT_STOP) {
    const bool stop_signal = *sig == SIGSTOP || *sig == SIGTSTP || *sig == SIGTTIN || *sig == SIGTTOU;
    return stop_signal ? StopKind::kGroupStop : StopKind::kTrap;
  }
  if ((status >> 16) != 0) return StopKind::kTrap;  // an event we did not ask for: just go on
  return StopKind::kSignal;
}

// A fault the thread caused itself (not one sent with kill or tgkill).
bool IsSynchronousFault(int sig, const siginfo_t& si) {
  return si.si_code > 0 &&
         (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP);
}

bool Injection::Ptrace(__ptrace_request request, void* addr, void* data, std::string* error,
                       const char* name) {
  if (::ptrace(request, pid_, addr, data) == 0) return true;
  *error = std::string("ptrace(") + name + ") on " + Who() + " failed: " + ErrnoText(errno);
  return false;
}

std::string Injection::Attach() {
  if (::ptrace(PTRACE_SEIZE, pid_, nullptr, nullptr) != 0) {
    const int err = errno;
    if (err == ESRCH) return "no process with pid " + std::to_string(pid_) + " (it has exited)";
    return "ptrace(PTRACE_SEIZE) on " + Who() + " was refused (" + ErrnoText(err) +
           "): run gprof-run attach as the process's user, or as root / with CAP_SYS_PTRACE";
  }
  std::string error;
  if (!Ptrace(PTRACE_INTERRUPT, nullptr, nullptr, &error, "PTRACE_INTERRUPT")) return error;
  deadline_ = Clock::now() + timeout_;
  for (bool second_wait = false;;) {
    const Event ev = WaitEvent(pid_, our_child_, deadline_);
    if (ev.kind == Event::kGone) {
      return Who() + " " + ev.text + " while gprof-run was attaching; nothing was injected";
    }
    if (ev.kind == Event::kFailed) return ev.text;
    if (ev.kind == Event::kTimedOut) {
      if (second_wait) {
        return Who() + " did not stop within 2 x " + std::to_string(timeout_.count()) +
               " ms (uninterruptible sleep?); nothing was injected, and it is released when "
               "gprof-run exits";
      }
      // Still in a ptrace-less state we cannot detach from: wait as long once more.
      second_wait = true;
      deadline_ = Clock::now() + timeout_;
      continue;
    }
    int sig = 0;
    switch (ClassifyStop(ev.status, &sig)) {
      case StopKind::kTrap:
        if (second_wait) {
          ::ptrace(PTRACE_DETACH, pid_, nullptr, nullptr);
          return Who() + " did not stop within " + std::to_string(timeout_.count()) +
                 " ms; nothing was injected";
        }
        return "";
      case StopKind::kGroupStop:
        ::ptrace(PTRACE_DETACH, pid_, nullptr, nullptr);  // it stays in its group-stop
        return Who() + " is stopped (job control): resume it with `kill -CONT " +
               std::to_string(pid_) + "` and try again";
      case StopKind::kSignal:
        // Nothing changed yet: deliver it as if we were not here, then our trap follows.
        if (!Ptrace(PTRACE_CONT, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)),
                    &error, "PTRACE_CONT")) {
          return error;
        }
        break;
    }
  }
}

std::string Injection::SaveState() {
  std::string error;
  if (!Ptrace(PTRACE_GETREGS, nullptr, &saved_regs_, &error, "PTRACE_GETREGS")) return error;
  if (saved_regs_.cs != kUserCs64) return Who() + " runs 32-bit code: only x86-64 is supported";
  if (!Ptrace(PTRACE_GETFPREGS, nullptr, &saved_fpregs_, &error, "PTRACE_GETFPREGS")) return error;
  // The XSAVE area holds what GETFPREGS does not (the upper halves of the AVX and AVX-512
  // registers, ...); our calls' memcpy and strlen use them. 32 KiB covers AMX's 11 KiB too.
  saved_xstate_.resize(32 * 1024);
  iovec iov{saved_xstate_.data(), saved_xstate_.size()};
  if (::ptrace(PTRACE_GETREGSET, pid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) == 0) {
    saved_xstate_.resize(iov.iov_len);
  } else {
    saved_xstate_.clear();
  }
  const std::string mem = "/proc/" + std::to_string(pid_) + "/mem";
  mem_fd_ = ::open(mem.c_str(), O_RDWR | O_CLOEXEC);
  if (mem_fd_ < 0) return "cannot open " + mem + ": " + ErrnoText(errno);
  return "";
}

std::string Injection::WriteStrings(const std::string& library, const std::string& entry,
                                    const std::string& arg) {
  for (const std::string* s : {&library, &entry, &arg}) {
    if (s->size() >= kMaxString || s->find('\0') != std::string::npos) {
      return "library, entry and argument must be shorter than 4096 bytes, without NUL bytes";
    }
  }
  std::string blob = library + '\0' + entry + '\0' + arg + '\0';
  const uint64_t red_zone_end = saved_regs_.rsp - kRedZone;
  const uint64_t strings = (red_zone_end - blob.size()) & ~uint64_t{15};
  // At function entry rsp + 8 is 16-byte aligned: the call pushed the return address.
  call_rsp_ = ((strings - 64) & ~uint64_t{15}) - 8;
  scratch_lo_ = call_rsp_;
  library_at_ = strings;
  entry_at_ = strings + library.size() + 1;
  arg_at_ = entry_at_ + entry.size() + 1;
  // Only write into the writable mapping the stack pointer is in (the kernel does not grow the
  // stack for /proc/PID/mem).
  std::string maps_text;
  int err = 0;
  if (!ReadProcFile("/proc/" + std::to_string(pid_) + "/maps", &maps_text, &err)) {
    return "cannot read /proc/" + std::to_string(pid_) + "/maps: " + ErrnoText(err);
  }
  bool fits = false;
  for (const MapEntry& m : ParseMaps(maps_text)) {
    if (m.start <= scratch_lo_ && saved_regs_.rsp <= m.end && m.perms.size() >= 2 &&
        m.perms[0] == 'r' && m.perms[1] == 'w') {
      fits = true;
    }
  }
  if (!fits) {
    return "the stack pointer of " + Who() + " (" + Hex(saved_regs_.rsp) +
           ") has no room below it for the call";
  }
  saved_stack_.resize(red_zone_end - scratch_lo_);
  if (::pread(mem_fd_, saved_stack_.data(), saved_stack_.size(), static_cast<off_t>(scratch_lo_)) !=
      static_cast<ssize_t>(saved_stack_.size())) {
    saved_stack_.clear();
    return "cannot read the stack of " + Who() + ": " + ErrnoText(errno);
  }
  if (::pwrite(mem_fd_, blob.data(), blob.size(), static_cast<off_t>(strings)) !=
      static_cast<ssize_t>(blob.size())) {
    return "cannot write to the stack of " + Who() + ": " + ErrnoText(errno);
  }
  return "";
}

}  // namespace ptrace_detail

using namespace ptrace_detail;

std::string AttachRefusal(pid_t pid) {
#if !defined(__x86_64__) || !defined(__linux__)
  (void)pid;
  return "gprof-run attach supports x86-64 Linux only";
#else
  const std::string who = "process " + std::to_string(pid);
  const std::string proc = "/proc/" + std::to_string(pid);
  if (pid <= 0) return "no process with pid " + std::to_string(pid);
  if (pid == ::getpid()) return "gprof-run cannot attach to itself";
  std::string status;
  int err = 0;
  if (!ReadProcFile(proc + "/status", &status, &err)) {
    return "no process with pid " + std::to_string(pid) + " (it has exited, or never existed)";
  }
  // /proc/PID also answers for a thread id that is not a process: ask for the group leader.
  const std::vector<uint64_t> tgid = Numbers(StatusField(status, "Tgid"), 10);
  if (!tgid.empty() && static_cast<pid_t>(tgid[0]) != pid) {
    return std::to_string(pid) + " is a thread of process " + std::to_string(tgid[0]) +
           ": attach to the process";
  }
  const std::string state = StatusField(status, "State");
  if (!state.empty() && (state[0] == 'Z' || state[0] == 'X')) {
    return who + " has exited (a zombie its parent has not reaped yet)";
  }
  const bool cap_sys_ptrace = HaveCapSysPtrace();
  const std::vector<uint64_t> uids = Numbers(StatusField(status, "Uid"), 10);
  const std::vector<uint64_t> gids = Numbers(StatusField(status, "Gid"), 10);
  // The kernel's rule (ptrace_may_access): our fsuid must equal the target's real, effective and
  // saved uid, the same for gids, unless we have CAP_SYS_PTRACE.
  bool same_ids = uids.size() >= 3 && gids.size() >= 3;
  for (size_t i = 0; same_ids && i < 3; ++i) {
    same_ids = uids[i] == ::geteuid() && gids[i] == ::getegid();
  }
  if (!same_ids && !cap_sys_ptrace) {
    return who + " runs as " + IdsText("uid", uids) + ", " + IdsText("gid", gids) +
           " and gprof-run as uid " + std::to_string(::geteuid()) + ", gid " +
           std::to_string(::getegid()) +
           " without CAP_SYS_PTRACE: run gprof-run attach as that user, or as root / with "
           "CAP_SYS_PTRACE";
  }
  std::string scope_text;
  if (ReadProcFile("/proc/sys/kernel/yama/ptrace_scope", &scope_text, &err)) {
    const int scope = std::atoi(scope_text.c_str());
    const std::string head = "kernel.yama.ptrace_scope is " + std::to_string(scope);
    const std::string allow =
        ": allow attaching with `sysctl kernel.yama.ptrace_scope=0`, or run gprof-run as root / "
        "with CAP_SYS_PTRACE";
    if (scope == 1 && !cap_sys_ptrace && !IsOurDescendant(pid)) {
      return head + " (a process may only ptrace its own descendants)" + allow;
    }
    if (scope == 2 && !cap_sys_ptrace) return head + " (only CAP_SYS_PTRACE may ptrace)" + allow;
    if (scope >= 3) {
      return head + " (ptrace attach is disabled until the next reboot): gprof-run attach "
                    "cannot work on this machine; start the program under gprof-run instead";
    }
  }
  const std::vector<uint64_t> tracer = Numbers(StatusField(status, "TracerPid"), 10);
  if (!tracer.empty() && tracer[0] != 0) {
    return who + " is already traced by process " + std::to_string(tracer[0]) +
           " (a debugger or another profiler): detach that first";
  }
  if (!state.empty() && (state[0] == 'T' || state[0] == 't')) {
    return who + " is stopped (job control): resume it with `kill -CONT " + std::to_string(pid) +
           "` and try again";
  }
  // The program's own ELF header says its architecture.
  const int exe = ::open((proc + "/exe").c_str(), O_RDONLY | O_CLOEXEC);
  if (exe < 0) {
    return "cannot open " + proc + "/exe (" + ErrnoText(errno) +
           "): the process may not be dumpable (setuid?); run gprof-run attach as root / with "
           "CAP_SYS_PTRACE";
  }
  unsigned char ident[sizeof(Elf64_Ehdr)] = {};
  const ssize_t got = ::pread(exe, ident, sizeof(ident), 0);
  ::close(exe);
  Elf64_Half machine = 0;
  if (got == static_cast<ssize_t>(sizeof(ident))) std::memcpy(&machine, ident + offsetof(Elf64_Ehdr, e_machine), sizeof(machine));
  if (got != static_cast<ssize_t>(sizeof(ident)) || std::memcmp(ident, ELFMAG, SELFMAG) != 0 ||
      ident[EI_CLASS] != ELFCLASS64 || machine != EM_X86_64) {
    return who + " is not an x86-64 program: gprof-run attach supports x86-64 Linux only";
  }
  std::string maps_text;
  if (!ReadProcFile(proc + "/maps", &maps_text, &err)) {
    return "cannot read " + proc + "/maps (" + ErrnoText(err) +
           "): run gprof-run attach as the process's user, or as root / with CAP_SYS_PTRACE";
  }
  TargetLibc libc;
  return LocateLibc(pid, ParseMaps(maps_text), &libc);
#endif
}

}  // namespace gprof
