// dlsym, interposed with --preload (LD_PRELOAD) so that a C/C++ CUPTI client that reaches
// libcupti through dlopen + dlsym (as a profiler that does not link libcupti does) gets the three
// interposed functions of cupti_interpose.cpp, not libcupti's own: its
// cuptiActivityRegisterCallbacks then hands CUPTI over as a direct call would
// (docs/LAUNCHER.md, --preload). Every other lookup passes through to the real dlsym untouched.
//
// The real dlsym is reached by a jump, not a call, so that it sees the program's return address:
// glibc's dlsym resolves RTLD_NEXT (and picks the namespace of RTLD_DEFAULT) from the address it
// returns to, and a wrapper that called it would answer for the wrong object. A C++ function can
// not promise that jump (GCC 12 has no musttail), hence the few lines of x86-64 assembly below;
// elsewhere dlsym is not interposed and a dlsym'ing client bypasses the hand-over. The real one is
// found with dlvsym(RTLD_NEXT, "dlsym", <glibc version>), as MangoHud does (dlvsym is not
// interposed: no recursion).
//
// Rules: runs on any thread, at any time (before our init too, during other libraries'
// constructors, and inside a sanitizer runtime's own start-up, which looks up the functions it
// wraps with dlsym(RTLD_NEXT) before its shadow memory exists: hence no sanitizer instrumentation
// here and no call that a sanitizer intercepts): no allocation, lock, logging or exception; our
// own lookups (the collector's loader, handover.cpp's RTLD_NEXT) are passed through untouched.
#include <dlfcn.h>

extern "C" {
int cuptiActivityRegisterCallbacks(void (*)(unsigned char**, size_t*, size_t*),
                                   void (*)(void*, unsigned, unsigned char*, size_t, size_t));
int cuptiActivityEnable(int kind);
int cuptiActivityDisable(int kind);
}

#define GPROF_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

namespace {

GPROF_NO_SANITIZE bool SameName(const char* a, const char* b) noexcept {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

void* NoDlsym(void*, const char*) noexcept { return nullptr; }

// Our own object's load address (dladdr of a function of ours); 0 until first needed. Read and
// written with the compiler's __atomic builtins, not std::atomic: its member functions are
// instrumented code, which a sanitizer runtime's start-up (shadow memory not yet mapped) must
// not reach.
const void* g_own_base = nullptr;

GPROF_NO_SANITIZE bool FromOwnObject(const void* caller) noexcept {
  const void* base = __atomic_load_n(&g_own_base, __ATOMIC_RELAXED);
  if (base == nullptr) {
    Dl_info own{};
    if (::dladdr(reinterpret_cast<const void*>(&NoDlsym), &own) == 0) return false;
    base = own.dli_fbase;
    __atomic_store_n(&g_own_base, base, __ATOMIC_RELAXED);
  }
  Dl_info info{};
  return ::dladdr(caller, &info) != 0 && info.dli_fbase == base;
}

GPROF_NO_SANITIZE void* Interposed(const char* name) noexcept {
  if (SameName(name, "cuptiActivityRegisterCallbacks")) {
    return reinterpret_cast<void*>(&cuptiActivityRegisterCallbacks);
  }
  if (SameName(name, "cuptiActivityEnable")) {
    return reinterpret_cast<void*>(&cuptiActivityEnable);
  }
  if (SameName(name, "cuptiActivityDisable")) {
    return reinterpret_cast<void*>(&cuptiActivityDisable);
  }
  return nullptr;
}

}  // namespace

extern "C" {

using DlsymFn = void* (*)(void*, const char*);
// The real dlsym, jumped to by the stub; set by gprof_dlsym_override before it returns.
__attribute__((visibility("hidden"))) DlsymFn gprof_real_dlsym = nullptr;

// Called by the stub with dlsym's arguments and its return address: the interposed function to
// return, or nullptr to jump to the real dlsym.
__attribute__((visibility("hidden"))) GPROF_NO_SANITIZE void* gprof_dlsym_override(
    void* handle, const char* name, const void* caller) noexcept {
  DlsymFn real = __atomic_load_n(&gprof_real_dlsym, __ATOMIC_RELAXED);
  if (real == nullptr) {
    // glibc 2.34 moved dlsym into libc (GLIBC_2.34); the x86-64 base version stays as an alias.
    void* next = ::dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (next == nullptr) next = ::dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    real = next != nullptr ? reinterpret_cast<DlsymFn>(next) : &NoDlsym;
    __atomic_store_n(&gprof_real_dlsym, real, __ATOMIC_RELAXED);
  }
  if (name == nullptr) return nullptr;
  void* ours = Interposed(name);
  if (ours == nullptr || FromOwnObject(caller)) return nullptr;
  // Only where the program would have found libcupti's definition: a handle without libcupti in
  // its scope still answers "not found". (RTLD_NEXT is looked up from here: the program's next
  // object is this preloaded library, whose definition is the interposed one.)
  void* found = real(handle, name);
  return found != nullptr ? ours : nullptr;
}

}  // extern "C"

#if defined(__x86_64__)
// dlsym(handle, name): keep the arguments, ask gprof_dlsym_override (third argument: our return
// address, 24 bytes up after two pushes and the alignment pad); return its answer, or jump to the
// real dlsym with the caller's stack (and so its return address) as it came.
asm(R"(
  .text
  .globl dlsym
  .type dlsym, @function
  .p2align 4
dlsym:
  .cfi_startproc
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  subq $8, %rsp
  .cfi_adjust_cfa_offset 8
  movq 24(%rsp), %rdx
  call gprof_dlsym_override
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  testq %rax, %rax
  jz 1f
  ret
1:
  jmpq *gprof_real_dlsym(%rip)
  .cfi_endproc
  .size dlsym, .-dlsym
)");
#endif
