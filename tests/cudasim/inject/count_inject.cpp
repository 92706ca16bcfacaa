// Tiny CUDA_INJECTION64_PATH library for the stand-in's own tests: subscribes to CUPTI (runtime
// and driver callbacks, kernel/memcpy/API activity), counts what it sees, checks that each kernel
// record's correlation id belongs to a launch callback, and prints one summary line at exit:
//   CUDASIM_INJECT subscribed=1 launches=N kernels=K matched=M ... dropped=D kernel_ns=.. ...
// A launch is a runtime launch callback, or a driver cuLaunchKernel(Ex) callback that is not nested
// in a runtime launch (a direct driver launch, as Triton makes). Kernel records returned by the
// exit flush before their work ended (end 0) are counted as incomplete, not in kernel_ns.
// or "CUDASIM_INJECT subscribe_failed=<code> holder=<name>". Test-only; not the product library.
//
// Threads: callbacks on application threads; buffer callbacks on the CUPTI worker thread; the
// summary in an atexit handler.
#include <cupti.h>
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace {

constexpr size_t kBufferBytes = 64 * 1024;

std::atomic<int> g_launch_callbacks{0};
std::atomic<int> g_driver_launches{0};      // direct driver launches (not inside a runtime launch)
std::atomic<int> g_incomplete{0};           // kernel records with end 0
thread_local int t_runtime_launch_depth = 0;
std::atomic<int> g_runtime_enters{0};
std::atomic<int> g_driver_enters{0};
std::atomic<int> g_kernels{0};
std::atomic<int> g_matched{0};
std::atomic<int> g_memcpys{0};
std::atomic<int> g_api_records{0};
std::atomic<int> g_buffers{0};
std::atomic<uint64_t> g_kernel_ns{0};       // summed kernel durations
std::atomic<uint64_t> g_launch_api_ns{0};   // summed host durations of launch calls
std::atomic<int> g_completed_on_main{0};
std::mutex g_mu;  // guards g_launch_ids (test-only: a lock in a callback is fine here)
std::set<uint32_t>* g_launch_ids = new std::set<uint32_t>();
pthread_t g_main_thread;
CUpti_SubscriberHandle g_subscriber;

bool IsLaunch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
         cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000 ||
         cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
         cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060;
}

bool IsDriverLaunch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
}

void AddLaunch(uint32_t correlation_id) {
  ++g_launch_callbacks;
  std::lock_guard<std::mutex> lock(g_mu);
  g_launch_ids->insert(correlation_id);
}

void Callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && IsLaunch(cbid)) {
    t_runtime_launch_depth += cb->callbackSite == CUPTI_API_ENTER ? 1 : -1;
  }
  if (cb->callbackSite != CUPTI_API_ENTER) return;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    ++g_driver_enters;
    if (IsDriverLaunch(cbid) && t_runtime_launch_depth == 0) {
      ++g_driver_launches;
      AddLaunch(cb->correlationId);
    }
    return;
  }
  ++g_runtime_enters;
  if (IsLaunch(cbid)) AddLaunch(cb->correlationId);
}

void BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  ++g_buffers;
  if (pthread_equal(pthread_self(), g_main_thread)) ++g_completed_on_main;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      ++g_kernels;
      auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
      if (k->end == 0) {
        ++g_incomplete;
      } else {
        g_kernel_ns += k->end - k->start;
      }
      std::lock_guard<std::mutex> lock(g_mu);
      if (g_launch_ids->count(k->correlationId) != 0) ++g_matched;
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      ++g_memcpys;
    } else if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      ++g_api_records;
      auto* api = reinterpret_cast<CUpti_ActivityAPI*>(record);
      if (IsLaunch(api->cbid)) g_launch_api_ns += api->end - api->start;
    }
  }
  std::free(buffer);
}

void AtExit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  std::printf(
      "CUDASIM_INJECT subscribed=1 launches=%d kernels=%d matched=%d memcpys=%d api_records=%d "
      "runtime_enters=%d driver_enters=%d driver_launches=%d buffers=%d completed_on_main=%d "
      "dropped=%zu incomplete=%d kernel_ns=%llu launch_api_ns=%llu\n",
      g_launch_callbacks.load(), g_kernels.load(), g_matched.load(), g_memcpys.load(),
      g_api_records.load(), g_runtime_enters.load(), g_driver_enters.load(),
      g_driver_launches.load(), g_buffers.load(), g_completed_on_main.load(), dropped,
      g_incomplete.load(),
      static_cast<unsigned long long>(g_kernel_ns.load()),
      static_cast<unsigned long long>(g_launch_api_ns.load()));
  std::fflush(stdout);
  cuptiUnsubscribe(g_subscriber);
  cuptiFinalize();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<int> calls{0};
  if (calls.fetch_add(1) != 0) {
    std::printf("CUDASIM_INJECT initialized_twice=1\n");
    return 1;
  }
  g_main_thread = pthread_self();
  uint32_t version = 0;
  cuptiGetVersion(&version);
  std::printf("CUDASIM_INJECT version=%u built_for=%u\n", version, CUPTI_API_VERSION);
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "cudasim-count-inject";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder);
  CUptiResult r = cuptiSubscribe_v2(&g_subscriber, Callback, nullptr, &params);
  if (r != CUPTI_SUCCESS) {
    std::printf("CUDASIM_INJECT subscribe_failed=%d holder=%s\n", static_cast<int>(r), holder);
    std::fflush(stdout);
    return 1;
  }
  cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  std::atexit(AtExit);
  return 1;
}
