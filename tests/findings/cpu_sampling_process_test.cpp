// --cpu-sampling end to end on the CUDA/CUPTI stand-in (verified on the stand-in): a plain CUDA
// program computes about 200 us in host_preprocess (no NVTX) before each of 20 tiny launches per
// step; with perf samples (from the sampler process, the default, or in process, its fallback),
// gpu_idle names host_preprocess; with timer samples the folded stacks, cpu_sample_sum and the
// trace's cpu_sample events have it; without sampling, the finding does not name it; the timer
// run's report.html and trace.pftrace have them too. perf_event_open is skipped, saying why,
// where the kernel refuses it. A bad rate stops the launcher before the program starts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/perf_available.h"
#include "tests/support/pftrace_decode.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

using Json = nlohmann::json;

struct SampledRun {
  ProcessResult process;
  Json gpu_idle;  // the gpu_idle finding (null when absent)
  std::string dir;
};

// 5 steps x 20 launches x 200 us of host CPU: 20 ms of host_preprocess. Every gap holds one
// host_preprocess call (200 us of CPU) and a launch (a few us), however long a busy machine makes
// the gap: at 10 kHz (100 us periods) about 2 samples, nearly all in host_preprocess.
SampledRun ProfileSampled(const std::string& tag, const std::vector<std::string>& flags,
               const std::map<std::string, std::string>& env = {}, const char* steps = "5") {
  const std::string dir = MakeTempDir("cpu_sampling_" + tag) + "/out";
  std::vector<std::string> argv = {LauncherPath(), "-q", "-q", "-o", dir, "--cupti-lib",
                                   StandInLibDir() + "/libcupti.so.13"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", GPROF_HOST_PREPROCESS, steps, "200"});
  ProcessOptions o;
  o.set_env = env;
  o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
  SampledRun r;
  r.process = RunProcess(argv, o);
  r.dir = dir;
  EXPECT_EQ(r.process.exit_code, 0) << r.process.err;
  const Json findings = Json::parse(ReadFile(dir + "/findings.json"));
  for (const Json& f : findings.at("findings")) {
    if (f.at("id") == "gpu_idle") r.gpu_idle = f;
  }
  return r;
}

// Over all the gaps, host_preprocess is the function sampled most, with most of the idle time
// (perf). One gap alone may hold no sample: a thread that waited for a CPU in it (a busy
// machine) used no CPU time there, and perf counts CPU time, so no single gap is asserted on.
void ExpectGpuIdleNamesHostPreprocess(const SampledRun& r) {
  ASSERT_FALSE(r.gpu_idle.is_null()) << r.process.err;
  const Json& ev = r.gpu_idle.at("evidence");
  ASSERT_TRUE(ev.contains("host_function")) << r.gpu_idle.dump(2);
  EXPECT_EQ(ev.at("host_function").get<std::string>().rfind("host_preprocess", 0), 0u)
      << r.gpu_idle.dump(2);
  EXPECT_GE(ev.at("host_function_samples").get<uint64_t>(), 20u) << r.gpu_idle.dump(2);
  EXPECT_NE(r.gpu_idle.at("title").get<std::string>().find("idle in host_preprocess"),
            std::string::npos) << r.gpu_idle.dump(2);
}

std::string FoldedOf(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 11 && name.compare(name.size() - 11, 11, ".cpu.folded") == 0) {
      return ReadFile(e.path().string());
    }
  }
  return "";
}

// The timer backend's rate is bounded by the scheduler tick (ITIMER_PROF fires at most once per
// tick: 250 Hz on a CONFIG_HZ=250 kernel), so 30 steps (120 ms of host_preprocess: about 30
// ticks of its CPU time; 20 ms gave a single sample once on a busy machine) give samples enough
// to find host_preprocess among them, too few to land in the largest gaps: this checks that they
// are taken, unwound through main and shown in the folded stacks, cpu_sample_sum and the trace.
TEST(CpuSampling, TimerBackendSamplesHostPreprocessIntoFoldedStacksStatsAndTrace) {
  const SampledRun r = ProfileSampled("timer", {"--cpu-sampling=5000"},
                                      {{"GPROF_CPU_SAMPLING_BACKEND", "timer"}}, "30");
  const std::string folded = FoldedOf(r.dir);
  EXPECT_NE(folded.find(";main;host_preprocess"), std::string::npos) << folded;
  const ProcessResult stats =
      RunProcess({LauncherPath(), "stats", r.dir, "--report", "cpu_sample_sum"}, {});
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("host_preprocess"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("Hz (ITIMER_PROF, in process)"), std::string::npos) << stats.out;
  const std::string trace = ReadFile(r.dir + "/trace.json");
  EXPECT_NE(trace.find("\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_sample\",\"name\":\"host_preprocess"),
            std::string::npos);
  const std::string page = ReadFile(r.dir + "/report.html");
  EXPECT_NE(page.find("<h2>Host CPU samples (--cpu-sampling)</h2>"), std::string::npos);
  EXPECT_NE(page.find("host_preprocess", page.find("id=\"cpu\"")), std::string::npos);
  // trace.pftrace: one PerfSample per cpu_sample instant of trace.json, host_preprocess among
  // the interned function names (decoded with the Perfetto writer test's proto).
  if (!ProtocInstalled()) GTEST_SKIP() << "protoc not installed: the .pftrace was not decoded";
  const ProcessResult decoded = DecodePftrace(r.dir + "/trace.pftrace");
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_GE(CountOf(decoded.out, "perf_sample {"), 1u);
  EXPECT_EQ(CountOf(decoded.out, "perf_sample {"), CountOf(trace, "\"cat\":\"cpu_sample\""));
  EXPECT_NE(decoded.out.find("str: \"host_preprocess"), std::string::npos);
}

#define SKIP_UNLESS_PERF_ALLOWED()                                                              \
  do {                                                                                         \
    const std::string why = testing::PerfUnavailable();                                        \
    if (!why.empty()) {                                                                        \
      GTEST_SKIP() << "SKIPPED: perf_event_open is refused on this machine (" << why            \
                   << "; /proc/sys/kernel/perf_event_paranoid or a container's seccomp): the "  \
                      "perf backends are not exercised here";                                  \
    }                                                                                          \
  } while (0)

std::string BackendInStats(const SampledRun& r) {
  const ProcessResult stats =
      RunProcess({LauncherPath(), "stats", r.dir, "--report", "cpu_sample_sum"}, {});
  const size_t at = stats.out.find(" Hz (");
  if (at == std::string::npos) return stats.out;
  return stats.out.substr(at + 5, stats.out.find(')', at) - at - 5);
}

TEST(CpuSampling, PerfBackendNamesHostPreprocessWhereTheKernelAllowsIt) {
  SKIP_UNLESS_PERF_ALLOWED();
  const SampledRun r =
      ProfileSampled("perf", {"--cpu-sampling=10000"}, {{"GPROF_CPU_SAMPLING_BACKEND", "perf"}});
  ExpectGpuIdleNamesHostPreprocess(r);
  EXPECT_EQ(BackendInStats(r), "perf_event_open, in process");
}

// The default: a sampler process outside the program takes the samples, and each sample is one
// native stack, outermost first: main called host_preprocess (examples/cuda/host_preprocess.cu,
// built with frame pointers for perf's callchains), so a folded stack that has host_preprocess
// has main before it. One exception is how frame-pointer callchains work, not a loss: a sample
// that lands in host_preprocess's prologue, before it has pushed its frame pointer, walks from
// main's saved frame and so names main's caller (__libc_start_call_main) right before
// host_preprocess, without main. Such stacks are allowed; any other stack without main fails,
// and at least one stack must have main.
TEST(CpuSampling, SamplerProcessIsTheDefaultAndItsStacksRunFromMainToHostPreprocess) {
  SKIP_UNLESS_PERF_ALLOWED();
  const SampledRun r = ProfileSampled("process", {"--cpu-sampling=10000"});
  ExpectGpuIdleNamesHostPreprocess(r);
  EXPECT_EQ(BackendInStats(r), "perf_event_open, sampler process");
  const std::string folded = FoldedOf(r.dir);
  size_t with_main = 0;
  for (size_t at = 0, end; at < folded.size(); at = end + 1) {
    end = folded.find('\n', at);
    if (end == std::string::npos) end = folded.size();
    const std::string line = folded.substr(at, end - at);
    const size_t pre = line.find(";host_preprocess");
    if (pre == std::string::npos) continue;
    if (line.rfind(";main;", pre) != std::string::npos) {
      ++with_main;
      continue;
    }
    const std::string before = line.substr(0, pre);
    EXPECT_EQ(before.substr(before.rfind(';') + 1), "__libc_start_call_main") << line;
  }
  EXPECT_GE(with_main, 1u) << folded;
}

// Where the sampler process is refused (simulated: GPROF_CPU_SAMPLER_PROCESS=refuse makes it
// answer as the kernel would), the program samples itself with perf, and the output says so.
TEST(CpuSampling, RefusedSamplerProcessFallsBackToPerfInProcessAndSaysSo) {
  SKIP_UNLESS_PERF_ALLOWED();
  const SampledRun r = ProfileSampled("refused", {"--cpu-sampling=10000"},
                                      {{"GPROF_CPU_SAMPLER_PROCESS", "refuse"}});
  ExpectGpuIdleNamesHostPreprocess(r);
  EXPECT_EQ(BackendInStats(r), "perf_event_open, in process");
}

TEST(CpuSampling, WithoutTheFlagGpuIdleNamesNoSampledFunction) {
  const SampledRun r = ProfileSampled("off", {});
  ASSERT_FALSE(r.gpu_idle.is_null());
  EXPECT_EQ(r.gpu_idle.dump().find("host_preprocess"), std::string::npos) << r.gpu_idle.dump(2);
  EXPECT_EQ(r.gpu_idle.dump().find("the host spent"), std::string::npos);
  EXPECT_EQ(FoldedOf(r.dir), "");
}

TEST(CpuSampling, BadRateStopsTheLauncherBeforeTheProgram) {
  const ProcessResult r = RunProcess({LauncherPath(), "--cpu-sampling=50000", "--",
                                      GPROF_HOST_PREPROCESS, "1", "1"},
                                     {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("GPROF_CPU_SAMPLING"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("GPROF_EXAMPLE_DONE"), std::string::npos);
}

}  // namespace
}  // namespace gprof::testing
