// Symbolization against this test binary itself: the module map comes from dl_iterate_phdr here
// (what the collector records at exit), and the addresses of two functions of this file must
// come back as their names; an address outside every module stays hex, one in a module with no
// symbol file becomes module+offset.
#include "analysis/samples/native_symbols.h"

#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>

namespace gprof {

// Not static and not inlined: a real symbol in .symtab with an address of its own.
__attribute__((noinline)) int StackSymbolTargetFunction(int x) { return x * 3 + 1; }

namespace {

int AddModule(dl_phdr_info* info, size_t, void* arg) {
  auto* p = static_cast<Profile*>(arg);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
    hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty()) {
    if (!p->modules.empty()) return 0;
    char exe[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    path.assign(exe, static_cast<size_t>(n));
  }
  if (lo < hi) {
    p->modules.push_back({p->strings.Intern(path), kNoString, info->dlpi_addr, lo, hi});
  }
  return 0;
}

Profile SelfProfile() {
  Profile p;
  dl_iterate_phdr(&AddModule, &p);
  return p;
}

TEST(NativeSymbols, AFunctionAddressOfThisBinarySymbolizesToItsName) {
  if (!NativeSymbolsAvailable()) GTEST_SKIP() << "built without libdw: frames are module+offset";
  const Profile p = SelfProfile();
  NativeSymbolizer s(p);
  // Frame() looks a return address up at pc - 1: pass one past the function's first byte.
  const auto pc = reinterpret_cast<uint64_t>(&StackSymbolTargetFunction) + 1;
  EXPECT_EQ(s.Function(pc), "gprof::StackSymbolTargetFunction(int)");
  EXPECT_NE(s.Frame(pc).find("native_symbols_test.cpp:"), std::string::npos) << s.Frame(pc);
  const auto test_pc = reinterpret_cast<uint64_t>(&SelfProfile) + 1;
  EXPECT_EQ(s.Function(test_pc), "gprof::(anonymous namespace)::SelfProfile()");
  EXPECT_FALSE(s.InRuntimeModule(pc));
}

TEST(NativeSymbols, AModuleWhoseBuildIdDiffersFromTheRunIsNotSymbolized) {
  if (!NativeSymbolsAvailable()) GTEST_SKIP() << "built without libdw";
  Profile p = SelfProfile();
  ASSERT_FALSE(p.modules.empty());
  // The executable (first module) as if rebuilt since the run: another build id was recorded.
  p.modules[0].build_id = p.strings.Intern("00112233445566778899aabbccddeeff00112233");
  NativeSymbolizer s(p);
  const auto pc = reinterpret_cast<uint64_t>(&StackSymbolTargetFunction) + 1;
  const std::string frame = s.Frame(pc);
  EXPECT_EQ(frame.find("StackSymbolTargetFunction"), std::string::npos) << frame;
  EXPECT_NE(frame.find("+0x"), std::string::npos) << frame;
}

TEST(NativeSymbols, AnAddressOutsideEveryModuleStaysHex) {
  const Profile p = SelfProfile();
  NativeSymbolizer s(p);
  EXPECT_EQ(s.Frame(0x10), "0x10");
}

TEST(NativeSymbols, AModuleWhoseFileIsMissingGivesModulePlusOffset) {
  Profile p;
  p.modules.push_back({p.strings.Intern("/nonexistent/libgone.so"), kNoString, 0x10000000,
                       0x10000000, 0x10100000});
  NativeSymbolizer s(p);
  EXPECT_EQ(s.Frame(0x10001234), "libgone.so+0x1234");
}

TEST(NativeSymbols, CudaAndGprofLibrariesAreRuntimeModulesAndStacksNameTheFirstOtherFrame) {
  Profile p;
  p.modules.push_back({p.strings.Intern("/x/libgprof_inject.so"), kNoString, 0x1000, 0x1000,
                       0x2000});
  p.modules.push_back({p.strings.Intern("/x/libcudart.so.13"), kNoString, 0x3000, 0x3000, 0x4000});
  p.modules.push_back({p.strings.Intern("/x/libcupti.so.13"), kNoString, 0x5000, 0x5000, 0x6000});
  p.modules.push_back({p.strings.Intern("/x/app"), kNoString, 0x7000, 0x7000, 0x8000});
  p.stack_pcs = {0x5100, 0x3100, 0x7100, 0x7200};
  p.stacks = {{0, 4}, {0, 2}};
  const SymbolizedStacks sym = SymbolizeStacks(p);
  ASSERT_EQ(sym.frames.size(), 2u);
  ASSERT_EQ(sym.frames[0].size(), 4u);
  EXPECT_EQ(sym.frames[0][0], "libcupti.so.13+0x100");  // the files do not exist
  EXPECT_EQ(sym.top_user_frame[0], 2);
  EXPECT_EQ(sym.top_user_function[0], "app+0x100");
  EXPECT_EQ(sym.top_user_frame[1], -1);
  EXPECT_EQ(sym.top_user_function[1], "");
}

TEST(NativeSymbols, ApiStackIndexFindsEachCallsStackByCorrelationId) {
  Profile p;
  p.stack_pcs = {1, 2};
  p.stacks = {{0, 1}, {1, 1}};
  p.api_stacks = {{30, 1}, {10, 0}, {20, 1}};
  const ApiStackIndex index(p);
  EXPECT_EQ(index.StackOf(10), 0u);
  EXPECT_EQ(index.StackOf(20), 1u);
  EXPECT_EQ(index.StackOf(30), 1u);
  EXPECT_EQ(index.StackOf(15), kNoStack);
}

}  // namespace
}  // namespace gprof
