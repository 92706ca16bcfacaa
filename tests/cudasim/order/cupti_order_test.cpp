// The stand-in's model of a real libcupti called before the driver (tests/cudasim/README.md, "No
// CUPTI call before the driver's InitializeInjection"): in a process with CUDA_INJECTION64_PATH
// set, a CUPTI call before the driver's initialization aborts the process, naming the function;
// after it, or without an injection library, the call is answered. Checks the stand-in itself.
#include <gtest/gtest.h>

#include <signal.h>

#include "tests/support/process.h"

namespace gprof::testing {
namespace {

ProcessResult RunCuptiFirst(const std::vector<std::string>& args, bool injected) {
  ProcessOptions o;
  o.unset_env = {"CUDA_INJECTION64_PATH", "CUDASIM_CUPTI_VERSION"};
  o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
  if (injected) o.set_env["CUDA_INJECTION64_PATH"] = StandInLibDir() + "/inject/libcudasim_count_inject.so";
  std::vector<std::string> argv = {CUDASIM_CUPTI_FIRST};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, o);
}

TEST(CuptiOrder, ACuptiCallBeforeTheDriversInitializeInjectionAbortsNamingIt) {
  ProcessResult r = RunCuptiFirst({}, /*injected=*/true);
  ASSERT_TRUE(r.signaled) << r.out << r.err;
  EXPECT_EQ(r.term_signal, SIGABRT);
  EXPECT_NE(r.err.find("cudasim: cuptiGetVersion was called before the CUDA driver ran "
                       "InitializeInjection"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("cupti_first: rc="), std::string::npos) << r.out;
}

TEST(CuptiOrder, TheSameCallAfterTheDriversInitializationIsAnswered) {
  ProcessResult r = RunCuptiFirst({"cuda-first"}, /*injected=*/true);
  ASSERT_FALSE(r.signaled) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cupti_first: rc=0 version=130001"), std::string::npos) << r.out;
}

TEST(CuptiOrder, WithoutAnInjectionLibraryCuptiMayBeCalledFirst) {
  ProcessResult r = RunCuptiFirst({}, /*injected=*/false);
  ASSERT_FALSE(r.signaled) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cupti_first: rc=0 version=130001"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gprof::testing
