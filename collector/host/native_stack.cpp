// Native stack capture (see native_stack.h) and the module map the launcher symbolizes with.
// Rules: CaptureNativeStack runs on application threads inside the CUPTI API callback (no
// allocation, locks, logging, exceptions, I/O); WarmNativeStack and CollectModules are cold.
#include "collector/host/native_stack.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>
#include <unwind.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>

namespace gprof::collector {

// Constant-initialized: no constructor runs when the library is loaded.
std::atomic<uint64_t> g_api_stacks_captured{0};
std::atomic<uint64_t> g_api_stacks_dropped{0};

namespace {

struct Walk {
  uint64_t* pcs;
  uint32_t max;
  uint32_t skip;
  uint32_t n;
};

_Unwind_Reason_Code OneFrame(_Unwind_Context* ctx, void* arg) {
  auto* w = static_cast<Walk*>(arg);
  const uint64_t pc = _Unwind_GetIP(ctx);
  if (pc == 0) return _URC_END_OF_STACK;
  if (w->skip > 0) {
    --w->skip;
    return _URC_NO_REASON;
  }
  w->pcs[w->n++] = pc;
  return w->n == w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

}  // namespace

uint32_t CaptureNativeStack(uint64_t* pcs, uint32_t max, uint32_t skip) noexcept {
  if (max == 0) return 0;
  // Frame 0 is this function itself (the unwinder reports its caller's context first: the PC
  // inside CaptureNativeStack after the call to _Unwind_Backtrace), so skip one more.
  Walk w{pcs, max, skip + 1, 0};
  _Unwind_Backtrace(&OneFrame, &w);
  return w.n;
}

void WarmNativeStack() {
  uint64_t pcs[4];
  (void)CaptureNativeStack(pcs, 4, 0);
}

namespace {

std::string BuildIdOf(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof nh);
      const char* name = p + sizeof nh;
      const char* desc = name + ((nh.n_namesz + 3) & ~3u);
      const char* next = desc + ((nh.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char kHex[] = "0123456789abcdef";
        std::string hex;
        for (uint32_t b = 0; b < nh.n_descsz; ++b) {
          const auto v = static_cast<unsigned char>(desc[b]);
          hex += kHex[v >> 4];
          hex += kHex[v & 15];
        }
        return hex;
      }
      p = next;
    }
  }
  return "";
}

int OneModule(dl_phdr_info* info, size_t, void* arg) {
  auto* profile = static_cast<Profile*>(arg);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  if (lo >= hi) return 0;
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty()) {
    // The executable (the first entry) has no name here; the vdso has none either, and no file.
    if (!profile->modules.empty()) return 0;
    char exe[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    path.assign(exe, static_cast<size_t>(n));
  }
  if (path.find("linux-vdso") != std::string::npos) return 0;
  const std::string build_id = BuildIdOf(info);
  profile->modules.push_back(ModuleInfo{profile->strings.Intern(path),
                                        build_id.empty() ? kNoString
                                                         : profile->strings.Intern(build_id),
                                        static_cast<uint64_t>(info->dlpi_addr), lo, hi});
  return 0;
}

}  // namespace

void CollectModules(Profile* profile) {
  profile->modules.clear();
  dl_iterate_phdr(&OneModule, profile);
}

}  // namespace gprof::collector
