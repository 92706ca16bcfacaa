// libcupti search order and load failures.
#include "collector/cupti/loader.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace gprof::collector {
namespace {

std::vector<std::string> FakeSites(const std::string& prefix) {
  return {prefix + "/lib/python3.11/site-packages"};
}

TEST(CuptiLoader, SearchOrder) {
  CuptiSearchInputs in;
  in.build_library_dir = "/opt/cuda/lib64";
  in.build_toolkit_root = "/opt/cuda";
  in.cuda_home = "/usr/local/cuda-13.0";
  in.python_prefixes = {"/venv", ""};
  auto c = CuptiCandidates(in, &FakeSites);
  std::vector<std::string> paths;
  for (const auto& x : c) paths.push_back(x.path);
  std::vector<std::string> expected = {
      "/opt/cuda/lib64/libcupti.so.13",
      "/opt/cuda/extras/CUPTI/lib64/libcupti.so.13",
      "/usr/local/cuda-13.0/lib64/libcupti.so.13",
      "/usr/local/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13",
      "/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcupti.so.13",
      "/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13",
  };
  EXPECT_EQ(paths, expected);  // /opt/cuda/lib64 appears once
  EXPECT_EQ(c[0].source, CuptiSource::kBuildToolkit);
  EXPECT_EQ(c[2].source, CuptiSource::kCudaHome);
  EXPECT_EQ(c[4].source, CuptiSource::kPythonWheel);
}

TEST(CuptiLoader, ExplicitPathIsTheOnlyCandidate) {
  CuptiSearchInputs in;
  in.explicit_path = "/x/libcupti.so.13";
  in.cuda_home = "/usr/local/cuda";
  auto c = CuptiCandidates(in, &FakeSites);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].path, "/x/libcupti.so.13");
  EXPECT_EQ(c[0].source, CuptiSource::kExplicit);
}

TEST(CuptiLoader, MissingExplicitLibraryIsAMessage) {
  CuptiSearchInputs in;
  in.explicit_path = "/nonexistent/libcupti.so.13";
  CuptiLoadResult r = LoadCupti(in);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("/nonexistent/libcupti.so.13 (not found)"), std::string::npos) << r.error;
}

TEST(CuptiLoader, LibraryWithoutCuptiSymbolsIsRefused) {
  CuptiSearchInputs in;
  // Any shared library that is not libcupti: libgtest's host, libc, is always present.
  for (const char* p : {"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"}) {
    if (access(p, F_OK) == 0) {
      in.explicit_path = p;
      break;
    }
  }
  if (in.explicit_path.empty()) GTEST_SKIP() << "no libm.so.6 found";
  CuptiLoadResult r = LoadCupti(in);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("lacks cuptiGetVersion"), std::string::npos) << r.error;
}

TEST(CuptiLoader, FindsTheBuildToolkitsLibcupti) {
  CuptiSearchInputs in = CollectSearchInputs("");
  bool any = false;
  for (const auto& c : CuptiCandidates(in, &ListSitePackages)) any = any || access(c.path.c_str(), F_OK) == 0;
  if (!any) GTEST_SKIP() << "no libcupti.so.13 installed where gprof-run looks";
  CuptiLoadResult r = LoadCupti(in);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.path.find("libcupti.so.13"), std::string::npos);
  EXPECT_NE(r.api.GetVersion, nullptr);
  EXPECT_NE(r.api.Finalize, nullptr);
}

}  // namespace
}  // namespace gprof::collector
