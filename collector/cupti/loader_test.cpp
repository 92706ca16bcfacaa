// libcupti search order and load failures.
#include "collector/cupti/loader.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

namespace gprof::collector {
namespace {

// Every prefix holds one site-packages, as a single-Python install does.
std::vector<std::string> FakeSites(const std::string& prefix) {
  return {prefix + "/lib/python3.11/site-packages"};
}

std::vector<std::string> Paths(const std::vector<CuptiCandidate>& c) {
  std::vector<std::string> paths;
  for (const auto& x : c) paths.push_back(x.path);
  return paths;
}

std::vector<CuptiSource> Sources(const std::vector<CuptiCandidate>& c) {
  std::vector<CuptiSource> sources;
  for (const auto& x : c) sources.push_back(x.source);
  return sources;
}

void ExpectNoDuplicates(const std::vector<CuptiCandidate>& c) {
  std::vector<std::string> paths = Paths(c);
  EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()).size(), paths.size());
}

constexpr const char* kCu13 = "/nvidia/cu13/lib/libcupti.so.13";
constexpr const char* kCupti12Layout = "/nvidia/cuda_cupti/lib/libcupti.so.13";

TEST(CuptiLoader, SearchOrder) {
  CuptiSearchInputs in;
  in.build_library_dir = "/opt/cuda/lib64";
  in.build_toolkit_root = "/opt/cuda";
  in.cuda_home = "/usr/local/cuda-13.0";
  in.virtual_env = "/venv";
  auto c = CuptiCandidates(in, &FakeSites);
  // The venv's wheels, then $CUDA_HOME, then the toolkit of the build (an installed wheel's
  // build-machine folder).
  std::vector<std::string> expected = {
      "/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcupti.so.13",
      "/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13",
      "/usr/local/cuda-13.0/lib64/libcupti.so.13",
      "/usr/local/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13",
      "/opt/cuda/lib64/libcupti.so.13",
      "/opt/cuda/extras/CUPTI/lib64/libcupti.so.13",
  };
  EXPECT_EQ(Paths(c), expected);  // /opt/cuda/lib64 appears once
  std::vector<CuptiSource> sources = {
      CuptiSource::kVirtualEnv, CuptiSource::kVirtualEnv,   CuptiSource::kCudaHome,
      CuptiSource::kCudaHome,   CuptiSource::kBuildToolkit, CuptiSource::kBuildToolkit,
  };
  EXPECT_EQ(Sources(c), sources);
}

// The case: /venv/bin/python is a link to /usr/bin/python3.11, so /proc/self/exe names
// the system interpreter. The activated venv's wheel must still come first.
TEST(CuptiLoader, VenvWinsOverAnInterpreterThatResolvesOutsideIt) {
  CuptiSearchInputs in;
  in.virtual_env = "/home/u/venv";
  in.interpreter_exe = "/usr/bin/python3.11";
  auto c = CuptiCandidates(in, &FakeSites);
  const std::string venv = "/home/u/venv/lib/python3.11/site-packages";
  std::vector<std::string> expected = {
      venv + kCu13,
      venv + kCupti12Layout,
      // /usr also searches /usr/local (Debian's dist-packages for a root pip install).
      std::string("/usr/lib/python3.11/site-packages") + kCu13,
      std::string("/usr/lib/python3.11/site-packages") + kCupti12Layout,
      std::string("/usr/local/lib/python3.11/site-packages") + kCu13,
      std::string("/usr/local/lib/python3.11/site-packages") + kCupti12Layout,
  };
  EXPECT_EQ(Paths(c), expected);
  std::vector<CuptiSource> sources = {
      CuptiSource::kVirtualEnv,     CuptiSource::kVirtualEnv,     CuptiSource::kInterpreterExe,
      CuptiSource::kInterpreterExe, CuptiSource::kInterpreterExe, CuptiSource::kInterpreterExe,
  };
  EXPECT_EQ(Sources(c), sources);
}

// Not activated: no VIRTUAL_ENV, but argv[0] still names the venv's python, from which Python
// itself derives sys.prefix.
TEST(CuptiLoader, Argv0FindsAVenvThatWasNotActivated) {
  CuptiSearchInputs in;
  in.interpreter_argv0 = "/home/u/venv/bin/python";
  in.interpreter_exe = "/opt/py/bin/python3.12";
  auto c = CuptiCandidates(in, &FakeSites);
  std::vector<std::string> expected = {
      std::string("/home/u/venv/lib/python3.11/site-packages") + kCu13,
      std::string("/home/u/venv/lib/python3.11/site-packages") + kCupti12Layout,
      std::string("/opt/py/lib/python3.11/site-packages") + kCu13,
      std::string("/opt/py/lib/python3.11/site-packages") + kCupti12Layout,
  };
  EXPECT_EQ(Paths(c), expected);
  EXPECT_EQ(c[0].source, CuptiSource::kInterpreterArgv0);
  EXPECT_EQ(c[2].source, CuptiSource::kInterpreterExe);
}

TEST(CuptiLoader, LoadedLibtorchPointsAtItsSitePackages) {
  CuptiSearchInputs in;
  in.loaded_libraries = {
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/x/site-packages/torch/lib/libtorch_cuda.so",
      "/x/site-packages/torch/lib/libtorch.so",  // same site-packages: nothing new
      "/x/site-packages/torch/lib/libc10.so",
  };
  auto c = CuptiCandidates(in, &FakeSites);
  std::vector<std::string> expected = {
      "/x/site-packages/nvidia/cu13/lib/libcupti.so.13",
      "/x/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13",
  };
  EXPECT_EQ(Paths(c), expected);
  EXPECT_EQ(Sources(c), std::vector<CuptiSource>(2, CuptiSource::kLoadedPackage));
}

TEST(CuptiLoader, LoadedLibrariesOutsideANamedSitePackages) {
  CuptiSearchInputs in;
  in.loaded_libraries = {
      // A --target install: torch/lib's grandparent holds the wheels though it is not named so.
      "/opt/pydeps/torch/lib/libtorch_cuda.so",
      // An nvidia wheel another package loaded (cupy, jax): its site-packages holds libcupti too.
      "/env/lib/python3.12/dist-packages/nvidia/cu13/lib/libcudart.so.13",
      // Neither a libtorch nor in a site-packages: ignored.
      "/opt/app/torch/lib/libfoo.so",
  };
  auto c = CuptiCandidates(in, &FakeSites);
  std::vector<std::string> expected = {
      std::string("/opt/pydeps") + kCu13,
      std::string("/opt/pydeps") + kCupti12Layout,
      std::string("/env/lib/python3.12/dist-packages") + kCu13,
      std::string("/env/lib/python3.12/dist-packages") + kCupti12Layout,
  };
  EXPECT_EQ(Paths(c), expected);
}

TEST(CuptiLoader, LoadedLibpythonGivesItsPrefix) {
  CuptiSearchInputs in;
  in.loaded_libraries = {
      "/opt/conda/lib/libpython3.11.so.1.0",
      "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0",  // Debian's multiarch lib dir -> /usr
      "/opt/conda/lib/libpython3.so",                     // the stable-ABI stub: same prefix
  };
  auto c = CuptiCandidates(in, &FakeSites);
  std::vector<std::string> expected = {
      std::string("/opt/conda/lib/python3.11/site-packages") + kCu13,
      std::string("/opt/conda/lib/python3.11/site-packages") + kCupti12Layout,
      std::string("/usr/lib/python3.11/site-packages") + kCu13,
      std::string("/usr/lib/python3.11/site-packages") + kCupti12Layout,
      std::string("/usr/local/lib/python3.11/site-packages") + kCu13,
      std::string("/usr/local/lib/python3.11/site-packages") + kCupti12Layout,
  };
  EXPECT_EQ(Paths(c), expected);
  EXPECT_EQ(Sources(c), std::vector<CuptiSource>(6, CuptiSource::kLoadedLibpython));
}

// Every input at once, overlapping as they do in a real venv with torch: each path once, under
// the first (strongest) source that produced it.
TEST(CuptiLoader, FullOrderWithoutDuplicates) {
  CuptiSearchInputs in;
  in.cuda_home = "/usr/local/cuda/";  // trailing slash: same paths as without
  in.loaded_libraries = {
      "/opt/conda/lib/libpython3.11.so.1.0",
      "/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
  };
  in.virtual_env = "/venv/";
  in.conda_prefix = "/opt/conda";
  in.interpreter_argv0 = "/venv/bin/python";
  in.interpreter_exe = "/opt/conda/bin/python3.11";
  in.home = "/home/u";
  auto c = CuptiCandidates(in, &FakeSites);
  std::vector<std::string> expected = {
      std::string("/venv/lib/python3.11/site-packages") + kCu13,
      std::string("/venv/lib/python3.11/site-packages") + kCupti12Layout,
      std::string("/opt/conda/lib/python3.11/site-packages") + kCu13,
      std::string("/opt/conda/lib/python3.11/site-packages") + kCupti12Layout,
      std::string("/home/u/.local/lib/python3.11/site-packages") + kCu13,
      std::string("/home/u/.local/lib/python3.11/site-packages") + kCupti12Layout,
      "/usr/local/cuda/lib64/libcupti.so.13",
      "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
  };
  EXPECT_EQ(Paths(c), expected);
  std::vector<CuptiSource> sources = {
      CuptiSource::kLoadedPackage, CuptiSource::kLoadedPackage, CuptiSource::kCondaPrefix,
      CuptiSource::kCondaPrefix,   CuptiSource::kUserSite,      CuptiSource::kUserSite,
      CuptiSource::kCudaHome,      CuptiSource::kCudaHome,
  };
  EXPECT_EQ(Sources(c), sources);
  ExpectNoDuplicates(c);
}

TEST(CuptiLoader, ProgramsThatAreNotPythonAddNoInterpreterCandidates) {
  CuptiSearchInputs in;
  in.interpreter_argv0 = "/usr/bin/myapp";
  in.interpreter_exe = "/usr/bin/myapp";
  in.loaded_libraries = {"/usr/lib/x86_64-linux-gnu/libcudart.so.13"};
  EXPECT_TRUE(CuptiCandidates(in, &FakeSites).empty());
}

TEST(CuptiLoader, EverySourceHasItsOwnName) {
  std::set<std::string> names;
  int count = 0;
  for (CuptiSource s :
       {CuptiSource::kExplicit, CuptiSource::kAlreadyLoaded, CuptiSource::kBuildToolkit,
        CuptiSource::kCudaHome, CuptiSource::kLoadedPackage, CuptiSource::kVirtualEnv,
        CuptiSource::kCondaPrefix, CuptiSource::kInterpreterArgv0, CuptiSource::kLoadedLibpython,
        CuptiSource::kInterpreterExe, CuptiSource::kUserSite, CuptiSource::kLinkerPath}) {
    std::string name = CuptiSourceName(s);
    EXPECT_NE(name, "?");
    names.insert(name);
    ++count;
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(count));
}

// A venv's lib64 is a symlink to lib: its site-packages is listed once.
TEST(CuptiLoader, ListSitePackagesListsALinkedDirOnce) {
  char tmpl[] = "/tmp/gprof_loader_test_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  ASSERT_EQ(mkdir((root + "/lib").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/lib/python3.11").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/lib/python3.11/site-packages").c_str(), 0755), 0);
  ASSERT_EQ(symlink("lib", (root + "/lib64").c_str()), 0);
  std::vector<std::string> sites = ListSitePackages(root);
  EXPECT_EQ(sites, std::vector<std::string>{root + "/lib/python3.11/site-packages"});
  unlink((root + "/lib64").c_str());
  rmdir((root + "/lib/python3.11/site-packages").c_str());
  rmdir((root + "/lib/python3.11").c_str());
  rmdir((root + "/lib").c_str());
  rmdir(root.c_str());
}

TEST(CuptiLoader, CollectSearchInputsSeesTheLoadedLibraries) {
  CuptiSearchInputs in = CollectSearchInputs("");
  bool libc = false;
  for (const std::string& lib : in.loaded_libraries) {
    EXPECT_EQ(lib[0], '/') << lib;
    libc = libc || lib.find("/libc.so") != std::string::npos;
  }
  EXPECT_TRUE(libc);
  EXPECT_EQ(in.interpreter_exe.rfind("/collector_test"),
            in.interpreter_exe.size() - std::string("/collector_test").size())
      << in.interpreter_exe;
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
  for (const auto& c : CuptiCandidates(in, &ListSitePackages)) {
    any = any || access(c.path.c_str(), F_OK) == 0;
  }
  if (!any) GTEST_SKIP() << "no libcupti.so.13 installed where gprof-run looks";
  CuptiLoadResult r = LoadCupti(in);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NE(r.path.find("libcupti.so.13"), std::string::npos);
  EXPECT_NE(r.api.GetVersion, nullptr);
  EXPECT_NE(r.api.GetTimestamp, nullptr);
}

TEST(CuptiLoader, AnyLoadedLibcuptiIsFoundWhateverItsMajor) {
  EXPECT_EQ(LoadedCuptiLibraries({"/usr/lib/libc.so.6", "/t/nvidia/cu13/lib/libcupti.so.13",
                                  "/c/lib/libcupti.so.12", "/x/libcuptiextra.so"}),
            (std::vector<std::string>{"/t/nvidia/cu13/lib/libcupti.so.13", "/c/lib/libcupti.so.12"}));
  EXPECT_TRUE(LoadedCuptiLibraries({"/usr/lib/libcudart.so.13"}).empty());
  EXPECT_EQ(CuptiSonameMajor("/a/libcupti.so.13"), 13);
  EXPECT_EQ(CuptiSonameMajor("/a/libcupti.so.12"), 12);
  EXPECT_EQ(CuptiSonameMajor("/a/libcupti.so.2025.3.1"), 2025);
  EXPECT_EQ(CuptiSonameMajor("/a/libcupti.so"), 0);
  EXPECT_EQ(CuptiSonameMajor("/a/libcudart.so.13"), 0);
}

// One libcupti per process: when the program has one, GPROF_CUPTI_LIB is not loaded beside it.
// (The loaded path here is not really in this process, so reaching it fails: the message says so,
// and the explicit library, which exists, is still not loaded.)
TEST(CuptiLoader, ALoadedLibcuptiIsTheOnlyOneEvenWithAnExplicitPath) {
  CuptiSearchInputs in;
  for (const char* p : {"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"}) {
    if (access(p, F_OK) == 0) {
      in.explicit_path = p;
      break;
    }
  }
  if (in.explicit_path.empty()) GTEST_SKIP() << "no libm.so.6 found";
  in.loaded_libraries = {"/usr/lib/libc.so.6", "/site/nvidia/cu13/lib/libcupti.so.13"};
  CuptiLoadResult r = LoadCupti(in);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.already_loaded);
  EXPECT_EQ(r.path, "/site/nvidia/cu13/lib/libcupti.so.13");
  EXPECT_EQ(r.source, CuptiSource::kAlreadyLoaded);
  EXPECT_EQ(r.explicit_not_loaded, in.explicit_path);
  EXPECT_NE(r.error.find("already loaded in the process, /site/nvidia/cu13/lib/libcupti.so.13"),
            std::string::npos)
      << r.error;
  EXPECT_EQ(r.error.find("libm"), std::string::npos) << r.error;
}

// A CUDA 12 program (it loaded libcudart.so.12) needs CUDA 12's CUPTI: libcupti.so.12, looked for
// in the same places.
TEST(CuptiLoader, ACuda12ProgramGetsLibcupti12LookedForInTheSamePlaces) {
  EXPECT_EQ(CuptiSonameFor({"/usr/lib/libc.so.6", "/venv/nvidia/cuda_runtime/lib/libcudart.so.12"}),
            "libcupti.so.12");
  EXPECT_EQ(CuptiSonameFor({"/usr/local/cuda/lib64/libcudart.so.13"}), "libcupti.so.13");
  EXPECT_EQ(CuptiSonameFor({}), "libcupti.so.13");
  CuptiSearchInputs in;
  in.cuda_home = "/opt/cuda-12.8";
  in.virtual_env = "/venv";
  in.soname = "libcupti.so.12";
  const std::vector<std::string> paths = Paths(CuptiCandidates(in, &FakeSites));
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcupti.so.12",
                       "/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12",
                       "/opt/cuda-12.8/lib64/libcupti.so.12",
                       "/opt/cuda-12.8/extras/CUPTI/lib64/libcupti.so.12"}));
}

}  // namespace
}  // namespace gprof::collector
