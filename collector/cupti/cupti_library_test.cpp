// The real libcupti libraries a user may have, dlopened and every entry point the collector uses
// resolved (ResolveCuptiApi), without one call into them: calling a real libcupti without a driver
// is not safe (torch 2.15's 13.2 overflows its stack in cuptiGetVersion). Verified with the real
// libraries (dlopen and dlsym); not a claim about how they behave on a GPU.
//   - the CUDA toolkit's 13.0 (the build's own: required)
//   - torch's 13.2 (nvidia/cu13/lib in the torch venv of scripts/setup; skipped without torch)
//   - PyPI's 13.2, 13.5 and CUDA 12.4, 12.6, 12.8 (scripts/fetch-cupti-headers; a missing set
//     fails)
// Its own binary: loading these into collector_test would make its loader tests see a libcupti
// already in the process.
#include <dlfcn.h>
#include <glob.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "collector/cupti/loader.h"

namespace gprof::collector {
namespace {

void ExpectEverySymbolResolves(const std::string& path, bool expect_v2) {
  ASSERT_EQ(access(path.c_str(), F_OK), 0) << path << " is missing";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  CuptiApi api;
  bool has_v2 = false;
  EXPECT_EQ(ResolveCuptiApi(h, &api, &has_v2), "") << path;
  EXPECT_EQ(has_v2, expect_v2) << path;
  EXPECT_NE(api.GetVersion, nullptr);
  EXPECT_NE(api.Subscribe, nullptr);  // cuptiSubscribe_v2, or the adapter over cuptiSubscribe
  EXPECT_NE(api.ActivityGetNextRecord, nullptr);
  EXPECT_NE(api.GetTimestamp, nullptr);
  // Not dlclosed: unloading a libcupti is not something the collector ever does either.
}

std::string HeaderSetLib(const char* version, const char* soname) {
  return std::string(GPROF_CUPTI_HEADER_SETS) + "/" + version + "/lib/" + soname;
}

TEST(RealLibcupti, Toolkit13_0ResolvesEverySymbol) {
  ExpectEverySymbolResolves(GPROF_TOOLKIT_CUPTI, true);
}

TEST(RealLibcupti, Torch13_2ResolvesEverySymbol) {
  const std::string python = GPROF_TORCH_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no torch venv (GPROF_TORCH=off)";
  const std::string venv = python.substr(0, python.rfind("/bin/"));
  glob_t g{};
  const std::string pattern = venv + "/lib/python3*/site-packages/nvidia/cu13/lib/libcupti.so.13";
  const bool found = glob(pattern.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0;
  const std::string path = found ? g.gl_pathv[0] : "";
  globfree(&g);
  ASSERT_TRUE(found) << "torch's venv has no " << pattern;
  ExpectEverySymbolResolves(path, true);
}

TEST(RealLibcupti, PyPI13_2ResolvesEverySymbol) {
  ExpectEverySymbolResolves(HeaderSetLib("13.2", "libcupti.so.13"), true);
}

TEST(RealLibcupti, PyPI13_5ResolvesEverySymbol) {
  ExpectEverySymbolResolves(HeaderSetLib("13.5", "libcupti.so.13"), true);
}

// CUDA 12 has no cuptiSubscribe_v2 (13.0+): the loader adapts cuptiSubscribe.
TEST(RealLibcupti, PyPI12_8ResolvesEverySymbolWithoutSubscribeV2) {
  ExpectEverySymbolResolves(HeaderSetLib("12.8", "libcupti.so.12"), false);
}

TEST(RealLibcupti, PyPI12_6ResolvesEverySymbolWithoutSubscribeV2) {
  ExpectEverySymbolResolves(HeaderSetLib("12.6", "libcupti.so.12"), false);
}

TEST(RealLibcupti, PyPI12_4ResolvesEverySymbolWithoutSubscribeV2) {
  ExpectEverySymbolResolves(HeaderSetLib("12.4", "libcupti.so.12"), false);
}

}  // namespace
}  // namespace gprof::collector
