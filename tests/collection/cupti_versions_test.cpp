// Every CUDA 13 CUPTI a user may have, on the stand-in (verified on the stand-in only; the gpu
// twin is scripts/gpu-check with torch's own libcupti): CUDASIM_CUPTI_VERSION makes the stand-in
// write that version's record layouts (tests/cudasim/cupti/record_layouts.h: 13.1/13.2's 224-byte
// Kernel11, 13.5's 248-byte Kernel13, 112-byte Memcpy7, 104-byte Memset5), so the decoder must
// read each record's 13.0 prefix and follow cuptiActivityGetNextRecord's stride. And one libcupti
// per process: a libcupti the program loaded first ("torch-like") is the one used, and no other is
// loaded, whatever GPROF_CUPTI_LIB says.
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <set>
#include <sstream>

#include "tests/collection/collection_util.h"

namespace gprof::testing {
namespace {

std::string StandInCupti() { return StandInLibDir() + "/libcupti.so.13"; }
// A copy of the stand-in libcupti in its own folder (tests/cudasim/CMakeLists.txt): the library a
// program such as torch loads before gprof-run's injection runs.
std::string TorchLikeCupti() { return BinaryDir() + "/tests/cudasim/lib-torchlike/libcupti.so.13"; }

class StandInRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(StandInCupti().c_str(), F_OK) != 0 || access(InjectLibPath().c_str(), F_OK) != 0 ||
        access(ExamplePath("launch_loop").c_str(), F_OK) != 0) {
      GTEST_SKIP() << "build the cudasim, gprof_inject and CUDA example targets first";
    }
  }
};

class CuptiVersions : public StandInRun, public ::testing::WithParamInterface<const char*> {};

// launch_loop 100 (examples/cuda/launch_loop.cu), read off its source: cudaMalloc of one int,
// cudaMemset(counter, 0, sizeof(int)), 100 launches of tiny_kernel<<<1, 32>>>,
// cudaDeviceSynchronize, one cudaMemcpy(&host, counter, sizeof(int), DeviceToHost) into a stack
// int (pageable memory), cudaFree(counter). The synchronization and memory records are the kinds
// whose structs CUDA 12.4-12.7 write shorter (Synchronization 40 bytes, Memory3 120).
void ExpectLaunchLoop100(const Profile& p) {
  EXPECT_EQ(p.info.gpu_status, "collected");
  ASSERT_EQ(p.kernels.size(), 100u);
  for (const Kernel& k : p.kernels) {
    EXPECT_NE(p.strings.Get(k.name).find("tiny_kernel"), std::string_view::npos)
        << p.strings.Get(k.name);
    ASSERT_LT(k.launch_config, p.launch_configs.size());
    const LaunchConfig& c = p.launch_configs[k.launch_config];
    EXPECT_EQ(c.grid[0], 1u);
    EXPECT_EQ(c.grid[1], 1u);
    EXPECT_EQ(c.grid[2], 1u);
    EXPECT_EQ(c.block[0], 32u);
    EXPECT_EQ(c.block[1], 1u);
    EXPECT_EQ(c.block[2], 1u);
    EXPECT_EQ(c.dynamic_shared_bytes, 0u);
    EXPECT_EQ(c.graph_id, 0u);  // not launched from a graph
    EXPECT_EQ(c.device_id, 0u);
    EXPECT_GT(k.end_ns, k.start_ns);
    EXPECT_NE(k.correlation_id, 0u);
  }
  ASSERT_EQ(p.memsets.size(), 1u);
  EXPECT_EQ(p.memsets[0].bytes, 4u);
  EXPECT_EQ(p.memsets[0].value, 0u);
  EXPECT_EQ(p.memsets[0].mem_kind, MemKind::kDevice);
  ASSERT_EQ(p.memcpys.size(), 1u);
  EXPECT_EQ(p.memcpys[0].kind, CopyKind::kDtoH);
  EXPECT_EQ(p.memcpys[0].bytes, 4u);
  EXPECT_EQ(p.memcpys[0].src_kind, MemKind::kDevice);
  EXPECT_EQ(p.memcpys[0].dst_kind, MemKind::kPageable);
  EXPECT_EQ(p.memcpys[0].is_async, 0);
  // cudaDeviceSynchronize: one context synchronization (CUPTI's SYNCHRONIZATION kind).
  size_t context_syncs = 0;
  for (const Sync& sync : p.syncs) context_syncs += sync.kind == SyncKind::kContextSynchronize;
  EXPECT_EQ(context_syncs, 1u);
  // cudaMalloc and cudaFree of the 4-byte counter: an allocation, then its release, same address.
  ASSERT_EQ(p.memory_ops.size(), 2u);
  EXPECT_EQ(p.memory_ops[0].op, MemoryOpKind::kAlloc);
  EXPECT_EQ(p.memory_ops[1].op, MemoryOpKind::kFree);
  EXPECT_EQ(p.memory_ops[0].bytes, 4u);
  EXPECT_EQ(p.memory_ops[1].bytes, 4u);
  EXPECT_EQ(p.memory_ops[0].address, p.memory_ops[1].address);
  EXPECT_NE(p.memory_ops[0].address, 0u);
  EXPECT_EQ(p.memory_ops[0].mem_kind, MemKind::kDevice);
  EXPECT_LT(p.memory_ops[0].ts_ns, p.memory_ops[1].ts_ns);
  // The stand-in's device (tests/cudasim/cudart/device.cpp): an H200 with 132 SMs.
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.strings.Get(p.devices[0].name), "NVIDIA H200 (cudasim stand-in)");
  EXPECT_EQ(p.devices[0].num_sms, 132u);
  EXPECT_EQ(p.counters.cupti_dropped_records, 0u);
  ExpectEveryGpuRecordLinkedOnce(p);
}

TEST_P(CuptiVersions, LaunchLoopGivesEveryKernelCopyAndMemsetFieldByField) {
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "100"}, StandInLibDir(),
                                {{"GPROF_CUPTI_LIB", StandInCupti()},
                                 {"CUDASIM_CUPTI_VERSION", GetParam()}},
                                std::string("cupti_") + GetParam());
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
  ExpectLaunchLoop100(run.profile);
  EXPECT_EQ(run.profile.info.cupti_library, StandInCupti());
}

INSTANTIATE_TEST_SUITE_P(Cuda13, CuptiVersions,
                         ::testing::Values("130000", "130101", "130202", "130500"),
                         [](const auto& info) { return std::string("v") + info.param; });

// The CUDA 12 stand-in libcupti.so.12 (tests/cudasim/CMakeLists.txt, built with 12.8's headers):
// no cuptiSubscribe_v2; by default it reports 26 (CUDA 12.8) and writes 12.8's 208-byte Kernel9
// records. With CUDASIM_CUPTI_VERSION 24 (12.6) it also writes 88-byte Memcpy5 and 40-byte
// Synchronization records, and with 22 (12.4) 120-byte Memory3 records besides
// (tests/cudasim/cupti/record_layouts.h). The same program, the same expectations.
std::string Cuda12Cupti() { return BinaryDir() + "/tests/cudasim/lib12/libcupti.so.12"; }

class Cuda12Versions : public StandInRun, public ::testing::WithParamInterface<const char*> {};

TEST_P(Cuda12Versions, LaunchLoopGivesEveryKernelCopyMemsetSyncAndAllocationFieldByField) {
  ASSERT_EQ(access(Cuda12Cupti().c_str(), F_OK), 0) << "build the cudasim target";
  std::map<std::string, std::string> env = {{"GPROF_CUPTI_LIB", Cuda12Cupti()}};
  if (*GetParam() != '\0') env["CUDASIM_CUPTI_VERSION"] = GetParam();
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "100"}, StandInLibDir(), env,
                                std::string("cupti12_") + GetParam());
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
  ExpectLaunchLoop100(run.profile);
  EXPECT_EQ(run.profile.info.cupti_library, Cuda12Cupti());
}

INSTANTIATE_TEST_SUITE_P(Cuda12, Cuda12Versions, ::testing::Values("", "24", "22"),
                         [](const auto& info) {
                           const std::string v = info.param;
                           return v.empty() ? std::string("v26_by_default") : "v" + v;
                         });

// CUDA 12.3 and older (API version 21 and below): headers never checked, refused by version.
TEST_F(StandInRun, Cuda12_3LibcuptiIsRefusedByVersion) {
  ASSERT_EQ(access(Cuda12Cupti().c_str(), F_OK), 0) << "build the cudasim target";
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "10"}, StandInLibDir(),
                                {{"GPROF_CUPTI_LIB", Cuda12Cupti()},
                                 {"CUDASIM_CUPTI_VERSION", "21"}},
                                "cupti_12_3");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
  const std::string& status = run.profile.info.gpu_status;
  EXPECT_NE(status.find("(CUPTI API version 21)"), std::string::npos) << status;
  EXPECT_NE(status.find("CUDA 12 from API version 22"), std::string::npos) << status;
  EXPECT_TRUE(run.profile.kernels.empty());
}

// The distinct libcupti files the dynamic linker initialized (LD_DEBUG=files prints
// "calling init: <path>" for every object it loads, by its full path).
std::set<std::string> CuptiFilesLoaded(const std::string& ld_debug) {
  std::set<std::string> files;
  std::istringstream lines(ld_debug);
  const std::string marker = "calling init: ";
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    const std::string path = line.substr(at + marker.size());
    if (path.find("libcupti.so") != std::string::npos) files.insert(path);
  }
  return files;
}

class OneCuptiPerProcess : public StandInRun {};

// torch's libtorch_cpu.so has NEEDED libcupti.so.13: its libcupti is in the process before the
// driver runs gprof-run's InitializeInjection. gprof-run uses that one, and loads no other even
// when GPROF_CUPTI_LIB names another (two CUPTIs would hook one driver twice).
TEST_F(OneCuptiPerProcess, ALibcuptiTheProgramLoadedFirstIsUsedAndNoOtherIsLoaded) {
  ASSERT_EQ(access(TorchLikeCupti().c_str(), F_OK), 0) << "build the cudasim target";
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "100"}, StandInLibDir(),
                                {{"LD_PRELOAD", TorchLikeCupti()},
                                 {"GPROF_CUPTI_LIB", StandInCupti()},
                                 {"CUDASIM_CUPTI_VERSION", "130202"},
                                 {"LD_DEBUG", "files"}},
                                "torch_like");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
  EXPECT_EQ(run.profile.info.cupti_library, TorchLikeCupti());
  ExpectLaunchLoop100(run.profile);
  EXPECT_EQ(CuptiFilesLoaded(run.process.err), std::set<std::string>{TorchLikeCupti()})
      << run.process.err.substr(0, 4000);
  EXPECT_NE(run.process.err.find("GPROF_CUPTI_LIB=" + StandInCupti() + " is not loaded"),
            std::string::npos)
      << run.process.err.substr(0, 4000);
}

// The same library reporting a version this build does not decode (CUDA 14, say): refused with its
// path and version named, and no advice to set GPROF_CUPTI_LIB, which could not help here.
TEST_F(OneCuptiPerProcess, AnUnsupportedLibcuptiTheProgramLoadedIsRefusedByPathAndVersion) {
  ASSERT_EQ(access(TorchLikeCupti().c_str(), F_OK), 0) << "build the cudasim target";
  ProfiledRun run = RunProfiled({ExamplePath("launch_loop"), "10"}, StandInLibDir(),
                                {{"LD_PRELOAD", TorchLikeCupti()},
                                 {"CUDASIM_CUPTI_VERSION", "140000"}},
                                "torch_like_unsupported");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.has_dump) << run.dump_error << "\n" << run.process.err;
  const std::string& status = run.profile.info.gpu_status;
  EXPECT_NE(status.find("libcupti " + TorchLikeCupti() + " (CUPTI 14.0.0 (API version 140000))"),
            std::string::npos)
      << status;
  EXPECT_NE(status.find("no other can be used in this process"), std::string::npos) << status;
  EXPECT_EQ(status.find("GPROF_CUPTI_LIB"), std::string::npos) << status;
  EXPECT_TRUE(run.profile.kernels.empty());
  EXPECT_NE(run.process.out.find("GPROF_EXAMPLE_DONE launch_loop"), std::string::npos);
}

}  // namespace
}  // namespace gprof::testing
