// Process tests of the CUDA/CUPTI stand-in: every CUDA example runs to its completion token on the
// stand-in, without and with CUDA_INJECTION64_PATH (the stand-in's counting injection library),
// and each fault knob has the effect a tool would observe. Also reproduces the articles' finding:
// matmul at size 64 is overhead-bound, at 4096 compute-bound.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace gprof::testing {
namespace {

std::string Bin(const std::string& name) { return BinaryDir() + "/bin/" + name; }
std::string InjectPath() { return StandInLibDir() + "/inject/libcudasim_count_inject.so"; }

ProcessResult RunExample(const std::vector<std::string>& argv, std::map<std::string, std::string> env,
                  bool inject) {
  ProcessOptions options;
  options.set_env = std::move(env);
  // The stand-in libcuda.so.1 has a directory of its own (CMakeLists.txt says why).
  if (options.set_env.count("LD_LIBRARY_PATH") == 0) {
    options.set_env["LD_LIBRARY_PATH"] = StandInLibDir() + ":" + CUDASIM_DRIVER_LIB_DIR;
  }
  if (inject) {
    options.set_env["CUDA_INJECTION64_PATH"] = InjectPath();
  } else {
    options.unset_env.push_back("CUDA_INJECTION64_PATH");
  }
  options.timeout = std::chrono::milliseconds(120000);
  return RunProcess(argv, options);
}

// The counting library's summary line as key -> value.
std::map<std::string, long long> Summary(const std::string& out) {
  std::map<std::string, long long> m;
  std::smatch line;
  if (!std::regex_search(out, line, std::regex("CUDASIM_INJECT subscribed=1[^\n]*"))) return m;
  std::string s = line.str();
  std::regex kv("([a-z_]+)=([0-9]+)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), kv); it != std::sregex_iterator(); ++it) {
    m[(*it)[1]] = std::stoll((*it)[2]);
  }
  return m;
}

struct Example {
  std::string name;
  std::vector<std::string> args;
  long long launches;  // kernels the program launches
};

const std::vector<Example>& Examples() {
  static const std::vector<Example> examples = {
      {"matmul_bias", {"64", "5"}, 10},
      {"matmul_bias", {"4096", "2"}, 4},
      {"launch_loop", {"500"}, 500},
      {"multistream", {}, 4},
      {"multithread", {"4", "20"}, 80},
      {"driver_launch", {"3"}, 7},  // 3 cuLaunchKernel + 3 cuLaunchKernelEx + 1 <<<>>>
  };
  return examples;
}

std::vector<std::string> Argv(const Example& e) {
  std::vector<std::string> argv{Bin(e.name)};
  argv.insert(argv.end(), e.args.begin(), e.args.end());
  return argv;
}

TEST(CudasimExamples, RunToCompletionWithoutInjection) {
  for (const Example& e : Examples()) {
    SCOPED_TRACE(e.name);
    ProcessResult r = RunExample(Argv(e), {}, false);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("GPROF_EXAMPLE_DONE " + e.name), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("CUDASIM_INJECT"), std::string::npos);
  }
}

TEST(CudasimExamples, RunToCompletionWithInjectionAndEveryKernelIsRecorded) {
  for (const Example& e : Examples()) {
    SCOPED_TRACE(e.name);
    ProcessResult r = RunExample(Argv(e), {}, true);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("GPROF_EXAMPLE_DONE " + e.name), std::string::npos) << r.out;
    // InitializeInjection ran exactly once.
    size_t first = r.out.find("CUDASIM_INJECT version=");
    ASSERT_NE(first, std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("CUDASIM_INJECT version=", first + 1), std::string::npos);
    auto s = Summary(r.out);
    ASSERT_FALSE(s.empty()) << r.out;
    EXPECT_EQ(s["launches"], e.launches);
    EXPECT_EQ(s["kernels"], e.launches);
    EXPECT_EQ(s["matched"], e.launches);  // each kernel record's correlation id is a launch's
    EXPECT_EQ(s["dropped"], 0);
    EXPECT_EQ(s["completed_on_main"], 0);
    EXPECT_GT(s["driver_enters"], 0);
    EXPECT_GE(s["api_records"], s["launches"]);
  }
}

TEST(CudasimExamples, DirectDriverLaunchesAreLaunchesOfTheirOwn) {
  ProcessResult r = RunExample({Bin("driver_launch"), "3"}, {}, true);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto s = Summary(r.out);
  ASSERT_FALSE(s.empty()) << r.out;
  EXPECT_EQ(s["driver_launches"], 6);  // driver launches outside any runtime launch
  EXPECT_EQ(s["launches"], 7);
  EXPECT_EQ(s["matched"], 7);          // kernel records carry the driver call's correlation id
}

TEST(CudasimExamples, MatmulIsOverheadBoundAt64AndComputeBoundAt4096) {
  auto small = Summary(RunExample({Bin("matmul_bias"), "64", "5"}, {}, true).out);
  auto large = Summary(RunExample({Bin("matmul_bias"), "4096", "2"}, {}, true).out);
  ASSERT_FALSE(small.empty());
  ASSERT_FALSE(large.empty());
  EXPECT_LT(small["kernel_ns"], small["launch_api_ns"]);
  EXPECT_GT(large["kernel_ns"], large["launch_api_ns"]);
}

TEST(CudasimKnobs, KernelDurationByName) {
  auto s = Summary(RunExample({Bin("launch_loop"), "10"}, {{"CUDASIM_KERNEL_NS", "tiny_kernel=50000"}}, true).out);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s["kernel_ns"], 10 * 50000);
}

TEST(CudasimKnobs, CuptiHeldByAnotherToolIsReportedWithItsName) {
  ProcessResult r = RunExample({Bin("launch_loop"), "10"}, {{"CUDASIM_CUPTI_HOLDER", "Nsight Systems"}}, true);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("CUDASIM_INJECT subscribe_failed=39 holder=Nsight Systems"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPROF_EXAMPLE_DONE launch_loop"), std::string::npos);
}

TEST(CudasimKnobs, DropEveryNthRecordIsCounted) {
  ProcessResult r = RunExample({Bin("launch_loop"), "300"}, {{"CUDASIM_DROP_EVERY", "3"}}, true);
  EXPECT_EQ(r.exit_code, 0);
  auto s = Summary(r.out);
  ASSERT_FALSE(s.empty()) << r.out;
  EXPECT_GT(s["dropped"], 0);
  EXPECT_LT(s["kernels"], 300);
  EXPECT_EQ(s["matched"], s["kernels"]);
}

TEST(CudasimKnobs, BufferLimitDropsAndCountsTheRest) {
  // The counting library's buffers hold 64 KiB: 2000 kernel records need several.
  ProcessResult r = RunExample({Bin("launch_loop"), "2000"}, {{"CUDASIM_MAX_BUFFERS", "1"}}, true);
  EXPECT_EQ(r.exit_code, 0);
  auto s = Summary(r.out);
  ASSERT_FALSE(s.empty()) << r.out;
  EXPECT_EQ(s["buffers"], 1);
  EXPECT_GT(s["dropped"], 0);
  EXPECT_LT(s["kernels"], 2000);
}

TEST(CudasimKnobs, CuptiVersionCanDifferFromTheBuildVersion) {
  ProcessResult r = RunExample({Bin("launch_loop"), "1"}, {{"CUDASIM_CUPTI_VERSION", "999"}}, true);
  EXPECT_NE(r.out.find("CUDASIM_INJECT version=999 built_for=130001"), std::string::npos) << r.out;
}

TEST(CudasimKnobs, StagedBufferModeRecordsEveryKernel) {
  ProcessResult r = RunExample({Bin("multithread"), "4", "20"}, {{"CUDASIM_BUFFER_MODE", "staged"}}, true);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto s = Summary(r.out);
  ASSERT_FALSE(s.empty()) << r.out;
  EXPECT_EQ(s["kernels"], 80);
  EXPECT_EQ(s["matched"], 80);
  EXPECT_EQ(s["dropped"], 0);
}

TEST(CudasimKnobs, NestedDriverCallsCanBeSwitchedOff) {
  ProcessResult r = RunExample({Bin("launch_loop"), "10"}, {{"CUDASIM_NESTED_DRIVER", "0"}}, true);
  auto s = Summary(r.out);
  ASSERT_FALSE(s.empty()) << r.out;
  EXPECT_EQ(s["driver_enters"], 0);
  EXPECT_EQ(s["kernels"], 10);
  EXPECT_EQ(s["matched"], 10);
}

TEST(CudasimKnobs, BadKnobValueWarnsAndKeepsTheDefault) {
  ProcessResult r = RunExample({Bin("launch_loop"), "1"}, {{"CUDASIM_BUFFER_MODE", "sideways"}}, false);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("CUDASIM_BUFFER_MODE=sideways is not one of the documented values"),
            std::string::npos) << r.err;
}

TEST(CudasimKnobs, UnknownKnobWarns) {
  ProcessResult r = RunExample({Bin("launch_loop"), "1"}, {{"CUDASIM_NO_SUCH_KNOB", "1"}}, false);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown knob CUDASIM_NO_SUCH_KNOB"), std::string::npos) << r.err;
}

TEST(CudasimKnobs, LibcuptiMissingDirectoryStillRunsPrograms) {
  const std::string dir = BinaryDir() + "/tests/cudasim/lib-nocupti";
  for (const std::string& f : ListDir(dir)) EXPECT_EQ(f.find("libcupti"), std::string::npos) << f;
  ProcessResult r = RunExample({Bin("launch_loop"), "5"}, {{"LD_LIBRARY_PATH", dir}}, false);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPROF_EXAMPLE_DONE launch_loop"), std::string::npos);
}

// The stand-in must be a drop-in for the toolkit's libraries: same SONAME, same version node,
// and every function the real library exports (unimplemented ones as loud stubs).
TEST(CudasimAbi, SameSonameVersionNodeAndExportsAsTheToolkit) {
  for (const std::string lib : {"libcudart.so.13", "libcupti.so.13"}) {
    SCOPED_TRACE(lib);
    const std::string ours = StandInLibDir() + "/" + lib;
    ProcessResult p = RunProcess({"objdump", "-p", ours});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_TRUE(std::regex_search(p.out, std::regex("SONAME +" + lib))) << p.out;
    EXPECT_TRUE(std::regex_search(p.out, std::regex("Version definitions:\\n1 0x01 0x[0-9a-f]+ " + lib)));
    auto exports = [](const std::string& path) {
      std::set<std::string> names;
      ProcessResult r = RunProcess({"nm", "-D", "--defined-only", path});
      std::regex fn("[0-9a-f]+ [TW] ([A-Za-z_][A-Za-z0-9_]*)@@?(\\S+)");
      for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), fn); it != std::sregex_iterator(); ++it) {
        names.insert((*it)[1].str() + "@" + (*it)[2].str());
      }
      return names;
    };
    std::set<std::string> real = exports(std::string(CUDASIM_TOOLKIT_LIB_DIR) + "/" + lib);
    std::set<std::string> mine = exports(ours);
    ASSERT_GT(real.size(), 100u);
    for (const std::string& name : real) EXPECT_EQ(mine.count(name), 1u) << name;
  }
}

// libcuda.so.1 has no version node (neither has the driver's, nor the toolkit's link stub); every
// function the stub exports is there.
TEST(CudasimAbi, LibcudaHasTheDriversSonameAndExports) {
  const std::string ours = std::string(CUDASIM_DRIVER_LIB_DIR) + "/libcuda.so.1";
  // Not beside the stand-in libcudart: the real libcupti would load it ("no driver" tests).
  for (const std::string& f : ListDir(StandInLibDir())) EXPECT_EQ(f.find("libcuda.so"), std::string::npos) << f;
  ProcessResult p = RunProcess({"objdump", "-p", ours});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(std::regex_search(p.out, std::regex("SONAME +libcuda\\.so\\.1"))) << p.out;
  EXPECT_EQ(p.out.find("Version definitions"), std::string::npos) << p.out;
  auto exports = [](const std::string& path) {
    std::set<std::string> names;
    ProcessResult r = RunProcess({"nm", "-D", "--defined-only", path});
    std::regex fn("[0-9a-f]+ [TW] ([A-Za-z_][A-Za-z0-9_]*)\n");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), fn); it != std::sregex_iterator(); ++it) {
      names.insert((*it)[1].str());
    }
    return names;
  };
  std::set<std::string> real = exports(CUDASIM_REAL_CUDA);
  std::set<std::string> mine = exports(ours);
  ASSERT_GT(real.size(), 100u);
  for (const std::string& name : real) EXPECT_EQ(mine.count(name), 1u) << name;
  for (const std::string& name : mine) EXPECT_EQ(name.rfind("cu", 0), 0u) << name;
}

}  // namespace
}  // namespace gprof::testing
