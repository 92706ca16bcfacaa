#include "config/config.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace gprof {
namespace {

TEST(Config, DefaultsWithEmptyEnvironment) {
  const ParseResult r = ParseConfig({});
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.config.cuda);
  EXPECT_EQ(r.config.log_level, LogLevel::kWarn);
  EXPECT_FALSE(r.config.schedule.enabled());
  EXPECT_EQ(r.config.step.kind, StepSource::Kind::kNvtx);
  EXPECT_EQ(r.config.step.pattern, "ProfilerStep*");
  EXPECT_EQ(r.config.capture.kind, CaptureRange::Kind::kNone);
}

TEST(Config, EveryKeyHasHelpAndAParsableDefault) {
  std::map<std::string, std::string> env;
  for (const ConfigKey& k : ConfigKeys()) {
    EXPECT_FALSE(k.help.empty()) << k.name;
    if (!k.default_value.empty()) env[std::string(k.name)] = std::string(k.default_value);
  }
  const ParseResult r = ParseConfig(env);
  for (const auto& e : r.errors) ADD_FAILURE() << FormatError(e);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Config, BadValuesNameKeyValueAndWhatIsAllowedAndKeepDefault) {
  const ParseResult r = ParseConfig({{"GPROF_ACTIVITY_POOL", "lots"}, {"GPROF_CUDA", "maybe"}});
  ASSERT_EQ(r.errors.size(), 2u);
  for (const auto& e : r.errors) {
    const std::string line = FormatError(e);
    EXPECT_NE(line.find(e.key), std::string::npos);
    EXPECT_NE(line.find(e.value), std::string::npos);
  }
  EXPECT_NE(FormatError(r.errors[1]).find("from 2 to 65536"), std::string::npos);
  EXPECT_EQ(r.errors[1].key, "GPROF_ACTIVITY_POOL");
  EXPECT_EQ(r.config.activity_pool_buffers, 2048u);  // the default
  EXPECT_TRUE(r.config.cuda);
}

TEST(Config, UnknownGprofKeyWarnsOtherKeysIgnored) {
  const ParseResult r = ParseConfig({{"GPROF_OUTPUT_DRI", "x"}, {"HOME", "/root"}});
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("GPROF_OUTPUT_DRI"), std::string::npos);
}

TEST(Config, ScheduleParsesTorchFields) {
  const ParseResult r =
      ParseConfig({{"GPROF_SCHEDULE", "skip_first=1,wait=2,warmup=3,active=4,repeat=5"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.schedule.skip_first, 1u);
  EXPECT_EQ(r.config.schedule.wait, 2u);
  EXPECT_EQ(r.config.schedule.warmup, 3u);
  EXPECT_EQ(r.config.schedule.active, 4u);
  EXPECT_EQ(r.config.schedule.repeat, 5u);
}

TEST(Config, ScheduleRejectsZeroActiveAndUnknownFields) {
  EXPECT_FALSE(ParseConfig({{"GPROF_SCHEDULE", "wait=1"}}).ok());
  EXPECT_FALSE(ParseConfig({{"GPROF_SCHEDULE", "active=2,cooldown=1"}}).ok());
  EXPECT_FALSE(ParseConfig({{"GPROF_SCHEDULE", "active=-1"}}).ok());
}

TEST(Config, StepSources) {
  auto step = [](const std::string& v) { return ParseConfig({{"GPROF_STEP", v}}); };
  EXPECT_EQ(step("kernel:^sgd_.*").config.step.kind, StepSource::Kind::kKernel);
  EXPECT_EQ(step("api:cudaStreamSynchronize").config.step.pattern, "cudaStreamSynchronize");
  EXPECT_EQ(step("time:250ms").config.step.period_ns, 250'000'000u);
  EXPECT_FALSE(step("kernel:([").ok());
  EXPECT_FALSE(step("time:0").ok());
  EXPECT_FALSE(step("ProfilerStep").ok());
}

// Kernel patterns are bounded before std::regex compiles them (fuzz/config_fuzz found libstdc++
// overflowing a signed int on a{1111111111111111111} and on a back-reference \6666666666666666666):
// 512 bytes, repetition counts and back-reference numbers of 4 digits.
TEST(Config, KernelStepPatternsAreBoundedBeforeCompiling) {
  auto step = [](const std::string& v) { return ParseConfig({{"GPROF_STEP", v}}); };
  EXPECT_TRUE(step("kernel:a{9999}").ok());
  EXPECT_TRUE(step("kernel:a{2,9999}").ok());
  EXPECT_TRUE(step("kernel:a\\{123456}").ok());  // an escaped brace is a literal
  const ParseResult r = step("kernel:a{1111111111111111111}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(FormatError(r.errors[0]).find("repetition count over 9999"), std::string::npos);
  EXPECT_FALSE(step("kernel:a{1,10000}").ok());
  EXPECT_FALSE(step("kernel:(a)\\66666666666666666666").ok());  // back-reference: same overflow
  EXPECT_TRUE(step("kernel:\\\\66666666666666666666").ok());  // an escaped \ then digits
  EXPECT_TRUE(step("kernel:gemm_66666666666666666666").ok());  // digits in a literal name
  EXPECT_TRUE(step("kernel:" + std::string(512, 'a')).ok());
  EXPECT_FALSE(step("kernel:" + std::string(513, 'a')).ok());
}

TEST(Config, CaptureRange) {
  const ParseResult r = ParseConfig({{"GPROF_CAPTURE_RANGE", "nvtx"},
                                     {"GPROF_NVTX_CAPTURE", "train@mydomain"},
                                     {"GPROF_CAPTURE_RANGE_END", "repeat:3"},
                                     {"GPROF_DELAY", "1.5s"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.capture.nvtx_name, "train");
  EXPECT_EQ(r.config.capture.nvtx_domain, "mydomain");
  EXPECT_TRUE(r.config.capture.repeat);
  EXPECT_EQ(r.config.capture.repeat_count, 3u);
  EXPECT_EQ(r.config.capture.delay_ns, 1'500'000'000u);
  EXPECT_FALSE(ParseConfig({{"GPROF_CAPTURE_RANGE", "nvtx"}}).ok());
  EXPECT_FALSE(ParseConfig({{"GPROF_DELAY", "2s"}, {"GPROF_SCHEDULE", "active=1"}}).ok());
  EXPECT_FALSE(ParseConfig({{"GPROF_CAPTURE_RANGE", "cudaProfilerApi"},
                            {"GPROF_SCHEDULE", "active=1"}}).ok());
}

TEST(Config, StartPausedMakesControlCapturesAndRefusesOtherWindows) {
  const ParseResult r = ParseConfig({{"GPROF_START_PAUSED", "1"}, {"GPROF_SESSION", "svc-1.a_b"}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.config.start_paused);
  EXPECT_EQ(r.config.capture.kind, CaptureRange::Kind::kControl);
  EXPECT_EQ(r.config.session, "svc-1.a_b");
  EXPECT_EQ(ParseConfig({{"GPROF_SESSION", "x"}}).config.capture.kind, CaptureRange::Kind::kNone);
  for (const auto& other : std::vector<std::pair<std::string, std::string>>{
           {"GPROF_SCHEDULE", "active=1"},
           {"GPROF_CAPTURE_RANGE", "cudaProfilerApi"},
           {"GPROF_DURATION", "1s"}}) {
    const ParseResult bad = ParseConfig({{"GPROF_START_PAUSED", "1"}, other});
    ASSERT_EQ(bad.errors.size(), 1u) << other.first;
    EXPECT_EQ(bad.errors[0].key, "GPROF_START_PAUSED");
    EXPECT_NE(bad.errors[0].message.find("cannot be combined"), std::string::npos);
  }
  // Session names become socket listings and file names: no slashes, spaces or empties.
  for (const std::string& bad :
       std::vector<std::string>{"", "a/b", "a b", "\xc3\xa9", std::string(65, 'a')}) {
    EXPECT_FALSE(ParseConfig({{"GPROF_SESSION", bad}}).ok()) << bad;
  }
  EXPECT_TRUE(ParseConfig({{"GPROF_SESSION", std::string(64, 'a')}}).ok());
}

TEST(Config, ApiFilter) {
  const ParseResult r = ParseConfig({{"GPROF_API_FILTER", "all,-cudaEventQuery,+cudaGetDevice"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config.api_filter.base, ApiFilter::Base::kAll);
  EXPECT_EQ(r.config.api_filter.exclude, std::vector<std::string>{"cudaEventQuery"});
  EXPECT_EQ(r.config.api_filter.include, std::vector<std::string>{"cudaGetDevice"});
  EXPECT_FALSE(ParseConfig({{"GPROF_API_FILTER", "everything"}}).ok());
}

TEST(Config, Durations) {
  uint64_t ns = 0;
  EXPECT_TRUE(ParseDurationNs("2", &ns));
  EXPECT_EQ(ns, 2'000'000'000u);
  EXPECT_TRUE(ParseDurationNs("100us", &ns));
  EXPECT_EQ(ns, 100'000u);
  EXPECT_FALSE(ParseDurationNs("-1s", &ns));
  EXPECT_FALSE(ParseDurationNs("fast", &ns));
  EXPECT_FALSE(ParseDurationNs("", &ns));
}

TEST(Config, BacktraceDefaultsToSyncAndAllocAndTakesACommaListOrNone) {
  EXPECT_EQ(ParseConfig({}).config.backtrace, kBacktraceSync | kBacktraceAlloc);
  EXPECT_EQ(ParseConfig({{"GPROF_BACKTRACE", "none"}}).config.backtrace, 0);
  EXPECT_EQ(ParseConfig({{"GPROF_BACKTRACE", "sync"}}).config.backtrace, kBacktraceSync);
  EXPECT_EQ(ParseConfig({{"GPROF_BACKTRACE", "launch,memcpy"}}).config.backtrace,
            kBacktraceLaunch | kBacktraceMemcpy);
  EXPECT_EQ(ParseConfig({{"GPROF_BACKTRACE", "sync,alloc,memcpy,launch"}}).config.backtrace, 15);
  for (const char* bad : {"", "sync,", ",sync", "all", "none,sync", "Sync"}) {
    const ParseResult r = ParseConfig({{"GPROF_BACKTRACE", bad}});
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_EQ(r.errors[0].key, "GPROF_BACKTRACE");
  }
}

TEST(Config, CpuSamplingIsOffByDefaultTakesHzUpTo20000AndABackend) {
  EXPECT_EQ(ParseConfig({}).config.cpu_sampling_hz, 0u);
  EXPECT_EQ(ParseConfig({}).config.cpu_sampling_backend, CpuSamplingBackend::kAuto);
  EXPECT_EQ(ParseConfig({{"GPROF_CPU_SAMPLING", "20000"}}).config.cpu_sampling_hz, 20000u);
  EXPECT_EQ(ParseConfig({{"GPROF_CPU_SAMPLING_BACKEND", "timer"}}).config.cpu_sampling_backend,
            CpuSamplingBackend::kTimer);
  EXPECT_EQ(ParseConfig({{"GPROF_CPU_SAMPLING_BACKEND", "perf"}}).config.cpu_sampling_backend,
            CpuSamplingBackend::kPerf);
  EXPECT_EQ(ParseConfig({{"GPROF_CPU_SAMPLING_BACKEND", "process"}}).config.cpu_sampling_backend,
            CpuSamplingBackend::kProcess);
  EXPECT_FALSE(ParseConfig({}).config.cpu_sampler_process_refused);
  EXPECT_TRUE(ParseConfig({{"GPROF_CPU_SAMPLER_PROCESS", "refuse"}})
                  .config.cpu_sampler_process_refused);
  EXPECT_EQ(ParseConfig({{"GPROF_CPU_SAMPLER_PROCESS", "no"}}).errors.size(), 1u);
  for (const char* bad : {"20001", "-5", "1k", ""}) {
    const ParseResult r = ParseConfig({{"GPROF_CPU_SAMPLING", bad}});
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_NE(FormatError(r.errors[0]).find("from 0 to 20000"), std::string::npos);
  }
  const ParseResult r = ParseConfig({{"GPROF_CPU_SAMPLING_BACKEND", "ebpf"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "GPROF_CPU_SAMPLING_BACKEND");
}

TEST(Config, PythonSamplingIsOffByDefaultAndTakesHzUpTo2000) {
  EXPECT_EQ(ParseConfig({}).config.python_sampling_hz, 0u);
  EXPECT_EQ(ParseConfig({{"GPROF_PYTHON_SAMPLING", "0"}}).config.python_sampling_hz, 0u);
  EXPECT_EQ(ParseConfig({{"GPROF_PYTHON_SAMPLING", "1"}}).config.python_sampling_hz, 1u);
  EXPECT_EQ(ParseConfig({{"GPROF_PYTHON_SAMPLING", "2000"}}).config.python_sampling_hz, 2000u);
  for (const char* bad : {"2001", "-1", "fast", "100hz", ""}) {
    const ParseResult r = ParseConfig({{"GPROF_PYTHON_SAMPLING", bad}});
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_EQ(r.errors[0].key, "GPROF_PYTHON_SAMPLING");
    EXPECT_NE(FormatError(r.errors[0]).find("from 0 to 2000"), std::string::npos);
    EXPECT_EQ(r.config.python_sampling_hz, 0u);
  }
}

TEST(Config, PythonSamplerIsAutoByDefaultAndRefusesOtherNames) {
  EXPECT_FALSE(ParseConfig({}).config.python_sampler_in_process);
  EXPECT_FALSE(ParseConfig({{"GPROF_PYTHON_SAMPLER", "auto"}}).config.python_sampler_in_process);
  EXPECT_TRUE(
      ParseConfig({{"GPROF_PYTHON_SAMPLER", "in-process"}}).config.python_sampler_in_process);
  const ParseResult r = ParseConfig({{"GPROF_PYTHON_SAMPLER", "py-spy"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "GPROF_PYTHON_SAMPLER");
}

}  // namespace
}  // namespace gprof

namespace gprof {
namespace {

TEST(Config, SegmentSecondsDefaultsToTenTakesZeroToADayAndRefusesMore) {
  EXPECT_EQ(ParseConfig({}).config.segment_seconds, 10u);
  EXPECT_EQ(ParseConfig({{"GPROF_SEGMENT_SECONDS", "0"}}).config.segment_seconds, 0u);
  EXPECT_EQ(ParseConfig({{"GPROF_SEGMENT_SECONDS", "86400"}}).config.segment_seconds, 86400u);
  for (const char* bad : {"86401", "-1", "10s", ""}) {
    const ParseResult r = ParseConfig({{"GPROF_SEGMENT_SECONDS", bad}});
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_EQ(r.errors[0].key, "GPROF_SEGMENT_SECONDS");
    EXPECT_EQ(r.config.segment_seconds, 10u) << bad;
  }
}

}  // namespace
}  // namespace gprof
