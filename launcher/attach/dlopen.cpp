// The dlopen phase (see ptrace_internal.h): the target's mappings, its libc.so.6 and where
// dlopen, dlsym and dlerror are in it, and the sequence of calls InjectAndCall makes.
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

}  // namespace ptrace_detail

using namespace ptrace_detail;

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
