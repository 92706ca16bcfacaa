// API filter: the default drop list, +NAME/-NAME, all/none, and CUPTI's versioned names.
#include "collector/cupti/api_filter.h"

#include <gtest/gtest.h>

#include <cupti.h>

namespace gprof::collector {
namespace {

// A miniature cbid -> name table in CUPTI's spelling.
std::vector<std::string> Names() {
  return {"", "cudaGetLastError_v3020", "__cudaLaunchKernel_v13000", "cudaMemcpy_v3020",
          "cudaStreamSynchronize_ptsz_v7000", "cudaGetDevice_v3020", "cudaMalloc_v3020"};
}

TEST(ApiFilter, DefaultDropsPollingAndKeepsWork) {
  ApiFilter f;
  auto t = BuildApiFilterTable(f, Names());
  EXPECT_EQ(t[0], 0);  // CUPTI's invalid id
  EXPECT_EQ(t[1], 0);  // cudaGetLastError
  EXPECT_EQ(t[2], 1);  // __cudaLaunchKernel
  EXPECT_EQ(t[3], 1);  // cudaMemcpy
  EXPECT_EQ(t[4], 1);  // cudaStreamSynchronize_ptsz
  EXPECT_EQ(t[5], 0);  // cudaGetDevice
  EXPECT_EQ(t[6], 1);
}

TEST(ApiFilter, PlusAndMinusWidenAndNarrow) {
  ApiFilter f;
  f.include = {"cudaGetDevice"};
  f.exclude = {"cudaMemcpy", "cudaStreamSynchronize"};
  auto t = BuildApiFilterTable(f, Names());
  EXPECT_EQ(t[5], 1);
  EXPECT_EQ(t[3], 0);
  EXPECT_EQ(t[4], 0);  // the base name matches the _ptsz variant
  EXPECT_EQ(t[2], 1);
}

TEST(ApiFilter, AllAndNone) {
  ApiFilter all;
  all.base = ApiFilter::Base::kAll;
  auto t = BuildApiFilterTable(all, Names());
  for (size_t i = 1; i < t.size(); ++i) EXPECT_EQ(t[i], 1) << i;
  ApiFilter none;
  none.base = ApiFilter::Base::kNone;
  none.include = {"__cudaLaunchKernel"};
  t = BuildApiFilterTable(none, Names());
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i], i == 2 ? 1 : 0) << i;
}

TEST(ApiFilter, Names) {
  EXPECT_EQ(DisplayApiName("__cudaLaunchKernel_v13000"), "__cudaLaunchKernel");
  EXPECT_EQ(DisplayApiName("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(DisplayApiName("cuMemcpy_v2"), "cuMemcpy");
  EXPECT_EQ(BaseApiName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync");
  EXPECT_EQ(DisplayApiName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync_ptsz");
}

// A user's +NAME/-NAME picks the same calls whether it carries CUPTI's version suffix or not,
// and whichever version it names.
TEST(ApiFilter, PlusAndMinusWithOrWithoutVersionSuffix) {
  for (const char* spelling : {"cudaGetDevice", "cudaGetDevice_v3020", "cudaGetDevice_v9999"}) {
    ApiFilter f;
    f.include = {spelling};
    EXPECT_EQ(BuildApiFilterTable(f, Names())[5], 1) << spelling;
  }
  for (const char* spelling : {"__cudaLaunchKernel", "__cudaLaunchKernel_v13000"}) {
    ApiFilter f;
    f.exclude = {spelling};
    auto t = BuildApiFilterTable(f, Names());
    EXPECT_EQ(t[2], 0) << spelling;
    EXPECT_EQ(t[3], 1) << spelling;  // nothing else
  }
  // The _ptsz variant by its own name, with or without version; the plain call is not named.
  const std::vector<std::string> names = {"", "cudaStreamSynchronize_v3020",
                                          "cudaStreamSynchronize_ptsz_v7000"};
  for (const char* spelling : {"cudaStreamSynchronize_ptsz", "cudaStreamSynchronize_ptsz_v7000"}) {
    ApiFilter f;
    f.exclude = {spelling};
    auto t = BuildApiFilterTable(f, names);
    EXPECT_EQ(t[1], 1) << spelling;
    EXPECT_EQ(t[2], 0) << spelling;
  }
}

// The default drop list is written in base names and still applies to versioned CUPTI names.
TEST(ApiFilter, DefaultDroppedListIsBaseNames) {
  ASSERT_FALSE(DefaultDroppedApis().empty());
  for (std::string_view name : DefaultDroppedApis()) {
    EXPECT_EQ(BaseApiName(name), name);
    ApiFilter f;
    auto t = BuildApiFilterTable(f, {"", std::string(name) + "_v3020", "cudaMalloc_v3020"});
    EXPECT_EQ(t[1], 0) << name;
    EXPECT_EQ(t[2], 1) << name;
  }
}

// functionName may come with or without the suffix (see api_filter.h): BaseApiName gives
// the same key either way, which is what the window thread matches `api:NAME` steps with.
TEST(ApiFilter, BaseNameIsTheSameForEitherSpelling) {
  const std::pair<const char*, const char*> pairs[] = {
      {"cudaLaunchKernel", "cudaLaunchKernel_v7000"},
      {"cudaLaunchKernel_ptsz", "cudaLaunchKernel_ptsz_v7000"},
      {"cudaProfilerStart", "cudaProfilerStart_v4000"},
      {"cudaStreamSynchronize_ptds", "cudaStreamSynchronize_v3020"},
      {"__cudaLaunchKernel", "__cudaLaunchKernel_ptsz_v13000"},
  };
  for (const auto& [plain, versioned] : pairs) {
    EXPECT_EQ(BaseApiName(plain), BaseApiName(versioned)) << plain;
  }
  EXPECT_EQ(BaseApiName("cudaProfilerStop_v4000"), "cudaProfilerStop");
  EXPECT_EQ(BaseApiName("cuLaunchKernel"), "cuLaunchKernel");
  // Only a trailing _v<digits> is a version: names that merely contain "_v" stay whole.
  EXPECT_EQ(BaseApiName("cudaGraphExecKernelNodeSetParams_vX"), "cudaGraphExecKernelNodeSetParams_vX");
  EXPECT_EQ(BaseApiName("cudaFoo_v"), "cudaFoo_v");
}

TEST(ApiFilter, LaunchLikeIds) {
  EXPECT_TRUE(IsRuntimeLaunchCbid(505));  // __cudaLaunchKernel (CUDA 13)
  EXPECT_TRUE(IsRuntimeLaunchCbid(506));
  EXPECT_TRUE(IsRuntimeLaunchCbid(211));
  EXPECT_TRUE(IsRuntimeLaunchCbid(430));
  EXPECT_TRUE(IsRuntimeLaunchCbid(311));
  EXPECT_FALSE(IsRuntimeLaunchCbid(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020));
  EXPECT_TRUE(IsDriverLaunchCbid(307));
  EXPECT_TRUE(IsDriverLaunchCbid(652));
  EXPECT_TRUE(IsDriverLaunchCbid(514));
}

// GPROF_BACKTRACE's table, over a table in CUPTI's spelling: names for sync, alloc and memcpy;
// the launch group by the real launch cbid.
std::vector<std::string> StackNames() {
  std::vector<std::string> names(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 + 1);
  names[1] = "cudaDeviceSynchronize_v3020";
  names[2] = "cudaStreamSynchronize_ptsz_v7000";
  names[3] = "cudaMalloc_v3020";
  names[4] = "cudaFree_v3020";
  names[5] = "cudaMemcpy_v3020";
  names[6] = "cudaGetDevice_v3020";
  names[7] = "cudaMallocHost_v3020";
  names[CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000] = "cudaLaunchKernel_v7000";
  return names;
}

TEST(BacktraceTable, NoneMarksNothing) {
  const auto t = BuildBacktraceTable(0, StackNames(), /*runtime=*/true);
  ASSERT_EQ(t.size(), StackNames().size());
  for (size_t cbid = 0; cbid < t.size(); ++cbid) EXPECT_EQ(t[cbid], 0) << cbid;
}

TEST(BacktraceTable, SyncMarksOnlySynchronizeCalls) {
  const auto t = BuildBacktraceTable(kBacktraceSync, StackNames(), true);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[1], 1);
  EXPECT_EQ(t[2], 1);  // the _ptsz variant
  for (size_t cbid = 3; cbid < t.size(); ++cbid) EXPECT_EQ(t[cbid], 0) << cbid;
}

TEST(BacktraceTable, EachGroupMarksItsCallsAndTheDefaultIsSyncAndAlloc) {
  const auto alloc = BuildBacktraceTable(kBacktraceAlloc, StackNames(), true);
  EXPECT_EQ(alloc[3] + alloc[4] + alloc[7], 3);
  EXPECT_EQ(alloc[1] + alloc[5] + alloc[6], 0);
  const auto copy = BuildBacktraceTable(kBacktraceMemcpy, StackNames(), true);
  EXPECT_EQ(copy[5], 1);
  EXPECT_EQ(copy[3], 0);
  const auto launch = BuildBacktraceTable(kBacktraceLaunch, StackNames(), true);
  EXPECT_EQ(launch[CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000], 1);
  EXPECT_EQ(launch[1] + launch[3] + launch[5], 0);
  const auto def = BuildBacktraceTable(Config{}.backtrace, StackNames(), true);
  EXPECT_EQ(def[1] + def[2] + def[3] + def[4] + def[7], 5);
  EXPECT_EQ(def[5] + def[6] + def[CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000], 0);
}

// Callbacks per id (issue 29): names by cbid, counted by hand from Names(): 1 cudaGetLastError
// and 5 cudaGetDevice are default-dropped getters, 2 a launch, 3 cudaMemcpy, 4 a sync, 6 malloc.
TEST(CallbackTable, DefaultFilterLeavesTheDroppedGettersOff) {
  const auto record = BuildApiFilterTable(ApiFilter{}, Names());
  const auto on = BuildCallbackTable(record, Names(), /*runtime=*/true, /*driver_records_any=*/true,
                                     Config{});
  EXPECT_EQ(on, (std::vector<uint8_t>{0, 0, 1, 1, 1, 0, 1}));
}

TEST(CallbackTable, ARuntimeCallTheUserDropsKeepsItsCallbackForNesting) {
  // -cudaMemcpy: not recorded, but its ENTER/EXIT mark its driver calls as the runtime's own.
  ApiFilter f;
  f.exclude = {"cudaMemcpy"};
  const auto record = BuildApiFilterTable(f, Names());
  EXPECT_EQ(record[3], 0);
  EXPECT_EQ(BuildCallbackTable(record, Names(), true, true, Config{})[3], 1);
  // With no driver call recorded, nesting does not matter: off.
  EXPECT_EQ(BuildCallbackTable(record, Names(), true, false, Config{})[3], 0);
  // Driver ids are on only when recorded.
  EXPECT_EQ(BuildCallbackTable(record, Names(), false, true, Config{})[3], 0);
}

TEST(CallbackTable, StepDetectionTurnsOnTheIdsItWatches) {
  ApiFilter none;
  none.base = ApiFilter::Base::kNone;
  const auto record = BuildApiFilterTable(none, Names());
  Config c;
  c.schedule.active = 1;
  c.step.kind = StepSource::Kind::kApi;
  c.step.pattern = "cudaGetDevice";
  EXPECT_EQ(BuildCallbackTable(record, Names(), true, false, c),
            (std::vector<uint8_t>{0, 0, 0, 0, 0, 1, 0}));
  c.step.kind = StepSource::Kind::kKernel;
  c.step.pattern = "sgd";
  std::vector<std::string> names = Names();
  names.resize(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 + 1);
  names[CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000] = "cudaLaunchKernel_v7000";
  const auto kernel = BuildCallbackTable(std::vector<uint8_t>(names.size(), 0), names, true,
                                         false, c);
  EXPECT_EQ(kernel[CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000], 1);
  EXPECT_EQ(kernel[5], 0);
}

// The callback follows each thread's open stream captures (api_callback.cpp), so their begin and
// end stay on with a filter that records nothing.
TEST(CallbackTable, StreamCaptureBeginAndEndStayOnWhateverTheFilter) {
  ApiFilter none;
  none.base = ApiFilter::Base::kNone;
  const uint32_t begin = CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000;
  const uint32_t end = CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000;
  std::vector<std::string> names(end + 1, "cudaGetDevice_v3020");
  names[0] = "";
  names[begin] = "cudaStreamBeginCapture_v10000";
  names[end] = "cudaStreamEndCapture_v10000";
  const auto record = BuildApiFilterTable(none, names);
  const auto on = BuildCallbackTable(record, names, true, false, Config{});
  EXPECT_EQ(on[begin], 1);
  EXPECT_EQ(on[end], 1);
  EXPECT_EQ(on[begin - 1], 0);
  EXPECT_EQ(CaptureEdge(true, begin), 1);
  EXPECT_EQ(CaptureEdge(true, end), -1);
  EXPECT_EQ(CaptureEdge(false, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2), 1);
  EXPECT_EQ(CaptureEdge(false, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture), -1);
  EXPECT_EQ(CaptureEdge(true, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000), 0);
}

}  // namespace
}  // namespace gprof::collector
