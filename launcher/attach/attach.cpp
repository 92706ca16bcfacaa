// The ptrace injector (see ptrace_inject.h and docs/ATTACH.md). Launcher process only; every
// ptrace request of one InjectAndCall comes from the thread that called it, the one that attached.
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
#include "launcher/ptrace_inject.h"

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
namespace {

using Clock = std::chrono::steady_clock;

std::string ErrnoText(int err) { return std::strerror(err); }

std::string Hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, value);
  return buf;
}

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

std::vector<MapEntry> ParseMaps(const std::string& text) {
  std::vector<MapEntry> maps;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    unsigned dev_major = 0, dev_minor = 0;
    char perms[8] = {};
    int consumed = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset,
                    &dev_major, &dev_minor, &inode, &consumed) < 7) {
      continue;
    }
    MapEntry m;
    m.start = start;
    m.end = end;
    m.offset = offset;
    m.dev_major = dev_major;
    m.dev_minor = dev_minor;
    m.inode = inode;
    m.perms = perms;
    if (consumed > 0 && static_cast<size_t>(consumed) <= line.size()) m.path = line.substr(consumed);
    const std::string deleted = " (deleted)";
    if (m.path.size() > deleted.size() &&
        m.path.compare(m.path.size() - deleted.size(), deleted.size(), deleted) == 0) {
      m.path.resize(m.path.size() - deleted.size());
    }
    maps.push_back(m);
  }
  return maps;
}

bool IsGlibcPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  return path.compare(slash == std::string::npos ? 0 : slash + 1, std::string::npos,
                      "libc.so.6") == 0;
}

// The mapping of the target's libc.so.6 at file offset 0 (its load address), or nullptr.
const MapEntry* FindLibcMapping(const std::vector<MapEntry>& maps) {
  const MapEntry* best = nullptr;
  for (const MapEntry& m : maps) {
    if (m.offset == 0 && m.inode != 0 && IsGlibcPath(m.path) && (best == nullptr || m.start < best->start)) {
      best = &m;
    }
  }
  return best;
}

// --- the target's libc.so.6 ELF file: where dlopen, dlsym and dlerror are -----------------------

struct LibcSymbols {
  uint64_t load_bias = 0;  // added to a symbol's st_value gives its address in the target
  uint64_t dlopen = 0;
  uint64_t dlsym = 0;
  uint64_t dlerror = 0;
};

bool ReadWholeFile(int fd, std::vector<uint8_t>* out) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > (512 << 20)) return false;
  out->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out->size()) {
    const ssize_t n = ::pread(fd, out->data() + done, out->size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads .dynsym (with .gnu.version, to prefer the default version of a name that has several,
// like glibc's dlopen@@GLIBC_2.34 next to dlopen@GLIBC_2.2.5) of a 64-bit x86-64 ELF image.
// Returns "" or what is wrong with the file; a missing symbol leaves its address 0.
std::string ReadDynamicSymbols(const std::vector<uint8_t>& image, uint64_t map_start,
                               LibcSymbols* out) {
  const size_t size = image.size();
  auto in_bounds = [size](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
  if (!in_bounds(0, sizeof(Elf64_Ehdr))) return "too short for an ELF header";
  Elf64_Ehdr eh;
  std::memcpy(&eh, image.data(), sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_machine != EM_X86_64) {
    return "not a 64-bit x86-64 ELF file";
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !in_bounds(eh.e_phoff, uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr)) ||
      !in_bounds(eh.e_shoff, uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr))) {
    return "broken program or section header table";
  }
  // The mapping at file offset 0 is the PT_LOAD segment whose page-rounded offset is 0.
  bool have_first_load = false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, image.data() + eh.e_phoff + i * sizeof(Elf64_Phdr), sizeof(ph));
    if (ph.p_type == PT_LOAD && (ph.p_offset & ~uint64_t{0xfff}) == 0) {
      out->load_bias = map_start - (ph.p_vaddr & ~uint64_t{0xfff});
      have_first_load = true;
      break;
    }
  }
  if (!have_first_load) return "no loadable segment at file offset 0";
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (eh.e_shnum > 0) {
    std::memcpy(sections.data(), image.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  }
  int dynsym = -1;
  for (unsigned i = 0; i < sections.size(); ++i) {
    if (sections[i].sh_type == SHT_DYNSYM) dynsym = static_cast<int>(i);
  }
  if (dynsym < 0) return "no .dynsym section";
  const Elf64_Shdr& symtab = sections[static_cast<size_t>(dynsym)];
  if (symtab.sh_link >= sections.size() || symtab.sh_entsize != sizeof(Elf64_Sym) ||
      !in_bounds(symtab.sh_offset, symtab.sh_size)) {
    return "broken .dynsym section";
  }
  const Elf64_Shdr& strtab = sections[symtab.sh_link];
  if (!in_bounds(strtab.sh_offset, strtab.sh_size)) return "broken .dynstr section";
  const size_t count = symtab.sh_size / sizeof(Elf64_Sym);
  const uint8_t* versym = nullptr;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type == SHT_GNU_versym && s.sh_link == static_cast<unsigned>(dynsym) &&
        in_bounds(s.sh_offset, s.sh_size) && s.sh_size >= count * sizeof(Elf64_Half)) {
      versym = image.data() + s.sh_offset;
    }
  }
  struct Wanted {
    const char* name;
    uint64_t* address;
    bool is_default = false;
  } wanted[] = {{"dlopen", &out->dlopen}, {"dlsym", &out->dlsym}, {"dlerror", &out->dlerror}};
  for (size_t i = 0; i < count; ++i) {
    Elf64_Sym sym;
    std::memcpy(&sym, image.data() + symtab.sh_offset + i * sizeof(Elf64_Sym), sizeof(sym));
    if (sym.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 ||
        sym.st_name >= strtab.sh_size) {
      continue;
    }
    const char* name = reinterpret_cast<const char*>(image.data() + strtab.sh_offset + sym.st_name);
    const size_t max_len = strtab.sh_size - sym.st_name;
    bool is_default = true;  // without .gnu.version every name has one version
    if (versym != nullptr) {
      Elf64_Half v;
      std::memcpy(&v, versym + i * sizeof(Elf64_Half), sizeof(v));
      is_default = (v & 0x8000) == 0;  // VERSYM_HIDDEN: a non-default (name@VERSION) entry
    }
    for (Wanted& w : wanted) {
      const size_t len = std::strlen(w.name);
      if (len < max_len && std::memcmp(name, w.name, len + 1) == 0 &&
          (*w.address == 0 || (is_default && !w.is_default))) {
        *w.address = out->load_bias + sym.st_value;
        w.is_default = is_default;
      }
    }
  }
  return "";
}

struct TargetLibc {
  std::string path;
  LibcSymbols symbols;
};

std::string NoGlibcText(pid_t pid) {
  return "process " + std::to_string(pid) +
         " has no glibc libc.so.6 mapped (statically linked, or another C library such as musl): "
         "gprof-run attach needs a dynamically linked glibc program; start it under gprof-run "
         "instead";
}

// Opens the libc.so.6 the target has mapped: through /proc/PID/map_files (the mapped file
// itself, whatever the mount namespace; needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), else by
// its path seen from the target's root, which must then be the same file (device and inode).
std::string LocateLibc(pid_t pid, const std::vector<MapEntry>& maps, TargetLibc* out) {
  const MapEntry* m = FindLibcMapping(maps);
  if (m == nullptr) return NoGlibcText(pid);
  out->path = m->path;
  const std::string proc = "/proc/" + std::to_string(pid);
  char range[64];
  std::snprintf(range, sizeof(range), "/map_files/%" PRIx64 "-%" PRIx64, m->start, m->end);
  int fd = ::open((proc + range).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fd = ::open((proc + "/root" + m->path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return "cannot open the libc.so.6 of process " + std::to_string(pid) + " (" + m->path +
             "): " + ErrnoText(errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_ino != m->inode || major(st.st_dev) != m->dev_major ||
        minor(st.st_dev) != m->dev_minor) {
      ::close(fd);
      return "the libc.so.6 mapped in process " + std::to_string(pid) + " (" + m->path +
             ") is no longer the file at that path (glibc upgraded since it started?): restart "
             "the program, or run gprof-run attach as root so it can read the mapped file";
    }
  }
  std::vector<uint8_t> image;
  const bool read_ok = ReadWholeFile(fd, &image);
  ::close(fd);
  if (!read_ok) return "cannot read the libc.so.6 of process " + std::to_string(pid) + " (" + m->path + ")";
  const std::string problem = ReadDynamicSymbols(image, m->start, &out->symbols);
  if (!problem.empty()) {
    return "cannot read the symbols of " + m->path + " in process " + std::to_string(pid) + ": " +
           problem;
  }
  if (out->symbols.dlopen == 0 || out->symbols.dlsym == 0 || out->symbols.dlerror == 0) {
    return "the libc.so.6 of process " + std::to_string(pid) + " (" + m->path +
           ") exports no dlopen/dlsym/dlerror (glibc older than 2.34): gprof-run attach needs "
           "glibc 2.34 or newer; start the program under gprof-run instead";
  }
  return "";
}

// --- waiting for the tracee ---------------------------------------------------------------------

struct Event {
  enum Kind { kStop, kGone, kTimedOut, kFailed } kind = kFailed;
  int status = 0;    // waitpid status, for kStop
  std::string text;  // kGone: how it ended ("exited with status 3"); kFailed: what failed
};

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

enum class StopKind {
  kTrap,       // PTRACE_EVENT_STOP with SIGTRAP: our PTRACE_INTERRUPT, or a wake-up after LISTEN
  kGroupStop,  // PTRACE_EVENT_STOP with a stop signal: job control stopped the process
  kSignal,     // signal-delivery-stop: `sig` is about to be delivered
};

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

InjectOutcome Injection::Run(const TargetLibc& libc, const std::string& library,
                             const std::string& entry, const std::string& arg) {
  InjectOutcome outcome;
  outcome.error = Attach();
  if (!outcome.error.empty()) return outcome;
  outcome.error = SaveState();
  if (outcome.error.empty()) outcome.error = WriteStrings(library, entry, arg);
  if (!outcome.error.empty()) {
    const std::string restore_error = Restore(0);
    if (!restore_error.empty()) outcome.error += "; " + restore_error;
    return outcome;
  }

  // Each step: the call's result, or a problem that ends the injection.
  int pending_sig = 0;
  bool gone = false;
  auto step = [&](const char* what, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t* value) {
    const CallResult r = Call(what, fn, a0, a1);
    switch (r.kind) {
      case CallResult::kReturned:
        *value = r.value;
        return true;
      case CallResult::kGone:
        gone = true;
        outcome.error = Who() + " " + r.text + " during the injection (in its call to " + what +
                        "); nothing is left behind";
        return false;
      case CallResult::kTimedOut:
        pending_sig = r.pending_sig;
        outcome.error = r.text;
        return false;
      case CallResult::kCrashed:
      case CallResult::kFailed:
        outcome.error = r.text;
        return false;
    }
    return false;
  };
  auto dl_error = [&](const std::string& failed) {
    uint64_t message = 0;
    std::string text = "(dlerror() gave nothing)";
    if (step("dlerror", libc.symbols.dlerror, 0, 0, &message) && message != 0) {
      text = ReadTargetString(message);
    }
    if (outcome.error.empty()) outcome.error = failed + " in " + Who() + ": " + text;
  };

  uint64_t handle = 0, fn = 0, rc = 0;
  if (step("dlopen", libc.symbols.dlopen, library_at_, RTLD_NOW, &handle)) {
    if (handle == 0) {
      dl_error("dlopen(\"" + library + "\") failed");
    } else if (step("dlsym", libc.symbols.dlsym, handle, entry_at_, &fn)) {
      if (fn == 0) {
        dl_error("dlsym(\"" + entry + "\") failed");
      } else if (step(entry.c_str(), fn, arg_at_, 0, &rc)) {
        outcome.ok = true;
        outcome.entry_rc = static_cast<int32_t>(static_cast<uint32_t>(rc));
      }
    }
  }
  if (gone) return outcome;  // the kernel released it; nothing to put back
  const std::string restore_error = Restore(pending_sig);
  if (!restore_error.empty()) {
    outcome.ok = false;
    outcome.error = outcome.error.empty() ? restore_error : outcome.error + "; " + restore_error;
  }
  return outcome;
}

}  // namespace

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

InjectOutcome InjectAndCall(pid_t pid, const std::string& library, const std::string& entry,
                            const std::string& arg, int timeout_ms) {
  InjectOutcome outcome;
  outcome.error = AttachRefusal(pid);
  if (!outcome.error.empty()) return outcome;
#if defined(__x86_64__) && defined(__linux__)
  std::string maps_text, status;
  int err = 0;
  const std::string proc = "/proc/" + std::to_string(pid);
  if (!ReadProcFile(proc + "/maps", &maps_text, &err) || !ReadProcFile(proc + "/status", &status, &err)) {
    outcome.error = "no process with pid " + std::to_string(pid) + " (it has exited)";
    return outcome;
  }
  TargetLibc libc;
  outcome.error = LocateLibc(pid, ParseMaps(maps_text), &libc);
  if (!outcome.error.empty()) return outcome;
  const std::vector<uint64_t> ppid = Numbers(StatusField(status, "PPid"), 10);
  const bool our_child = !ppid.empty() && static_cast<pid_t>(ppid[0]) == ::getpid();
  Injection injection(pid, our_child, timeout_ms);
  return injection.Run(libc, library, entry, arg);
#else
  return outcome;
#endif
}

}  // namespace gprof
