#include "collector/cupti/start_messages.h"

#include "collector/cupti/record_structs.h"

#include <gtest/gtest.h>

namespace gprof::collector {
namespace {

TEST(FriendlyHolder, NamesTheToolsUsersKnow) {
  EXPECT_EQ(FriendlyHolder("CUPTI for Kineto"), "torch.profiler (Kineto)");
  EXPECT_EQ(FriendlyHolder("CUPTI for libtorch_cuda.so"), "torch.profiler (Kineto)");
  EXPECT_EQ(FriendlyHolder("Nsight Systems"), "Nsight Systems (nsys)");
  EXPECT_EQ(FriendlyHolder("CUPTI for NSYS"), "Nsight Systems (nsys)");
  EXPECT_EQ(FriendlyHolder("Nsight Compute"), "Nsight Compute (ncu)");
  EXPECT_EQ(FriendlyHolder("compute-sanitizer"), "compute-sanitizer");
  EXPECT_EQ(FriendlyHolder("DCGM exporter"), "DCGM");
  EXPECT_EQ(FriendlyHolder(""), "another profiling tool");
  EXPECT_EQ(FriendlyHolder("my-tool"), "my-tool");
}

}  // namespace
}  // namespace gprof::collector

namespace gprof::collector {
namespace {

// config/cupti_support.h's table, as the collector applies it (CuptiVersionSupported).
TEST(CuptiSupport, EveryCuda13MinorFrom13_0IsDecodedAndNothingElse) {
  for (uint32_t v : {130000u, 130001u, 130099u, 130101u, 130202u, 130500u}) {
    EXPECT_TRUE(CuptiVersionSupported(v)) << v;
    EXPECT_FALSE(CuptiVersionUntested(v)) << v;
  }
  // A later 13.x is decoded by its 13.0 prefix, and said to be untested.
  EXPECT_TRUE(CuptiVersionSupported(130600));
  EXPECT_TRUE(CuptiVersionUntested(130600));
  // CUDA 12.4 (v22) to 12.9 (v28) write the decoded fields at the same offsets, in records that
  // are 13.0's cut short (record_layout_check.cpp, against the 12.4, 12.6, 12.8, 12.9 headers).
  for (uint32_t v : {22u, 23u, 24u, 25u, 26u, 27u}) EXPECT_TRUE(CuptiVersionSupported(v)) << v;
  EXPECT_TRUE(CuptiVersionSupported(26));
  EXPECT_TRUE(CuptiVersionSupported(28));
  EXPECT_FALSE(CuptiVersionUntested(28));
  EXPECT_TRUE(CuptiVersionUntested(29));
  // Another major, CUDA 12.3 and older (headers never checked), CUDA 11, numbers no CUPTI
  // reports, and 0.
  for (uint32_t v : {140000u, 21u, 19u, 17u, 120800u, 0u}) {
    EXPECT_FALSE(CuptiVersionSupported(v)) << v;
  }
  EXPECT_EQ(CuptiMajorOf(130202), 13);
  EXPECT_EQ(CuptiMajorOf(26), 12);
  EXPECT_EQ(CuptiMajorOf(19), 12);
  EXPECT_EQ(CuptiMajorOf(18), 0);
  EXPECT_EQ(CuptiVersionText(130202), "13.2.2 (API version 130202)");
  EXPECT_EQ(CuptiVersionText(26), "API version 26");
}

CudaStack TorchOnAnOldDriver() {
  CudaStack s;
  s.cupti_path = "/venv/site-packages/nvidia/cu13/lib/libcupti.so.13";
  s.cupti_version = 130202;  // torch 2.15's CUPTI
  s.cupti_already_loaded = true;
  s.driver_loaded = true;
  s.driver_version = 13000;  // a CUDA 13.0 driver
  s.runtime = "libcudart.so.13.2.51";
  return s;
}

TEST(StartMessages, NamesLibcuptiDriverAndRuntimeAndACuptiNewerThanTheDriver) {
  CudaStack s = TorchOnAnOldDriver();
  EXPECT_TRUE(CuptiNewerThanDriver(s));
  EXPECT_EQ(DescribeCudaStack(s),
            "libcupti /venv/site-packages/nvidia/cu13/lib/libcupti.so.13 (CUPTI 13.2.2 (API version "
            "130202)), driver CUDA 13.0 (13000), runtime libcudart.so.13.2.51; CUPTI newer than the "
            "driver: this CUPTI is CUDA 13.2, the driver supports up to CUDA 13.0 (13000), and CUPTI "
            "needs a driver at least as new as its own CUDA release");
  s.driver_version = 13020;
  EXPECT_FALSE(CuptiNewerThanDriver(s));
  s.driver_version = 12080;
  EXPECT_TRUE(CuptiNewerThanDriver(s));
  s.driver_version = 0;  // unknown: no claim either way
  EXPECT_FALSE(CuptiNewerThanDriver(s));
  // CUDA 12's numbers (cupti_version.h: "v26 : CUDA Toolkit 12.8"): a 12.8 CUPTI on a 12.4 driver.
  s.cupti_version = 26;
  s.driver_version = 12040;
  EXPECT_TRUE(CuptiNewerThanDriver(s));
  EXPECT_NE(DescribeCudaStack(s).find("this CUPTI is CUDA 12.8, the driver supports up to CUDA 12.4"),
            std::string::npos)
      << DescribeCudaStack(s);
  s.driver_version = 12080;
  EXPECT_FALSE(CuptiNewerThanDriver(s));
  s.driver_loaded = false;
  s.driver_version = 0;
  EXPECT_NE(DescribeCudaStack(s).find("no CUDA driver (libcuda.so.1) loaded"), std::string::npos);
}

TEST(StartMessages, ARefusedLibcuptiTheProgramLoadedGetsNoGprofCuptiLibAdvice) {
  CudaStack s = TorchOnAnOldDriver();
  s.cupti_version = 21;  // a CUDA 12.3 CUPTI
  s.driver_version = 12080;
  const std::string loaded = CuptiVersionRefused(s);
  EXPECT_NE(loaded.find("libcupti /venv/site-packages/nvidia/cu13/lib/libcupti.so.13 (CUPTI API "
                        "version 21), driver CUDA 12.8 (12080)"),
            std::string::npos)
      << loaded;
  EXPECT_NE(loaded.find("it decodes CUDA 13 from 13.0.0"), std::string::npos) << loaded;
  EXPECT_NE(loaded.find("no other can be used in this process"), std::string::npos) << loaded;
  EXPECT_EQ(loaded.find("GPROF_CUPTI_LIB"), std::string::npos) << loaded;
  EXPECT_EQ(loaded.find('\n'), std::string::npos);
  s.cupti_already_loaded = false;
  EXPECT_NE(CuptiVersionRefused(s).find("Point GPROF_CUPTI_LIB at"), std::string::npos);
}

TEST(StartMessages, AnUnloadableLibcuptiTheProgramHasGetsNoGprofCuptiLibAdvice) {
  CuptiLoadResult load;
  load.already_loaded = true;
  load.error = "the libcupti already loaded in the process, /x/libcupti.so.13, cannot be reached";
  CudaStack s;
  const std::string text = CuptiUnavailable(load, s);
  EXPECT_EQ(text.find("GPROF_CUPTI_LIB"), std::string::npos) << text;
  EXPECT_NE(text.find("no CUDA driver (libcuda.so.1) loaded, runtime libcudart not loaded"),
            std::string::npos)
      << text;
  load.already_loaded = false;
  EXPECT_NE(CuptiUnavailable(load, s).find("Set GPROF_CUPTI_LIB"), std::string::npos);
}

}  // namespace
}  // namespace gprof::collector
