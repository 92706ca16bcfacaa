// Symbolization of the native stacks a profile holds (Profile::stacks, GPROF_BACKTRACE), after
// the run, in the launcher (never in the program): each PC is placed in its module from
// Profile::modules and named with libdw (elfutils) when gprof-run was built with it: the
// function (demangled with abi::__cxa_demangle) and, where the module has DWARF line tables,
// file:line. libdw because it reads .symtab, .dynsym, separate debug files (build-id, .debug
// links) and DWARF lines through one maintained API, where a hand-written ELF reader would give
// names only. Without libdw (or for a PC no symbol covers) a frame is `module+0xOFFSET` (the file
// address in the module), which addr2line or gdb can resolve later.
//
// Threads: the launcher's (cold). Reads the modules' files from disk: a module rebuilt since the
// run (its build id differs) is not symbolized, so its frames stay module+offset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/profile.h"

namespace gprof {

// True when this build names functions (libdw); false: frames are module+offset.
bool NativeSymbolsAvailable();

class NativeSymbolizer {
 public:
  explicit NativeSymbolizer(const Profile& p);
  ~NativeSymbolizer();
  NativeSymbolizer(const NativeSymbolizer&) = delete;
  NativeSymbolizer& operator=(const NativeSymbolizer&) = delete;

  // "middle() (stack_prog.cu:12)", "middle()", "libfoo.so+0x1a2b", or "0x7f00...": the frame of
  // return address `pc` (looked up at pc - 1, the call instruction).
  std::string Frame(uint64_t pc);
  // The function part alone ("middle()"), or the same fallback as Frame.
  std::string Function(uint64_t pc);
  // Both parts: the function (or fallback) and "file:line" ("" when unknown).
  std::pair<std::string, std::string> Describe(uint64_t pc);
  // Whether `pc` lies in CUDA's or gprof-run's own libraries (libcudart, libcuda, libcupti,
  // libgprof_inject): not the program's code.
  bool InRuntimeModule(uint64_t pc) const;

 private:
  const ModuleInfo* ModuleOf(uint64_t pc) const;
  const Profile& p_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Every stack of `p` as frame strings, innermost first, indexed like p.stacks; and per stack the
// index of its first frame outside CUDA's and gprof-run's libraries (-1: none).
struct SymbolizedStacks {
  std::vector<std::vector<std::string>> frames;
  std::vector<int> top_user_frame;
  std::vector<std::string> top_user_function;  // that frame's function ("" when none)
};
SymbolizedStacks SymbolizeStacks(const Profile& p);

// correlation id -> stack index (kNoStack when the call has none), for the exporters.
class ApiStackIndex {
 public:
  explicit ApiStackIndex(const Profile& p);
  uint32_t StackOf(uint32_t correlation_id) const;
  bool empty() const { return sorted_.empty(); }

 private:
  std::vector<ApiStackRef> sorted_;
};

}  // namespace gprof
