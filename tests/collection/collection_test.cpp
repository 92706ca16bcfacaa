// End-to-end GPU collection on the CUDA/CUPTI stand-in (tests/cudasim): the real injection
// library inside the CUDA examples. Checks what a user would: every launch shows up once and is
// linked to its call, losses are counted exactly, and every failure leaves the program alone.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>
#include <set>

#include <cupti.h>

#include "tests/collection/collection_util.h"

namespace gprof::testing {
namespace {

std::string StandIn() { return StandInLibDir(); }
std::string StandInCupti() { return StandInLibDir() + "/libcupti.so.13"; }
std::map<std::string, std::string> WithStandInCupti(std::map<std::string, std::string> env = {}) {
  env["GPROF_CUPTI_LIB"] = StandInCupti();
  return env;
}

class Collection : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(StandInCupti().c_str(), F_OK) != 0 || access(InjectLibPath().c_str(), F_OK) != 0 ||
        access(ExamplePath("launch_loop").c_str(), F_OK) != 0) {
      GTEST_SKIP() << "build the cudasim, gprof_inject and CUDA example targets first";
    }
  }
};

// The stand-in's CUDASIM_CALLBACK_REPORT lines: (domain, cbid) -> callbacks delivered.
std::map<std::pair<int, int>, long long> CallbacksDelivered(const std::string& err) {
  std::map<std::pair<int, int>, long long> m;
  std::regex line("CUDASIM_CALLBACKS domain=([0-9]+) cbid=([0-9]+) count=([0-9]+)");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator();
       ++it) {
    m[{std::stoi((*it)[1]), std::stoi((*it)[2])}] = std::stoll((*it)[3]);
  }
  return m;
}

// Callbacks per id, not per domain (issue 29): the calls the default filter drops (getters and
// polls, api_filter.cpp) get no callback at all, so they cost the program nothing; the calls
// it records get exactly their two (ENTER, EXIT). eager_ops 200: 600 cudaGetDevice, 200
// cudaGetLastError, 50 cudaEventQuery and 50 cudaEventRecord (examples/cuda/eager_ops.cu).
TEST_F(Collection, DroppedGetterCallsGetNoCallbacksAndRecordedCallsTheirTwo) {
  const int rt = CUPTI_CB_DOMAIN_RUNTIME_API;
  for (const bool keep_get_device : {false, true}) {
    SCOPED_TRACE(keep_get_device ? "+cudaGetDevice" : "default filter");
    std::map<std::string, std::string> env = WithStandInCupti({{"CUDASIM_CALLBACK_REPORT", "1"}});
    if (keep_get_device) env["GPROF_API_FILTER"] = "default,+cudaGetDevice";
    ProfiledRun run = RunProfiled({ExamplePath("eager_ops"), "200"}, StandIn(), env, "eager_cbs");
    ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
    ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
    const auto delivered = CallbacksDelivered(run.process.err);
    ASSERT_FALSE(delivered.empty()) << run.process.err;
    auto count = [&](int cbid) {
      auto it = delivered.find({rt, cbid});
      return it == delivered.end() ? 0LL : it->second;
    };
    EXPECT_EQ(count(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020), keep_get_device ? 1200 : 0);
    EXPECT_EQ(count(CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020), 0);
    EXPECT_EQ(count(CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020), 0);
    EXPECT_EQ(count(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020), 100);
    // Nothing recorded is lost: every launch and every event record is in the profile.
    const Profile& p = run.profile;
    EXPECT_EQ(p.kernels.size(), 200u);
    int launches = 0, records = 0, get_device = 0;
    for (const ApiCall& c : p.api_calls) {
      const std::string name = ApiNameOf(p, c);
      launches += IsLaunchName(name);
      records += name.rfind("cudaEventRecord", 0) == 0;
      get_device += name.rfind("cudaGetDevice", 0) == 0 && name.find("Count") == std::string::npos;
    }
    EXPECT_EQ(launches, 200);
    EXPECT_EQ(records, 50);
    EXPECT_EQ(get_device, keep_get_device ? 600 : 0);
  }
}

// Exit with kernels still queued (issue 29): busy_loop launches 200 kernels of 1 ms and exits
// without synchronizing. A forced flush at once hands all 200 back unfinished (the stand-in models
// cupti_activity.h: incomplete records, never delivered again; the unfixed collector got 0
// kernels and 200 incomplete); the exit flush polls the default flush for up to 1 s first, and
// the 200 ms of queued work arrives whole.
TEST_F(Collection, ExitWithKernelsQueuedWaitsForThemBeforeForcing) {
  ProfiledRun run = RunProfiled({ExamplePath("busy_loop"), "200", "1000", "--no-sync"}, StandIn(),
                                WithStandInCupti({{"CUDASIM_KERNEL_NS", "spin=1000000"},
                                                  {"CUDASIM_LAUNCH_API_NS", "0"}}),
                                "exit_queued");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
  const Profile& p = run.profile;
  EXPECT_EQ(p.kernels.size(), 200u);
  EXPECT_EQ(p.counters.gpu_records_incomplete, 0u);
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  EXPECT_EQ(p.counters.cupti_errors, 0u);
}

TEST_F(Collection, MatmulEveryKernelCopyAndMemsetAppearsOnceLinkedToItsCall) {
  ProfiledRun run = RunProfiled({ExamplePath("matmul_bias"), "64"}, StandIn(), WithStandInCupti(),
                                "matmul64");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  EXPECT_NE(run.process.out.find("GPROF_EXAMPLE_DONE matmul_bias"), std::string::npos);
  ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
  const Profile& p = run.profile;
  EXPECT_EQ(p.info.gpu_status, "collected");
  EXPECT_EQ(p.info.cupti_library, StandInCupti());
  EXPECT_GT(p.kernels.size(), 0u);
  EXPECT_GT(p.memcpys.size(), 0u);
  ExpectEveryGpuRecordLinkedOnce(p);
  // Names and launch configurations are carried through.
  ASSERT_FALSE(p.kernels.empty());
  EXPECT_FALSE(p.strings.Get(p.kernels[0].name).empty());
  ASSERT_LT(p.kernels[0].launch_config, p.launch_configs.size());
  EXPECT_GT(p.launch_configs[p.kernels[0].launch_config].block[0], 0u);
  bool htod = false;
  for (const Memcpy& m : p.memcpys) htod = htod || m.kind == CopyKind::kHtoD;
  EXPECT_TRUE(htod);
  EXPECT_FALSE(p.api_names.empty());
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_FALSE(p.strings.Get(p.devices[0].name).empty());
  EXPECT_GT(p.devices[0].num_sms, 0u);
  // CUPTI's own cost is kept, as overhead (the stand-in reports its buffer requests).
  bool buffer_request = false;
  for (const Overhead& o : p.overheads) {
    buffer_request = buffer_request || o.kind == OverheadKind::kActivityBufferRequest;
  }
  EXPECT_TRUE(buffer_request);
}

TEST_F(Collection, LaunchLoopEveryLaunchOnce) {
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "2000"}, StandIn(),
                                WithStandInCupti(), "loop2000");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_EQ(run.profile.kernels.size(), 2000u);
  ExpectEveryGpuRecordLinkedOnce(run.profile);
}

TEST_F(Collection, MultistreamAndMultithreadStayLinked) {
  for (const char* example : {"multistream", "multithread"}) {
    ProfiledRun run = RunProfiled({ExamplePath(example)}, StandIn(), WithStandInCupti(), example);
    ASSERT_EQ(run.process.exit_code, 0) << example << "\n" << run.process.err;
    ASSERT_TRUE(run.has_dump) << example << ": " << run.dump_error;
    EXPECT_GT(run.profile.kernels.size(), 0u) << example;
    ExpectEveryGpuRecordLinkedOnce(run.profile);
    std::set<uint32_t> streams, tids;
    for (const Kernel& k : run.profile.kernels) streams.insert(k.stream_id);
    for (const ApiCall& c : run.profile.api_calls) tids.insert(c.tid);
    if (std::string(example) == "multistream") {
      EXPECT_GT(streams.size(), 1u);
    } else {
      EXPECT_GT(tids.size(), 1u);
    }
  }
}

// The articles' finding, on the stand-in's cost model: a small matmul is all launch overhead (CPU
// time far above GPU time); a large one keeps the GPU busy for about as long as the CPU waits for
// it. Measured over the ProfilerStep ranges (the training loop). The verdict comes from the
// stand-in's virtual timeline (tests/cudasim/README.md: launch call 4 us of host time, a 64x64
// matmul kernel ~1.7 us, a 4096 one 33.6 ms with the knob below), so this shows that the collector carries those
// times through to the profile, not that real hardware behaves so; the real-GPU twin is
// GpuCollection.MatmulSmallIsCpuBoundLargeIsGpuBound. Scheduling noise on a busy machine only
// ever adds host time (a late wake-up from cudaDeviceSynchronize, by up to a time slice), so the
// large run keeps its best of 3 tries and its kernels cost 2,000 ps a thread (33.6 ms each, not
// the default's 0.84 ms, against which 2 loaded cores' late wake-ups took the ratio to 0.41 under
// scripts/stress-verdicts): wake-ups would have to be 30 ms late on average to bring it to 0.5.
TEST_F(Collection, MatmulSmallIsCpuBoundLargeIsGpuBoundOnStandInCostModel) {
  auto ratio = [](const ProfiledRun& run) {
    return static_cast<double>(KernelNs(run.profile)) / static_cast<double>(StepNs(run.profile));
  };
  ProfiledRun small = RunProfiled({ExamplePath("matmul_bias"), "64"}, StandIn(),
                                  WithStandInCupti(), "mm64");
  ASSERT_TRUE(small.has_dump) << small.dump_error;
  ASSERT_GT(StepNs(small.profile), 0u);
  EXPECT_LT(ratio(small), 0.3) << "GPU/CPU at 64";
  double large_ratio = 0;
  for (int attempt = 0; attempt < 3 && large_ratio <= 0.5; ++attempt) {
    ProfiledRun large = RunProfiled({ExamplePath("matmul_bias"), "4096"}, StandIn(),
                                    WithStandInCupti({{"CUDASIM_KERNEL_PS_PER_THREAD", "2000"}}),
                                    "mm4096");
    ASSERT_TRUE(large.has_dump) << large.dump_error;
    ASSERT_GT(StepNs(large.profile), 0u);
    large_ratio = std::max(large_ratio, ratio(large));
  }
  EXPECT_GT(large_ratio, 0.5) << "GPU/CPU at 4096";
  EXPECT_LT(large_ratio, 1.05) << "GPU/CPU at 4096: kernels cannot outlast the loop";
}

TEST_F(Collection, MillionLaunchesLoseNothing) {
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "1000000"}, StandIn(),
                                WithStandInCupti(), "loop1m");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  EXPECT_EQ(p.kernels.size(), 1000000u);
  EXPECT_EQ(p.counters.cupti_dropped_records, 0u);
  EXPECT_EQ(p.counters.cupti_buffers_refused, 0u);
  EXPECT_EQ(p.counters.gpu_records_uncorrelated, 0u);
  EXPECT_EQ(p.counters.host_events_dropped, 0u);
}

// What launch_loop.cu asks of the GPU besides its N launches, read from the program:
// cudaMalloc (1 memory record), cudaMemset (1 memset), cudaDeviceSynchronize (1 context sync),
// cudaMemcpy (1 memcpy), cudaFree (1 memory record), plus the one device's record: N + 6 work
// records in all (NonKernelWorkRecords counts the 6).
constexpr uint64_t kLaunchLoopOtherWork = 6;

// With the pool capped, CUPTI drops what it cannot place and every lost record is counted. The
// slack, and why: besides the work records missing from the profile, the count may hold CUPTI's
// own overhead records of buffer requests, at most one per refused request (a granted request's
// overhead record goes into the buffer it got; a refused one has nowhere to go). So
//   missing work <= dropped <= missing work + refused requests,
// and dropped >= refused (each refusal loses at least the record that needed the buffer). In the
// stand-in's default buffer mode the upper bound is met exactly (tests/cudasim/cupti/activity.cpp
// drops the record and the request's overhead record); in its staged mode dropped == refused.
// Real CUPTI's accounting is checked by GpuCollection.CappedPoolReportsWhatItDropped.
//
// The pool must run dry for this to test anything, whatever the machine's load: a full buffer
// goes back to the tool only once all its records are complete (cupti_activity.h), and the
// stand-in's GPU runs in wall-clock time. A 64 KiB buffer holds ~300 kernel records, so the
// program needs a third buffer after ~600 launches, while the first comes back only when its
// 300th kernel has ended: with kernels of d and launches of t, requests are refused whenever
// 600 t < 300 d, i.e. t < d / 2. Launches take a few us here, ~40 us under TSan on an idle
// machine; 20 us kernels were not enough under TSan beside another test (CI saw nothing
// refused), so the kernels last 1 ms: refused unless a launch takes over 500 us. 2000 launches:
// 2 s of GPU time.
TEST_F(Collection, CappedPoolCountsEveryLostRecordPlusAtMostOneOverheadRecordPerRefusal) {
  constexpr uint64_t kLaunches = 2000;
  ProfiledRun run = RunProfiled(
      {ExamplePath("launch_loop"), std::to_string(kLaunches)}, StandIn(),
      WithStandInCupti({{"GPROF_ACTIVITY_POOL", "2"}, {"GPROF_ACTIVITY_BUFFER_KIB", "64"},
                        {"CUDASIM_KERNEL_NS", "tiny=1000000"}}),
      "capped");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  const uint64_t dropped = p.counters.cupti_dropped_records;
  const uint64_t refused = p.counters.cupti_buffers_refused;
  EXPECT_GT(refused, 0u);
  EXPECT_LT(p.kernels.size(), kLaunches);
  const uint64_t work = p.kernels.size() + NonKernelWorkRecords(p);
  ASSERT_LE(work, kLaunches + kLaunchLoopOtherWork) << "a work record was delivered twice";
  const uint64_t missing_work = kLaunches + kLaunchLoopOtherWork - work;
  EXPECT_GE(dropped, missing_work) << "a lost work record was not counted";
  EXPECT_LE(dropped, missing_work + refused) << "more drops counted than records lost";
  EXPECT_GE(dropped, refused);
  EXPECT_EQ(CountLines(run.process.err, "CUPTI activity records were dropped"), 1)
      << run.process.err;
  EXPECT_NE(run.process.err.find(std::to_string(dropped) + " CUPTI"), std::string::npos)
      << run.process.err;
}

// CUDASIM_DROP_EVERY=100 makes the stand-in drop every 100th activity record it makes, of any
// kind (tests/cudasim/README.md). Derived by hand: launch_loop 10000 makes 10000 + 6 work records
// and one CUPTI overhead record (its single buffer request: the default 8 MiB buffer, set here
// explicitly, holds all 10007 records of at most 216 B), so 10006 or 10007 records are in the
// stand-in's count, depending on whether it counts its overhead record, and 100 are dropped
// either way. Every record made is either in the profile or in the dropped count: exactly.
TEST_F(Collection, RecordsDroppedByCuptiAreCountedExactly) {
  constexpr uint64_t kLaunches = 10000;
  ProfiledRun run = RunProfiled(
      {ExamplePath("launch_loop"), std::to_string(kLaunches)}, StandIn(),
      WithStandInCupti({{"CUDASIM_DROP_EVERY", "100"}, {"GPROF_ACTIVITY_BUFFER_KIB", "8192"}}),
      "dropevery");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  const uint64_t dropped = p.counters.cupti_dropped_records;
  constexpr uint64_t kMade = kLaunches + kLaunchLoopOtherWork + 1;  // + the overhead record
  EXPECT_EQ(dropped, 100u);
  EXPECT_EQ(p.kernels.size() + NonKernelWorkRecords(p) + p.overheads.size() + dropped, kMade)
      << "kernels " << p.kernels.size() << ", other work " << NonKernelWorkRecords(p)
      << ", overhead " << p.overheads.size() << ", dropped " << dropped;
  EXPECT_EQ(p.counters.cupti_buffers_refused, 0u);
  // Every missing kernel is in the count, and the user is told once, with the number.
  EXPECT_LE(kLaunches - p.kernels.size(), dropped);
  EXPECT_EQ(CountLines(run.process.err, "CUPTI activity records were dropped"), 1)
      << run.process.err;
  EXPECT_NE(run.process.err.find(std::to_string(dropped) + " CUPTI"), std::string::npos)
      << run.process.err;
}

TEST_F(Collection, ApiFilterWidensAndNarrows) {
  ProfiledRun narrow = RunProfiled({ExamplePath("matmul_bias"), "64"}, StandIn(),
                                   WithStandInCupti({{"GPROF_API_FILTER", "none,+cudaMemcpy"}}),
                                   "filter_narrow");
  ASSERT_TRUE(narrow.has_dump) << narrow.dump_error;
  ASSERT_FALSE(narrow.profile.api_calls.empty());
  for (const ApiCall& c : narrow.profile.api_calls) {
    EXPECT_EQ(ApiNameOf(narrow.profile, c), "cudaMemcpy");
  }
  // Kernels whose launch call was filtered out are counted as unlinked, not hidden.
  EXPECT_EQ(narrow.profile.counters.gpu_records_uncorrelated, narrow.profile.kernels.size() +
                                                                  narrow.profile.memsets.size());
  ProfiledRun wide = RunProfiled({ExamplePath("matmul_bias"), "64"}, StandIn(),
                                 WithStandInCupti({{"GPROF_API_FILTER", "all"}}), "filter_all");
  ProfiledRun dflt = RunProfiled({ExamplePath("matmul_bias"), "64"}, StandIn(),
                                 WithStandInCupti(), "filter_default");
  ASSERT_TRUE(wide.has_dump && dflt.has_dump);
  EXPECT_GT(wide.profile.api_calls.size(), dflt.profile.api_calls.size());
  for (const ApiCall& c : dflt.profile.api_calls) {
    EXPECT_NE(ApiNameOf(dflt.profile, c), "cudaGetDevice");
    EXPECT_NE(ApiNameOf(dflt.profile, c), "cudaGetLastError");
  }
}

// ---- Failure modes: inert, one message, program untouched ------------------------------------

struct FailureCase {
  const char* name;
  std::map<std::string, std::string> env;
  const char* message;  // a phrase the one message must contain
};

class CollectionFailure : public Collection, public ::testing::WithParamInterface<FailureCase> {};

TEST_P(CollectionFailure, ProgramOutputAndExitCodeUnchangedAndOneMessage) {
  const FailureCase& c = GetParam();
  const std::vector<std::string> argv = {ExamplePath("matmul_bias"), "64"};
  ProcessResult plain = RunProcess(argv, PlainOptions(StandIn(), {}));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ProfiledRun run = RunProfiled(argv, StandIn(), c.env, c.name);
  EXPECT_EQ(run.process.exit_code, plain.exit_code);
  EXPECT_FALSE(run.process.signaled);
  EXPECT_EQ(run.process.out, plain.out);
  EXPECT_EQ(CountLines(run.process.err, "GPU collection is off"), 1) << run.process.err;
  EXPECT_NE(run.process.err.find(c.message), std::string::npos) << run.process.err;
  EXPECT_NE(run.process.err.find("NVTX ranges still are"), std::string::npos) << run.process.err;
  // The dump is still written, says why GPU data is missing, and holds no GPU records.
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_NE(run.profile.info.gpu_status.find(c.message), std::string::npos)
      << run.profile.info.gpu_status;
  EXPECT_TRUE(run.profile.kernels.empty());
  EXPECT_TRUE(run.profile.api_calls.empty());
}

TEST_F(Collection, CuptiErrorMidRunIsCountedAndReportedOnce) {
#ifndef GPROF_CUPTI_FAULT_SHIM
  GTEST_SKIP() << "fault shim not built";
#else
  const std::vector<std::string> argv = {ExamplePath("matmul_bias"), "64"};
  ProcessResult plain = RunProcess(argv, PlainOptions(StandIn(), {}));
  ProfiledRun run = RunProfiled(argv, StandIn(),
                                {{"GPROF_CUPTI_LIB", GPROF_CUPTI_FAULT_SHIM},
                                 {"GPROF_TEST_FAULT_TARGET", StandInCupti()}},
                                "midrun_error");
  EXPECT_EQ(run.process.exit_code, plain.exit_code);
  EXPECT_EQ(run.process.out, plain.out);
  EXPECT_EQ(CountLines(run.process.err, "error(s) during the run"), 1) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  EXPECT_GE(run.profile.counters.cupti_errors, 1u);
#endif
}

// Real CUPTI delivers the call during which InitializeInjection subscribed with an EXIT and no
// ENTER. That call must not be recorded from time 0: one such record would put the trace's start
// at the epoch and make one call last as long as the machine has been up. It is skipped and
// logged once at debug level; everything else is recorded as usual.
TEST_F(Collection, ApiExitWithoutEnterIsNotRecorded) {
#ifndef GPROF_CUPTI_FAULT_SHIM
  GTEST_SKIP() << "fault shim not built";
#else
  const std::vector<std::string> argv = {ExamplePath("matmul_bias"), "64"};
  ProcessResult plain = RunProcess(argv, PlainOptions(StandIn(), {}));
  const auto began = std::chrono::steady_clock::now();
  ProfiledRun run = RunProfiled(argv, StandIn(),
                                {{"GPROF_CUPTI_LIB", GPROF_CUPTI_FAULT_SHIM},
                                 {"GPROF_TEST_FAULT_TARGET", StandInCupti()},
                                 {"GPROF_TEST_FAULT_MODE", "exit_without_enter"},
                                 {"GPROF_API_FILTER", "all"},  // whichever call comes first
                                 {"GPROF_LOG_LEVEL", "debug"}},
                                "exit_without_enter");
  const auto wall_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now() - began)
                                                 .count());
  EXPECT_EQ(run.process.exit_code, plain.exit_code);
  EXPECT_EQ(run.process.out, plain.out);
  EXPECT_EQ(CountLines(run.process.err, "ended without a recorded start"), 1) << run.process.err;
  EXPECT_EQ(CountLines(run.process.err, "error(s) during the run"), 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  EXPECT_EQ(p.info.gpu_status, "collected");
  ASSERT_FALSE(p.api_calls.empty());
  for (const ApiCall& c : p.api_calls) {
    EXPECT_NE(c.start_ns, 0u) << ApiNameOf(p, c);
    EXPECT_LE(c.start_ns, c.end_ns) << ApiNameOf(p, c);
    // No call can last longer than the whole profiled process ran.
    EXPECT_LT(c.end_ns - c.start_ns, wall_ns) << ApiNameOf(p, c);
  }
  // The rest of the run is intact: every kernel, copy and memset still finds its call.
  EXPECT_GT(p.kernels.size(), 0u);
  ExpectEveryGpuRecordLinkedOnce(p);
#endif
}

#ifndef GPROF_REAL_CUPTI
#define GPROF_REAL_CUPTI "/usr/local/cuda/lib64/libcupti.so.13"
#endif

INSTANTIATE_TEST_SUITE_P(
    Modes, CollectionFailure,
    ::testing::Values(
        // The toolkit's real libcupti on a machine without a driver (and the stand-in cudart,
        // told not to load its driver, which the real libcupti would find and call).
        FailureCase{"no_driver",
                    {{"GPROF_CUPTI_LIB", GPROF_REAL_CUPTI}, {"CUDASIM_LOAD_DRIVER", "0"}},
                    "no CUDA driver"},
        FailureCase{"cupti_missing",
                    {{"GPROF_CUPTI_LIB", "/nonexistent/cuda/lib64/libcupti.so.13"}},
                    "no libcupti was found"},
        FailureCase{"version_mismatch",
                    {{"GPROF_CUPTI_LIB", StandInLibDir() + "/libcupti.so.13"},
                     {"CUDASIM_CUPTI_VERSION", "140000"}},
                    "(CUPTI 14.0.0 (API version 140000))"},
        FailureCase{"held_by_torch",
                    {{"GPROF_CUPTI_LIB", StandInLibDir() + "/libcupti.so.13"},
                     {"CUDASIM_CUPTI_HOLDER", "Kineto"}},
                    "CUPTI is already used by torch.profiler (Kineto)"},
        FailureCase{"held_by_nsys",
                    {{"GPROF_CUPTI_LIB", StandInLibDir() + "/libcupti.so.13"},
                     {"CUDASIM_CUPTI_HOLDER", "Nsight Systems"}},
                    "CUPTI is already used by Nsight Systems (nsys)"}),
    [](const ::testing::TestParamInfo<FailureCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gprof::testing
