// In-process tests of the CUDA/CUPTI stand-in: what a CUPTI tool sees (callbacks in order with
// names, correlation ids, parameters; records with CUDA 13 layouts that match what the program
// asked for), the CUPTI rules (one subscriber, flush semantics, per-thread buffers, dropped
// counts, process-wide buffer callbacks), the knobs, and the virtual GPU timeline. Links the
// stand-in libraries directly (libcuda.so.1 too, for the direct driver launches). Knob tests set
// the stand-in's knobs through cudasim_set_knobs_for_test before their first CUDA/CUPTI call.
#include <cuda.h>
#include <cupti.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/cudasim/sim_api.h"
#include "tests/cudasim/test_kernels.h"

namespace {

// The record layouts of CUDA 13.0 (REFERENCE.md section 1); a toolkit update that changes them
// must be noticed here, not by misread records.
static_assert(sizeof(CUpti_ActivityKernel10) == 216);
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96);
static_assert(sizeof(CUpti_ActivityMemset4) == 88);
static_assert(sizeof(CUpti_ActivityMemory4) == 128);
static_assert(sizeof(CUpti_ActivityAPI) == 40);
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56);
static_assert(offsetof(CUpti_ActivityKernel10, start) == 16);
static_assert(offsetof(CUpti_ActivityKernel10, correlationId) == 92);
static_assert(offsetof(CUpti_ActivityKernel10, name) == 104);
static_assert(offsetof(CUpti_ActivityMemcpy6, correlationId) == 44);
static_assert(offsetof(CUpti_ActivityAPI, correlationId) == 32);

struct LaunchInternalParams {  // README: functionParams of __cudaLaunchKernel
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

struct Seen {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  CUpti_ApiCallbackSite site;
  std::string name;
  std::string symbol;
  uint32_t correlation;
  unsigned grid_x;  // for launches, from functionParams
  void* resource_stream;
};

std::mutex g_mu;  // guards the vectors below (test-only)
std::vector<Seen> g_seen;
std::vector<std::vector<uint8_t>> g_records;
bool g_refuse_buffers = false;
int g_buffer_budget = -1;  // buffers Requested still hands out; < 0: no limit
bool g_completed_on_test_thread = false;
pthread_t g_test_thread;
std::vector<pthread_t> g_request_threads;     // where Requested ran
std::vector<uint8_t*> g_handed_out;           // buffers Requested returned
std::vector<uint8_t*> g_completed_buffers;    // buffers Completed received
std::vector<std::set<uint32_t>> g_buffer_api_threads;  // per completed buffer: API record threadIds
const char* g_launch_symbol_ptr = nullptr;    // symbolName of the last runtime launch ENTER
// Process-wide CUPTI settings a test cannot undo (when all tests share one process).
bool g_per_thread_attribute_set = false;      // once set, the attribute outranks the knob
bool g_tool_registered_a_clock = false;       // a registered timestamp callback outranks the knob

void Callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Seen s{domain, cbid, CUPTI_API_ENTER, "", "", 0, 0, nullptr};
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    s.resource_stream = static_cast<const CUpti_ResourceData*>(data)->resourceHandle.stream;
  } else {
    auto* cb = static_cast<const CUpti_CallbackData*>(data);
    s.site = cb->callbackSite;
    s.name = cb->functionName != nullptr ? cb->functionName : "";
    s.symbol = cb->symbolName != nullptr ? cb->symbolName : "";
    s.correlation = cb->correlationId;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000) {
      s.grid_x = static_cast<const LaunchInternalParams*>(cb->functionParams)->gridDim.x;
      if (cb->callbackSite == CUPTI_API_ENTER) {
        std::lock_guard<std::mutex> lock(g_mu);
        g_launch_symbol_ptr = cb->symbolName;  // kept past the callback on purpose
      }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) {
      s.grid_x = static_cast<const cuLaunchKernel_params*>(cb->functionParams)->gridDimX;
    }
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_seen.push_back(s);
}

constexpr size_t kToolBufferBytes = 16 * 1024;

void Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_request_threads.push_back(pthread_self());
  *max_records = 0;
  if (g_refuse_buffers || g_buffer_budget == 0) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  if (g_buffer_budget > 0) --g_buffer_budget;
  *size = kToolBufferBytes;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  g_handed_out.push_back(*buffer);
}

void Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (pthread_equal(pthread_self(), g_test_thread)) g_completed_on_test_thread = true;
  g_completed_buffers.push_back(buffer);
  std::set<uint32_t>& api_threads = g_buffer_api_threads.emplace_back();
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    auto* bytes = reinterpret_cast<uint8_t*>(r);
    size_t size = 0;
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: size = sizeof(CUpti_ActivityKernel10); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: size = sizeof(CUpti_ActivityMemcpy6); break;
      case CUPTI_ACTIVITY_KIND_MEMSET: size = sizeof(CUpti_ActivityMemset4); break;
      case CUPTI_ACTIVITY_KIND_MEMORY2: size = sizeof(CUpti_ActivityMemory4); break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        size = sizeof(CUpti_ActivityAPI);
        api_threads.insert(reinterpret_cast<CUpti_ActivityAPI*>(r)->threadId);
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: size = sizeof(CUpti_ActivitySynchronization2); break;
      case CUPTI_ACTIVITY_KIND_DEVICE: size = sizeof(CUpti_ActivityDevice5); break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: size = sizeof(CUpti_ActivityExternalCorrelation); break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD: size = sizeof(CUpti_ActivityOverhead3); break;
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: size = sizeof(CUpti_ActivityGraphTrace2); break;
      default: ADD_FAILURE() << "unexpected kind " << r->kind; continue;
    }
    g_records.emplace_back(bytes, bytes + size);
  }
  free(buffer);
}

template <class T>
std::vector<T> Records(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<T> out;
  for (const auto& r : g_records) {
    if (reinterpret_cast<const CUpti_Activity*>(r.data())->kind == kind) {
      T t;
      std::memcpy(&t, r.data(), sizeof(T));
      out.push_back(t);
    }
  }
  return out;
}

std::vector<Seen> SeenIn(CUpti_CallbackDomain domain) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<Seen> out;
  for (const auto& s : g_seen) {
    if (s.domain == domain) out.push_back(s);
  }
  return out;
}

// Correlation ids of the ENTER callbacks of one runtime cbid, in call order.
std::vector<uint32_t> Correlations(CUpti_CallbackId cbid) {
  std::vector<uint32_t> out;
  for (const auto& s : SeenIn(CUPTI_CB_DOMAIN_RUNTIME_API)) {
    if (s.cbid == cbid && s.site == CUPTI_API_ENTER) out.push_back(s.correlation);
  }
  return out;
}

uint64_t Now() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

size_t CompletedBufferCount() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_completed_buffers.size();
}

// Waits (up to 2 s) until at least n buffers came back without a flush.
bool WaitForCompletedBuffers(size_t n) {
  for (int i = 0; i < 200 && CompletedBufferCount() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return CompletedBufferCount() >= n;
}

void RunOnNewThread(void (*body)()) { std::thread(body).join(); }

class StandIn : public ::testing::Test {
 protected:
  void SetUp() override {
    g_test_thread = pthread_self();
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "api-test";
    ASSERT_EQ(cuptiSubscribe_v2(&subscriber_, Callback, nullptr, &params), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiActivityRegisterCallbacks(Requested, Completed), CUPTI_SUCCESS);
  }
  void TearDown() override {
    cudaDeviceSynchronize();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (int k = 1; k < CUPTI_ACTIVITY_KIND_COUNT; ++k) {
      cuptiActivityDisable(static_cast<CUpti_ActivityKind>(k));
    }
    cuptiUnsubscribe(subscriber_);
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
    std::lock_guard<std::mutex> lock(g_mu);
    g_seen.clear();
    g_records.clear();
    g_refuse_buffers = false;
    g_buffer_budget = -1;
    g_request_threads.clear();
    g_handed_out.clear();
    g_completed_buffers.clear();
    g_buffer_api_threads.clear();
    g_completed_on_test_thread = false;
    g_launch_symbol_ptr = nullptr;
  }
  void Enable(std::initializer_list<CUpti_ActivityKind> kinds) {
    for (auto k : kinds) ASSERT_EQ(cuptiActivityEnable(k), CUPTI_SUCCESS);
  }
  CUpti_SubscriberHandle subscriber_{};
};

// A StandIn test under stand-in knobs (README "Knobs"): set before SetUp makes the first CUPTI
// call, back to the defaults after TearDown.
class WithKnobs : public StandIn {
 protected:
  explicit WithKnobs(const char* env) { cudasim_set_knobs_for_test(env); }
  ~WithKnobs() override { cudasim_set_knobs_for_test(nullptr); }
};

#define CUDASIM_KNOB_FIXTURE(name, env) \
  class name : public WithKnobs {        \
   protected:                            \
    name() : WithKnobs(env) {}           \
  }

CUDASIM_KNOB_FIXTURE(StagedBuffers, "CUDASIM_BUFFER_MODE=staged");
CUDASIM_KNOB_FIXTURE(RealTimestampsOnForcedFlush, "CUDASIM_INCOMPLETE_RECORDS=0");
CUDASIM_KNOB_FIXTURE(NestedDriverOff, "CUDASIM_NESTED_DRIVER=0");
CUDASIM_KNOB_FIXTURE(StableSymbolNames, "CUDASIM_SYMBOL_NAME_REUSE=0");
CUDASIM_KNOB_FIXTURE(ReusedSymbolNames, "CUDASIM_SYMBOL_NAME_REUSE=1");
CUDASIM_KNOB_FIXTURE(OtherToolsClock, "CUDASIM_TIMESTAMP_CALLBACK=tsc");
CUDASIM_KNOB_FIXTURE(GpuClockSkew, "CUDASIM_GPU_SKEW_NS=-20000");
CUDASIM_KNOB_FIXTURE(CuptiPatchLevel, "CUDASIM_CUPTI_VERSION=130002");
CUDASIM_KNOB_FIXTURE(SharedBufferByDefault, "CUDASIM_PER_THREAD_BUFFERS=0");
CUDASIM_KNOB_FIXTURE(SignalInCupti, "CUDASIM_SIGNAL_IN_CUPTI=10:1");  // SIGUSR1, first record

TEST_F(StandIn, LaunchFiresRuntimeCallbackWithKernelNameAndNestedDriverCallback) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
  ASSERT_EQ(LaunchTiny(dim3(3, 2, 1), dim3(32), nullptr), cudaSuccess);

  std::vector<Seen> launch;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (const auto& s : g_seen) {
      bool rt = s.domain == CUPTI_CB_DOMAIN_RUNTIME_API && s.cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000;
      bool drv = s.domain == CUPTI_CB_DOMAIN_DRIVER_API && s.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
      if (rt || drv) launch.push_back(s);
    }
  }
  ASSERT_EQ(launch.size(), 4u);
  EXPECT_EQ(launch[0].domain, CUPTI_CB_DOMAIN_RUNTIME_API);
  EXPECT_EQ(launch[0].site, CUPTI_API_ENTER);
  EXPECT_EQ(launch[0].name, "__cudaLaunchKernel");
  EXPECT_EQ(launch[0].symbol, kTinyKernelName);
  EXPECT_EQ(launch[0].grid_x, 3u);
  EXPECT_EQ(launch[1].domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(launch[1].site, CUPTI_API_ENTER);
  EXPECT_EQ(launch[1].name, "cuLaunchKernel");
  EXPECT_EQ(launch[1].grid_x, 3u);
  EXPECT_NE(launch[1].correlation, launch[0].correlation);
  EXPECT_EQ(launch[2].domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(launch[2].site, CUPTI_API_EXIT);
  EXPECT_EQ(launch[2].correlation, launch[1].correlation);
  EXPECT_EQ(launch[3].domain, CUPTI_CB_DOMAIN_RUNTIME_API);
  EXPECT_EQ(launch[3].site, CUPTI_API_EXIT);
  EXPECT_EQ(launch[3].correlation, launch[0].correlation);
}

TEST_F(StandIn, CallbacksFollowProgramOrder) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 256), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0, 256), cudaSuccess);
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaFree(d), cudaSuccess);

  std::vector<std::string> names;
  uint32_t last = 0;
  for (const auto& s : SeenIn(CUPTI_CB_DOMAIN_RUNTIME_API)) {
    if (s.site != CUPTI_API_ENTER) continue;
    if (s.name == "__cudaGetKernel" || s.name == "cudaGetLastError") continue;
    names.push_back(s.name);
    EXPECT_GT(s.correlation, last) << s.name;  // ids grow with program order
    last = s.correlation;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"cudaMalloc", "cudaMemset", "__cudaLaunchKernel",
                                             "cudaDeviceSynchronize", "cudaFree"}));
}

TEST_F(StandIn, KernelRecordsMatchLaunchesAndCarryTheirCorrelationIds) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(LaunchTiny(dim3(4), dim3(64), stream), cudaSuccess);
  ASSERT_EQ(LaunchOther(dim3(8, 2), dim3(128), stream), cudaSuccess);
  ASSERT_EQ(LaunchTiny(dim3(16), dim3(32), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);

  uint32_t stream_id = 0;
  ASSERT_EQ(cuptiGetStreamId(nullptr, reinterpret_cast<CUstream>(stream), &stream_id), CUPTI_SUCCESS);
  std::vector<uint32_t> launches = Correlations(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
  auto kernels = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 3u);
  ASSERT_EQ(launches.size(), 3u);
  const char* names[] = {kTinyKernelName, kOtherKernelName, kTinyKernelName};
  const int grid_x[] = {4, 8, 16}, grid_y[] = {1, 2, 1}, block_x[] = {64, 128, 32};
  const uint32_t streams[] = {stream_id, stream_id, 7};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(kernels[i].correlationId, launches[i]);
    EXPECT_STREQ(kernels[i].name, names[i]);
    EXPECT_EQ(kernels[i].gridX, grid_x[i]);
    EXPECT_EQ(kernels[i].gridY, grid_y[i]);
    EXPECT_EQ(kernels[i].blockX, block_x[i]);
    EXPECT_EQ(kernels[i].streamId, streams[i]);
    EXPECT_LT(kernels[i].start, kernels[i].end);
  }
  // The RUNTIME activity record of each launch has the same correlation id and cbid 505.
  int matched = 0;
  for (const auto& api : Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)) {
    for (uint32_t c : launches) {
      if (api.correlationId == c) {
        EXPECT_EQ(api.cbid, static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000));
        ++matched;
      }
    }
  }
  EXPECT_EQ(matched, 3);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(StandIn, MemcpyRecordsDescribeEachCopyAndTakeBytesOverBandwidth) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_MEMCPY});
  const size_t n = 1 << 20;
  std::vector<uint8_t> pageable(n, 7), back(n, 0);
  uint8_t* pinned = nullptr;
  uint8_t *d1 = nullptr, *d2 = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&pinned), n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d1), n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d2), n), cudaSuccess);
  std::memset(pinned, 9, n);
  ASSERT_EQ(cudaMemcpy(d1, pageable.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(d2, pinned, n / 2, cudaMemcpyHostToDevice, nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d2, d1, n, cudaMemcpyDeviceToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned, d2, n, cudaMemcpyDeviceToHost, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), d1, n, cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);

  EXPECT_EQ(back, pageable);  // device memory is host memory: the bytes really moved
  EXPECT_EQ(pinned[0], 7);

  struct Want { uint8_t copy, src, dst; size_t bytes; bool async; double gbps; };
  const Want want[] = {
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, n, false, 12},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, n / 2, true, 25},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, n, false, 2000},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, n, true, 25},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, n, false, 12},
  };
  auto copies = Records<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  ASSERT_EQ(copies.size(), 5u);
  std::vector<uint32_t> corr = Correlations(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
  std::vector<uint32_t> corr_async = Correlations(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  ASSERT_EQ(corr.size(), 3u);
  ASSERT_EQ(corr_async.size(), 2u);
  const uint32_t want_corr[] = {corr[0], corr_async[0], corr[1], corr_async[1], corr[2]};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(copies[i].copyKind, want[i].copy);
    EXPECT_EQ(copies[i].srcKind, want[i].src);
    EXPECT_EQ(copies[i].dstKind, want[i].dst);
    EXPECT_EQ(copies[i].bytes, want[i].bytes);
    EXPECT_EQ((copies[i].flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0, want[i].async);
    EXPECT_EQ(copies[i].end - copies[i].start,
              static_cast<uint64_t>(std::ceil(double(want[i].bytes) / want[i].gbps)));
    EXPECT_EQ(copies[i].correlationId, want_corr[i]);
    EXPECT_EQ(copies[i].runtimeCorrelationId, want_corr[i]);
  }
  cudaFree(d1);
  cudaFree(d2);
  cudaFreeHost(pinned);
}

TEST_F(StandIn, MemsetAndAllocationRecords) {
  Enable({CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2});
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4096), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0x5a, 1000), cudaSuccess);
  EXPECT_EQ(static_cast<uint8_t*>(d)[999], 0x5a);
  ASSERT_EQ(cudaFree(d), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);

  auto sets = Records<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].value, 0x5au);
  EXPECT_EQ(sets[0].bytes, 1000u);
  EXPECT_EQ(sets[0].memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  auto mem = Records<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  ASSERT_EQ(mem.size(), 2u);
  EXPECT_EQ(mem[0].memoryOperationType, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
  EXPECT_EQ(mem[1].memoryOperationType, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
  for (const auto& m : mem) {
    EXPECT_EQ(m.address, reinterpret_cast<uint64_t>(d));
    EXPECT_EQ(m.bytes, 4096u);
    EXPECT_EQ(m.memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  }
}

TEST_F(StandIn, KernelsStartAfterLaunchLatencyAndRunInOrderPerStream) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
  for (int i = 0; i < 5; ++i) ASSERT_EQ(LaunchTiny(dim3(1024), dim3(256), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto kernels = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 5u);
  std::vector<CUpti_ActivityAPI> launches;
  for (const auto& a : Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)) {
    if (a.cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000) launches.push_back(a);
  }
  ASSERT_EQ(launches.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(kernels[i].correlationId, launches[i].correlationId);
    EXPECT_GE(kernels[i].start, launches[i].start + 3000);  // CUDASIM_LAUNCH_LATENCY_NS default
    EXPECT_EQ(kernels[i].end - kernels[i].start, 1500u + 1024u * 256u * 50u / 1000u);
    if (i > 0) {
      EXPECT_GE(kernels[i].start, kernels[i - 1].end);
    }
  }
}

TEST_F(StandIn, NonBlockingStreamsOverlapButTheLegacyStreamWaitsForBlockingOnes) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  cudaStream_t a, b, blocking;
  ASSERT_EQ(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&blocking), cudaSuccess);
  const dim3 big(1 << 14), block(1024);  // 16M threads: ~0.84 ms each
  ASSERT_EQ(LaunchTiny(big, block, a), cudaSuccess);
  ASSERT_EQ(LaunchTiny(big, block, b), cudaSuccess);
  ASSERT_EQ(LaunchTiny(big, block, blocking), cudaSuccess);
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 4u);
  EXPECT_LT(k[1].start, k[0].end);  // a and b overlap
  EXPECT_GE(k[3].start, k[2].end);  // the default stream waits for the blocking stream
  for (auto s : {a, b, blocking}) cudaStreamDestroy(s);
}

TEST_F(StandIn, SynchronizeBlocksTheHostUntilTheWorkIsDone) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION});
  // ~27 ms: longer than a loaded machine's preemption between the launch's return and Now()
  // (a 3.4 ms kernel failed once at load 8 on 2 cores).
  ASSERT_EQ(LaunchTiny(dim3(1 << 19), dim3(1024), nullptr), cudaSuccess);
  uint64_t after_launch = Now();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  uint64_t after_sync = Now();
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_LT(after_launch, k[0].end);  // the launch returned while the kernel still ran
  EXPECT_GE(after_sync, k[0].end);    // the synchronize returned only after it ended
  auto syncs = Records<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
  EXPECT_GE(syncs[0].end, k[0].end);
}

TEST_F(StandIn, EventsMeasureTheVirtualGpuTime) {
  cudaEvent_t start, stop;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
  ASSERT_EQ(LaunchTiny(dim3(1 << 14), dim3(1024), nullptr), cudaSuccess);  // 1500 + 838860 ns
  ASSERT_EQ(cudaEventRecord(stop, nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  float ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  EXPECT_GE(ms, 0.84f);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

TEST_F(StandIn, OnlyOneSubscriberAndV2NamesTheHolder) {
  CUpti_SubscriberHandle second{};
  EXPECT_EQ(cuptiSubscribe(&second, Callback, nullptr), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "intruder";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder);
  EXPECT_EQ(cuptiSubscribe_v2(&second, Callback, nullptr, &params),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_STREQ(holder, "CUPTI for api-test");
  // After the holder leaves, a new subscriber gets in.
  ASSERT_EQ(cuptiUnsubscribe(subscriber_), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiSubscribe_v2(&subscriber_, Callback, nullptr, &params), CUPTI_SUCCESS);
}

// ---- Flush semantics (cupti_activity.h, cuptiActivityFlushAll) --------------------------------

constexpr unsigned kLongGrid = 1u << 21;  // x 1024 threads: ~107 ms of virtual GPU time

TEST_F(StandIn, ForcedFlushReturnsRunningWorkAsIncompleteRecordsOnlyOnce) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
  ASSERT_EQ(LaunchTiny(dim3(kLongGrid), dim3(1024), nullptr), cudaSuccess);  // running at the flush
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);  // queued behind it: not started
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_NE(k[0].start, 0u);  // started: its start is known
  EXPECT_EQ(k[0].end, 0u);
  EXPECT_EQ(k[0].completed, CUPTI_TIMESTAMP_UNKNOWN);
  EXPECT_EQ(k[1].start, 0u);  // not started: neither is known
  EXPECT_EQ(k[1].end, 0u);
  EXPECT_STREQ(k[1].name, kTinyKernelName);  // the rest of the record is there
  EXPECT_FALSE(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).empty());
  // The incomplete records went back with their buffer: never delivered again, not even complete.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  EXPECT_EQ(Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size(), 2u);
}

TEST_F(StandIn, NormalFlushHoldsBackBuffersWithRunningWorkUntilItEnds) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);  // a complete record in the same buffer
  ASSERT_EQ(LaunchTiny(dim3(kLongGrid), dim3(1024), nullptr), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  // The whole buffer stays with CUPTI, its complete API records too.
  EXPECT_EQ(CompletedBufferCount(), 0u);
  EXPECT_TRUE(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).empty());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);  // now complete: a normal flush returns it
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_GT(k[0].end, k[0].start);
  EXPECT_FALSE(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).empty());
}

TEST_F(RealTimestampsOnForcedFlush, ForcedFlushReturnsRunningWorkWithItsFinalTimestamps) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  ASSERT_EQ(LaunchTiny(dim3(kLongGrid), dim3(1024), nullptr), cudaSuccess);
  uint64_t flushed_at = Now();
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_GT(k[0].end, flushed_at);  // an end time in the future
}

TEST_F(StagedBuffers, NormalFlushKeepsRunningWorkForcedFlushReturnsIt) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
  ASSERT_EQ(LaunchTiny(dim3(1 << 20), dim3(1024), nullptr), cudaSuccess);  // ~54 ms of GPU time
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  EXPECT_TRUE(Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty());
  EXPECT_FALSE(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).empty());  // per record
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].end, 0u);  // CUDASIM_INCOMPLETE_RECORDS applies to this mode too
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(StagedBuffers, BothBufferCallbacksRunOnTheCuptiThread) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  EXPECT_FALSE(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).empty());
  std::lock_guard<std::mutex> lock(g_mu);
  EXPECT_FALSE(g_completed_on_test_thread);
  ASSERT_FALSE(g_request_threads.empty());
  for (pthread_t t : g_request_threads) EXPECT_FALSE(pthread_equal(t, g_test_thread));
}

// ---- When buffers come back (cuptiActivityFlushPeriod) ------------------------------------------

TEST_F(StandIn, BuffersComeBackOnlyWhenFullOrFlushed) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  int n = 0;
  for (int i = 0; i < 5; ++i) ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // several worker wake-ups
  EXPECT_EQ(CompletedBufferCount(), 0u) << "a partly filled buffer came back without a flush";
  // A flush period makes the worker look more often, still only for full buffers.
  ASSERT_EQ(cuptiActivityFlushPeriod(1), CUPTI_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(CompletedBufferCount(), 0u) << "the periodic flush returned a partly filled buffer";
  // Filling it (16 KiB = 409 API records) returns it without any flush call.
  const size_t per_buffer = kToolBufferBytes / sizeof(CUpti_ActivityAPI);
  for (size_t i = 0; i < per_buffer; ++i) ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  EXPECT_TRUE(WaitForCompletedBuffers(1));
  EXPECT_EQ(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).size(), per_buffer);
  ASSERT_EQ(cuptiActivityFlushPeriod(0), CUPTI_SUCCESS);
}

// ---- Per-thread buffers (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, default 1) -------------

void OneRuntimeCall() {
  int n = 0;
  EXPECT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
}

void ThreeRuntimeCalls() {
  for (int i = 0; i < 3; ++i) OneRuntimeCall();
}

TEST_F(StandIn, EachCudaThreadGetsItsOwnBufferRequestedOnThatThread) {
  size_t value_size = sizeof(uint8_t);
  uint8_t per_thread = 0;
  ASSERT_EQ(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &value_size,
                                      &per_thread), CUPTI_SUCCESS);
  EXPECT_EQ(per_thread, 1u);
  ASSERT_EQ(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  OneRuntimeCall();
  std::vector<pthread_t> app_threads{pthread_self()};
  for (int i = 0; i < 3; ++i) {
    std::thread t(ThreeRuntimeCalls);
    app_threads.push_back(t.native_handle());
    t.join();
  }
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT), CUPTI_SUCCESS);
  std::lock_guard<std::mutex> lock(g_mu);
  // One request per thread, made by that thread (inside its CUDA call), in program order.
  ASSERT_EQ(g_request_threads.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(pthread_equal(g_request_threads[i], app_threads[i])) << i;
  // One buffer per thread, each holding only that thread's records; none returned on its thread.
  ASSERT_EQ(g_completed_buffers.size(), 4u);
  std::set<uint32_t> all;
  for (const auto& ids : g_buffer_api_threads) {
    EXPECT_EQ(ids.size(), 1u);
    all.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(all.size(), 4u);
  EXPECT_FALSE(g_completed_on_test_thread);
}

TEST_F(StandIn, MoreCudaThreadsThanToolBuffersDropRecords) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_buffer_budget = 2;  // the tool's pool
  }
  for (int i = 0; i < 4; ++i) RunOnNewThread(ThreeRuntimeCalls);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  size_t dropped = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 6u);  // threads 3 and 4 found no buffer for any of their 3 records
  EXPECT_EQ(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).size(), 6u);
  std::lock_guard<std::mutex> lock(g_mu);
  EXPECT_EQ(g_handed_out.size(), 2u);
  EXPECT_EQ(g_request_threads.size(), 2u + 6u);  // refused requests are repeated per record
}

TEST_F(StandIn, WithThePerThreadAttributeOffAllThreadsShareOneBuffer) {
  uint8_t off = 0;
  size_t value_size = sizeof(off);
  g_per_thread_attribute_set = true;
  ASSERT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &value_size,
                                      &off), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityRegisterCallbacks(Requested, Completed), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_buffer_budget = 1;
  }
  for (int i = 0; i < 4; ++i) RunOnNewThread(ThreeRuntimeCalls);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  size_t dropped = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).size(), 12u);
  uint8_t on = 1;
  ASSERT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &value_size,
                                      &on), CUPTI_SUCCESS);
}

TEST_F(SharedBufferByDefault, TheKnobMakesTheSharedBufferTheDefault) {
  if (g_per_thread_attribute_set) GTEST_SKIP() << "an earlier test in this process set the attribute";
  size_t value_size = sizeof(uint8_t);
  uint8_t per_thread = 1;
  ASSERT_EQ(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &value_size,
                                      &per_thread), CUPTI_SUCCESS);
  EXPECT_EQ(per_thread, 0u);
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  for (int i = 0; i < 3; ++i) RunOnNewThread(OneRuntimeCall);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  std::lock_guard<std::mutex> lock(g_mu);
  EXPECT_EQ(g_completed_buffers.size(), 1u);
}

// ---- CUDASIM_SIGNAL_IN_CUPTI -------------------------------------------------------------------

std::atomic<bool> g_signal_handler_ran{false};
std::atomic<bool> g_other_thread_answered{false};
std::atomic<bool> g_answered_during_handler{false};

void HandlerThatWaits(int) {
  g_signal_handler_ran.store(true);
  const timespec wait{0, 200'000'000};  // time for the other thread's CUPTI call, were it free
  nanosleep(&wait, nullptr);
  g_answered_during_handler.store(g_other_thread_answered.load());
}

// The signal is raised on the thread that writes the first record (the launch's kernel record),
// while it holds the activity lock: another thread's cuptiActivityGetNumDroppedRecords (which
// needs that lock) answers only once the handler has returned.
TEST_F(SignalInCupti, TheSignalsHandlerRunsWhileTheThreadHoldsTheActivityLock) {
  struct sigaction sa {}, old {};
  sa.sa_handler = &HandlerThatWaits;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  std::thread other([] {
    while (!g_signal_handler_ran.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    size_t dropped = 0;
    cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
    g_other_thread_answered.store(true);
  });
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  const cudaError_t launched = LaunchTiny(dim3(1), dim3(32), nullptr);
  const bool ran = g_signal_handler_ran.load();
  if (!ran) g_signal_handler_ran.store(true);  // lets the other thread end
  other.join();
  sigaction(SIGUSR1, &old, nullptr);
  if (!ran) GTEST_SKIP() << "an earlier test in this process made the first record";
  EXPECT_EQ(launched, cudaSuccess);
  EXPECT_FALSE(g_answered_during_handler.load());
  EXPECT_TRUE(g_other_thread_answered.load());
}

// ---- cuptiActivityRegisterCallbacks is process-wide ---------------------------------------------

std::atomic<int> g_second_tool_completed{0};
std::atomic<uint8_t*> g_second_tool_buffer{nullptr};

void SecondToolRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = kToolBufferBytes;
  *max_records = 0;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
}

void SecondToolCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  ++g_second_tool_completed;
  if (valid > 0) g_second_tool_buffer = buffer;
  free(buffer);
}

TEST_F(StandIn, ASecondRegistrationReplacesTheFirstAndReceivesItsBuffers) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  OneRuntimeCall();  // this thread now holds a buffer from the first registration
  ASSERT_EQ(cuptiActivityRegisterCallbacks(SecondToolRequested, SecondToolCompleted), CUPTI_SUCCESS);
  OneRuntimeCall();
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  uint8_t* first_tools_buffer = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    ASSERT_EQ(g_handed_out.size(), 1u);
    first_tools_buffer = g_handed_out[0];
    EXPECT_TRUE(g_completed_buffers.empty()) << "the first tool still got a buffer back";
  }
  EXPECT_EQ(g_second_tool_completed.load(), 1);
  EXPECT_EQ(g_second_tool_buffer.load(), first_tools_buffer);  // its buffer went to the second tool
  ASSERT_EQ(cuptiActivityRegisterCallbacks(Requested, Completed), CUPTI_SUCCESS);
}

TEST_F(StandIn, BuffersAreRequestedOnTheApplicationThreadAndCompletedOnTheCuptiThread) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  EXPECT_FALSE(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME).empty());
  std::lock_guard<std::mutex> lock(g_mu);
  EXPECT_FALSE(g_completed_on_test_thread);
  ASSERT_EQ(g_request_threads.size(), 1u);
  EXPECT_TRUE(pthread_equal(g_request_threads[0], g_test_thread));
}

TEST_F(StandIn, RefusedBuffersAreCountedAsDroppedAndTheCountResets) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_refuse_buffers = true;
  }
  for (int i = 0; i < 5; ++i) ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  size_t dropped = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 5u);
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0u);
  EXPECT_TRUE(Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty());
}

TEST_F(StandIn, ExternalCorrelationTagsTheNextRuntimeCall) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION});
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN, 42), CUPTI_SUCCESS);
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 16), cudaSuccess);
  uint64_t last = 0;
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN, &last), CUPTI_SUCCESS);
  EXPECT_EQ(last, 42u);
  ASSERT_EQ(cudaFree(d), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto ext = Records<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  ASSERT_EQ(ext.size(), 1u);
  EXPECT_EQ(ext[0].externalId, 42u);
  EXPECT_EQ(ext[0].correlationId, Correlations(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020).at(0));
}

TEST_F(StandIn, StreamResourceCallbacks) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  std::vector<Seen> res;
  for (const Seen& r : SeenIn(CUPTI_CB_DOMAIN_RESOURCE)) {
    // CONTEXT_CREATED / MODULE_LOADED also arrive when this is the process's first CUDA call.
    if (r.cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED ||
        r.cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING) {
      res.push_back(r);
    }
  }
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res[0].cbid, static_cast<CUpti_CallbackId>(CUPTI_CBID_RESOURCE_STREAM_CREATED));
  EXPECT_EQ(res[1].cbid, static_cast<CUpti_CallbackId>(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING));
  EXPECT_EQ(res[0].resource_stream, static_cast<void*>(s));
}

TEST_F(StandIn, FirstRuntimeCallCreatesTheContextAndReportsModules) {
  if (cudasim_current_context() != nullptr) GTEST_SKIP() << "an earlier test in this process made the context";
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  std::vector<Seen> res = SeenIn(CUPTI_CB_DOMAIN_RESOURCE);
  ASSERT_GE(res.size(), 2u);
  EXPECT_EQ(res[0].cbid, static_cast<CUpti_CallbackId>(CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
  EXPECT_EQ(res[1].cbid, static_cast<CUpti_CallbackId>(CUPTI_CBID_RESOURCE_MODULE_LOADED));
  EXPECT_NE(cudasim_current_context(), nullptr);
}

// Device records are emitted at driver initialization only: enabling DEVICE once CUDA runs gives
// none; cuptiActivityEnableAndDump dumps the existing device (cupti_activity.h on
// cuptiActivityEnableAndDump: the late-attach case).
TEST_F(StandIn, DeviceRecordDescribesTheDevice) {
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);  // the context exists from here on
  Enable({CUPTI_ACTIVITY_KIND_DEVICE});
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  EXPECT_TRUE(Records<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE).empty());
  ASSERT_EQ(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto dev = Records<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  ASSERT_EQ(dev.size(), 1u);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_STREQ(dev[0].name, prop.name);
  EXPECT_EQ(dev[0].numMultiprocessors, static_cast<uint32_t>(prop.multiProcessorCount));
  EXPECT_EQ(dev[0].computeCapabilityMajor, static_cast<uint32_t>(prop.major));
  EXPECT_EQ(dev[0].globalMemorySize, prop.totalGlobalMem);
}

TEST_F(StandIn, FlushInAForkedChildReturnsInsteadOfWaitingForAMissingWorker) {
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(10);  // a hang fails the test instead of blocking it
    _exit(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_ERROR_NOT_INITIALIZED ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
}

// ---- Driver API: nested calls and direct launches ------------------------------------------------

TEST_F(NestedDriverOff, RuntimeCallsFireNoDriverCallbacksOrRecords) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0, 64), cudaSuccess);
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaFree(d), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  EXPECT_TRUE(SeenIn(CUPTI_CB_DOMAIN_DRIVER_API).empty());
  EXPECT_TRUE(Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER).empty());
  // No id is spent on a driver call: the runtime calls' ids follow each other.
  uint32_t last = 0;
  for (const auto& s : SeenIn(CUPTI_CB_DOMAIN_RUNTIME_API)) {
    if (s.site != CUPTI_API_ENTER) continue;
    if (last != 0) {
      EXPECT_EQ(s.correlation, last + 1) << s.name;
    }
    last = s.correlation;
  }
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].correlationId, Correlations(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000).at(0));
}

TEST_F(StandIn, DirectDriverLaunchesAreDriverCallsWithTheirOwnKernelRecords) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL});
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(cudaGetFuncBySymbol(&f, TinyKernelHostFunction()), cudaSuccess);
  void* out = nullptr;
  void* args[] = {&out};
  ASSERT_EQ(cuLaunchKernel(f, 5, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr), CUDA_SUCCESS);
  CUlaunchConfig config{};
  config.gridDimX = 6;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 32;
  config.blockDimY = config.blockDimZ = 1;
  ASSERT_EQ(cuLaunchKernelEx(&config, f, args, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);

  for (const auto& s : SeenIn(CUPTI_CB_DOMAIN_RUNTIME_API)) {
    EXPECT_NE(s.cbid, static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000));
  }
  std::vector<Seen> launches;
  for (const auto& s : SeenIn(CUPTI_CB_DOMAIN_DRIVER_API)) {
    if (s.site == CUPTI_API_ENTER && (s.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
                                      s.cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx)) {
      launches.push_back(s);
    }
  }
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[0].name, "cuLaunchKernel");
  EXPECT_EQ(launches[0].symbol, kTinyKernelName);
  EXPECT_EQ(launches[0].grid_x, 5u);
  EXPECT_EQ(launches[1].name, "cuLaunchKernelEx");
  EXPECT_EQ(launches[1].symbol, kTinyKernelName);
  EXPECT_EQ(launches[2].symbol, "");  // no such kernel
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].correlationId, launches[0].correlation);
  EXPECT_EQ(k[0].gridX, 5);
  EXPECT_EQ(k[1].correlationId, launches[1].correlation);
  EXPECT_EQ(k[1].gridX, 6);
  std::vector<uint32_t> driver_cbids;
  for (const auto& a : Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_DRIVER)) {
    if (a.correlationId == launches[0].correlation || a.correlationId == launches[1].correlation) {
      driver_cbids.push_back(a.cbid);
    }
  }
  EXPECT_EQ(driver_cbids, (std::vector<uint32_t>{CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                                 CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx}));
}

// ---- symbolName lifetime (cupti_callbacks.h: cbdata "is valid only within the invocation") -----

TEST_F(ReusedSymbolNames, SymbolNameStorageIsReusedAfterTheCallback) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);
  const char* kept = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    kept = g_launch_symbol_ptr;
    ASSERT_EQ(g_seen.empty(), false);
  }
  ASSERT_NE(kept, nullptr);
  for (const auto& s : SeenIn(CUPTI_CB_DOMAIN_RUNTIME_API)) {
    if (s.cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000) {
      EXPECT_EQ(s.symbol, kTinyKernelName);
    }
  }
  EXPECT_STRNE(kept, kTinyKernelName);  // a pointer kept past the callback names another symbol
}

TEST_F(StableSymbolNames, WithTheKnobOffSymbolNameStaysValid) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);
  ASSERT_EQ(LaunchOther(dim3(1), dim3(1), nullptr), cudaSuccess);
  std::lock_guard<std::mutex> lock(g_mu);
  ASSERT_NE(g_launch_symbol_ptr, nullptr);
  EXPECT_STREQ(g_launch_symbol_ptr, kOtherKernelName);
}

// ---- Versions and clocks ------------------------------------------------------------------------

TEST_F(CuptiPatchLevel, GetVersionReportsAnotherPatchLevelOfTheSameRelease) {
  uint32_t version = 0;
  ASSERT_EQ(cuptiGetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, 130002u);  // cupti_version.h: xxyyzz, zz = CUPTI update/patch level
  EXPECT_EQ(version / 100, static_cast<uint32_t>(CUPTI_API_VERSION) / 100);
  EXPECT_NE(version, static_cast<uint32_t>(CUPTI_API_VERSION));
}

TEST_F(OtherToolsClock, RecordsAndCuptiGetTimestampUseTheOtherToolsClock) {
  if (g_tool_registered_a_clock) GTEST_SKIP() << "an earlier test in this process registered a clock";
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
  const uint64_t realtime_before = RealtimeNs();
  const uint64_t before = Now();
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const uint64_t after = Now();
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  EXPECT_LT(after, realtime_before / 2) << "cuptiGetTimestamp still reports CLOCK_REALTIME";
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_GE(k[0].start, before);
  EXPECT_LE(k[0].end, after);
  for (const auto& a : Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)) {
    EXPECT_GE(a.start, before);
    EXPECT_LE(a.end, after);
  }
}

TEST_F(GpuClockSkew, KernelsCanStartBeforeTheirLaunchCallDid) {
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME});
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(1), nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto k = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(k.size(), 1u);
  bool found = false;
  for (const auto& a : Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)) {
    if (a.correlationId != k[0].correlationId) continue;
    found = true;
    EXPECT_LT(k[0].start, a.start);  // 20 us earlier than the timeline: before its launch call
    EXPECT_EQ(k[0].end - k[0].start, 1500u + 50u / 1000u);  // durations are unchanged
  }
  EXPECT_TRUE(found);
}

// Last of the clock tests: a registration lasts for the process (when all tests share one).
uint64_t CUPTIAPI ToolClockAnHourAhead() { return RealtimeNs() + 3600ull * 1000000000ull; }
uint64_t CUPTIAPI ToolClockRealtime() { return RealtimeNs(); }

TEST_F(StandIn, ARegisteredTimestampCallbackStampsTheRecords) {
  EXPECT_EQ(cuptiActivityRegisterTimestampCallback(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_EQ(cuptiActivityRegisterTimestampCallback(ToolClockAnHourAhead), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_RUNTIME});
  const uint64_t realtime_before = RealtimeNs();
  OneRuntimeCall();
  ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  auto api = Records<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  ASSERT_FALSE(api.empty());
  EXPECT_GE(api[0].start, realtime_before + 3599ull * 1000000000ull);
  EXPECT_GE(Now(), realtime_before + 3599ull * 1000000000ull);
  // There is no way to unregister; put back a callback that matches CUPTI's default clock.
  ASSERT_EQ(cuptiActivityRegisterTimestampCallback(ToolClockRealtime), CUPTI_SUCCESS);
  g_tool_registered_a_clock = true;
}

TEST(StandInCupti, NamesVersionAndResultStrings) {
  const char* name = nullptr;
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cudaMalloc_v3020");
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cuLaunchKernel");
  uint32_t version = 0;
  ASSERT_EQ(cuptiGetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
  const char* str = nullptr;
  ASSERT_EQ(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &str), CUPTI_SUCCESS);
  EXPECT_STREQ(str, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
}

TEST(StandInCupti, GetNextRecordWalksRecordsOfDifferentSizes) {
  alignas(8) uint8_t buffer[512] = {};
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  CUpti_ActivityKernel10 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  std::memcpy(buffer, &api, sizeof(api));
  std::memcpy(buffer + 40, &kernel, sizeof(kernel));
  std::memcpy(buffer + 256, &copy, sizeof(copy));
  size_t valid = 256 + sizeof(copy);
  CUpti_Activity* r = nullptr;
  std::vector<size_t> offsets;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    offsets.push_back(static_cast<size_t>(reinterpret_cast<uint8_t*>(r) - buffer));
  }
  EXPECT_EQ(offsets, (std::vector<size_t>{0, 40, 256}));
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, valid, &r), CUPTI_ERROR_MAX_LIMIT_REACHED);
}

TEST(StandInDeathTest, UnimplementedFunctionsFailLoudlyNamingThemselves) {
  EXPECT_DEATH({ cudaGraph_t g; cudaGraphCreate(&g, 0); }, "cudaGraphCreate is not implemented");
  EXPECT_DEATH(cuptiActivityEnableLatencyTimestamps(1), "cuptiActivityEnableLatencyTimestamps is not implemented");
}

TEST(StandInRuntime, UnknownLaunchAndBadConfigurationAreErrors) {
  EXPECT_EQ(LaunchTiny(dim3(1), dim3(2048), nullptr), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // LaunchTiny already consumed it
  int not_a_kernel = 0;
  EXPECT_EQ(cudaLaunchKernel(&not_a_kernel, dim3(1), dim3(1), nullptr, 0, nullptr),
            cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  void* args[] = {nullptr};
  EXPECT_EQ(cudaLaunchKernel(TinyKernelHostFunction(), dim3(1), dim3(1), args, 0, nullptr), cudaSuccess);
}

}  // namespace

// Stream capture and graphs (README "Stream capture and graphs"): 2 kernels, a memset and a copy
// captured on one stream, the graph launched 3 times.
class CapturedGraph : public StandIn {
 protected:
  void CaptureAndReplay(int replays) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&a_, 256), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&b_, 256), cudaSuccess);
    ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long capture_id = 0;
    cudaGraph_t seen_graph = nullptr;
    ASSERT_EQ(cudaStreamGetCaptureInfo(stream_, &status, &capture_id, &seen_graph), cudaSuccess);
    EXPECT_EQ(status, cudaStreamCaptureStatusActive);
    EXPECT_NE(capture_id, 0u);
    EXPECT_NE(seen_graph, nullptr);
    ASSERT_EQ(LaunchTiny(dim3(4), dim3(64), stream_), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(a_, 1, 256, stream_), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(b_, a_, 256, cudaMemcpyDeviceToDevice, stream_), cudaSuccess);
    ASSERT_EQ(LaunchOther(dim3(8), dim3(32), stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamEndCapture(stream_, &graph_), cudaSuccess);
    ASSERT_NE(graph_, nullptr);
    EXPECT_EQ(graph_, seen_graph);
    ASSERT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
    EXPECT_EQ(status, cudaStreamCaptureStatusNone);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
    captured_kernels_ = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).size();
    captured_copies_ = Records<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY).size() +
                       Records<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET).size();
    ASSERT_EQ(cudaGraphInstantiate(&exec_, graph_, 0), cudaSuccess);
    for (int i = 0; i < replays; ++i) ASSERT_EQ(cudaGraphLaunch(exec_, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    ASSERT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  }
  void TearDown() override {
    if (exec_ != nullptr) EXPECT_EQ(cudaGraphExecDestroy(exec_), cudaSuccess);
    if (graph_ != nullptr) EXPECT_EQ(cudaGraphDestroy(graph_), cudaSuccess);
    cudaFree(a_);
    cudaFree(b_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    StandIn::TearDown();
  }
  cudaStream_t stream_ = nullptr;
  void* a_ = nullptr;
  void* b_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  size_t captured_kernels_ = 0, captured_copies_ = 0;
};

TEST_F(CapturedGraph, CapturedWorkMakesNoRecordAndEachReplayRunsEveryNodeUnderItsGraphLaunch) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
          CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME});
  CaptureAndReplay(3);
  // The captured calls fired their callbacks, and made no GPU record.
  EXPECT_EQ(Correlations(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000).size(), 2u);
  EXPECT_EQ(Correlations(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020).size(), 1u);
  EXPECT_EQ(Correlations(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020).size(), 1u);
  EXPECT_EQ(captured_kernels_, 0u);
  EXPECT_EQ(captured_copies_, 0u);

  const std::vector<uint32_t> launches = Correlations(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  ASSERT_EQ(launches.size(), 3u);
  auto kernels = Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  auto sets = Records<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  auto copies = Records<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  ASSERT_EQ(kernels.size(), 6u);  // 2 kernel nodes x 3 replays
  ASSERT_EQ(sets.size(), 3u);
  ASSERT_EQ(copies.size(), 3u);
  uint32_t stream_id = 0;
  ASSERT_EQ(cuptiGetStreamId(nullptr, reinterpret_cast<CUstream>(stream_), &stream_id), CUPTI_SUCCESS);
  const uint32_t graph_id = kernels[0].graphId;
  EXPECT_NE(graph_id, 0u);
  std::set<uint64_t> node_ids;
  for (int r = 0; r < 3; ++r) {
    SCOPED_TRACE(r);
    const CUpti_ActivityKernel10& tiny = kernels[2 * r];
    const CUpti_ActivityKernel10& other = kernels[2 * r + 1];
    EXPECT_STREQ(tiny.name, kTinyKernelName);
    EXPECT_STREQ(other.name, kOtherKernelName);
    EXPECT_EQ(tiny.gridX, 4);
    EXPECT_EQ(other.gridX, 8);
    for (uint32_t corr : {tiny.correlationId, other.correlationId, sets[r].correlationId,
                          copies[r].correlationId, copies[r].runtimeCorrelationId}) {
      EXPECT_EQ(corr, launches[r]);
    }
    for (uint32_t g : {tiny.graphId, other.graphId, sets[r].graphId, copies[r].graphId}) {
      EXPECT_EQ(g, graph_id);
    }
    // Each node keeps its id across replays; the four nodes have four ids.
    EXPECT_EQ(tiny.graphNodeId, kernels[0].graphNodeId);
    EXPECT_EQ(other.graphNodeId, kernels[1].graphNodeId);
    EXPECT_EQ(sets[r].graphNodeId, sets[0].graphNodeId);
    EXPECT_EQ(copies[r].graphNodeId, copies[0].graphNodeId);
    EXPECT_EQ(tiny.streamId, stream_id);
    EXPECT_EQ(copies[r].bytes, 256u);
    EXPECT_EQ(copies[r].copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
    // Capture order on the launch stream: tiny, memset, copy, other.
    EXPECT_LE(tiny.end, sets[r].start);
    EXPECT_LE(sets[r].end, copies[r].start);
    EXPECT_LE(copies[r].end, other.start);
  }
  for (uint64_t id : {kernels[0].graphNodeId, kernels[1].graphNodeId, sets[0].graphNodeId,
                      copies[0].graphNodeId}) {
    EXPECT_NE(id, 0u);
    node_ids.insert(id);
  }
  EXPECT_EQ(node_ids.size(), 4u);
  // Each replay ran the bytes too: the copy moved the memset's 0x01 bytes.
  EXPECT_EQ(static_cast<const unsigned char*>(b_)[255], 1);
}

TEST_F(CapturedGraph, WithGraphTraceOnAGraphLaunchMakesOneGraphRecordAndNoNodeRecords) {
  ASSERT_EQ(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
  Enable({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
          CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_GRAPH_TRACE});
  CaptureAndReplay(2);
  EXPECT_TRUE(Records<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty());
  EXPECT_TRUE(Records<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY).empty());
  EXPECT_TRUE(Records<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET).empty());
  auto graphs = Records<CUpti_ActivityGraphTrace2>(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  ASSERT_EQ(graphs.size(), 2u);
  // Correlated with the driver call that launched the graph (cuGraphLaunch, nested).
  std::vector<uint32_t> driver_launches;
  for (const auto& s : SeenIn(CUPTI_CB_DOMAIN_DRIVER_API)) {
    if (s.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch && s.site == CUPTI_API_ENTER) {
      driver_launches.push_back(s.correlation);
    }
  }
  ASSERT_EQ(driver_launches.size(), 2u);
  EXPECT_EQ(graphs[0].correlationId, driver_launches[0]);
  EXPECT_EQ(graphs[1].correlationId, driver_launches[1]);
  EXPECT_EQ(graphs[0].graphId, graphs[1].graphId);
  EXPECT_NE(graphs[0].graphId, 0u);
  EXPECT_LT(graphs[0].start, graphs[0].end);
  EXPECT_LE(graphs[0].end, graphs[1].start);
}

TEST_F(StandIn, SynchronizingACapturingStreamInvalidatesTheCaptureAndTheLegacyStreamCannotCapture) {
  EXPECT_EQ(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal),
            cudaErrorStreamCaptureUnsupported);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), cudaSuccess);
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), cudaErrorIllegalState);
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalState);  // LaunchTiny reports the last error
  ASSERT_EQ(LaunchTiny(dim3(1), dim3(32), stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorStreamCaptureUnsupported);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(stream, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated);
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(&status);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaErrorIllegalState);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  // The failed end is the last error; reading it clears it, so the tests after this one in the
  // same process do not see it from LaunchTiny.
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalState);
}
