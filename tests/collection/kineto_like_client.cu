// A program with a CUPTI profiler of its own that behaves as Kineto's does (torch.profiler's
// library), run in the middle of its launches. What it does, and where Kineto does it:
//   start  - cuptiSubscribe for its callbacks, tolerating a subscriber already there
//            (libkineto/src/CuptiCallbackApi.cpp, initCallbackApi: a failed subscribe is logged,
//            activity tracing goes on); PER_THREAD_ACTIVITY_BUFFER set (REFERENCE.md section 1:
//            Kineto toggles it); a TSC timestamp callback (CuptiActivityProfiler.cpp, configure:
//            cuptiActivityRegisterTimestampCallback(getApproximateTime), never removed); its own
//            buffer callbacks and kinds (CuptiActivityApi.cpp, enableCuptiActivities), 4 MiB
//            buffers (kBufSize);
//   stop   - every kind it enabled disabled (disableCuptiActivities), a forced flush
//            (activityBuffers), then a default one (clearActivities);
//   buffers - a completed buffer it did not allocate is dropped ("bufferCompleted called with
//            unknown buffer", bufferCompleted): counted here as foreign_buffers.
// Usage: kineto_like_client [launches=100] [from=40] [inside=20] [explicit]. Kernels before_kernel
// (launches before `from`), inside_kernel (`inside` launches while its profiler runs) and
// after_kernel (the rest). "explicit": it asks the injection library in CUDA_INJECTION64_PATH for
// the hand-over itself (gprof_run_cupti_hand_over / take_back), as gprof-run's Python hook does
// around torch.profiler; otherwise it relies on --preload's interposition. Prints its own counts
// and "GPROF_EXAMPLE_DONE kineto_like_client"; exits 1 unless its profiler got exactly its own
// `inside` kernel records, on its own clock, and no buffer it did not allocate.
// Built twice: kineto_like_client links libcupti and calls it (as torch does);
// dlsym_cupti_client (GPROF_CUPTI_BY_DLSYM) does not link it, and reaches every CUPTI function
// through dlopen("libcupti.so.13") and dlsym, as a profiler that loads CUPTI on demand does.
#include <cupti.h>
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "examples/cuda/check.h"

__global__ void before_kernel() {}
__global__ void inside_kernel() {}
__global__ void after_kernel() {}

namespace {

constexpr size_t kBufSize = 4 * 1024 * 1024;  // Kineto's kBufSize
// A realtime ns count is past 1.7e18 since 2023; TSC ticks or ns since boot stay far below.
constexpr uint64_t kRealtimeFloor = 1'000'000'000'000'000'000ull;

// The CUPTI functions the client calls, linked or looked up.
struct CuptiFns {
  decltype(&cuptiSubscribe) subscribe;
  decltype(&cuptiActivitySetAttribute) set_attribute;
  decltype(&cuptiActivityRegisterTimestampCallback) timestamp_callback;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks;
  decltype(&cuptiActivityEnable) enable;
  decltype(&cuptiActivityDisable) disable;
  decltype(&cuptiActivityFlushAll) flush_all;
  decltype(&cuptiActivityGetNextRecord) next_record;
};

#ifdef GPROF_CUPTI_BY_DLSYM
template <typename Fn>
void Sym(void* lib, const char* name, Fn* fn) {
  *fn = lib != nullptr ? reinterpret_cast<Fn>(dlsym(lib, name)) : nullptr;
}

CuptiFns LoadCupti() {
  void* lib = dlopen("libcupti.so.13", RTLD_NOW);
  CuptiFns f{};
  Sym(lib, "cuptiSubscribe", &f.subscribe);
  Sym(lib, "cuptiActivitySetAttribute", &f.set_attribute);
  Sym(lib, "cuptiActivityRegisterTimestampCallback", &f.timestamp_callback);
  Sym(lib, "cuptiActivityRegisterCallbacks", &f.register_callbacks);
  Sym(lib, "cuptiActivityEnable", &f.enable);
  Sym(lib, "cuptiActivityDisable", &f.disable);
  Sym(lib, "cuptiActivityFlushAll", &f.flush_all);
  Sym(lib, "cuptiActivityGetNextRecord", &f.next_record);
  return f;
}
#else
CuptiFns LoadCupti() {
  return {&cuptiSubscribe,          &cuptiActivitySetAttribute,
          &cuptiActivityRegisterTimestampCallback, &cuptiActivityRegisterCallbacks,
          &cuptiActivityEnable,     &cuptiActivityDisable,
          &cuptiActivityFlushAll,   &cuptiActivityGetNextRecord};
}
#endif

CuptiFns g_cupti{};

std::mutex g_mu;
std::set<uint8_t*> g_ours;
std::atomic<int> g_own_kernels{0}, g_other_kernels{0}, g_foreign_buffers{0}, g_off_own_clock{0};

uint64_t CUPTIAPI ApproximateTime() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, kBufSize));
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_ours.insert(b);
  }
  *buffer = b;
  *size = kBufSize;
  *max_records = 0;
}

void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_ours.erase(buffer) == 0) {
      ++g_foreign_buffers;  // not ours: dropped, as Kineto does
      return;
    }
  }
  CUpti_Activity* r = nullptr;
  while (g_cupti.next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
    const bool inside = k->name != nullptr && std::strstr(k->name, "inside_kernel") != nullptr;
    ++(inside ? g_own_kernels : g_other_kernels);
    if (k->start == 0 || k->start >= kRealtimeFloor || k->end < k->start) ++g_off_own_clock;
  }
  std::free(buffer);
}

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,          CUPTI_ACTIVITY_KIND_OVERHEAD,
};

void CUPTIAPI IgnoreCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// The injection library's hand-over entries (explicit mode), or null.
int (*HandOverEntry(const char* name))() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  void* lib = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  return lib != nullptr ? reinterpret_cast<int (*)()>(dlsym(lib, name)) : nullptr;
}

bool Start(bool explicit_hand_over) {
  if (explicit_hand_over) {
    if (auto give = HandOverEntry("gprof_run_cupti_hand_over")) give();
  }
  g_cupti = LoadCupti();
  for (void* fn : {(void*)g_cupti.subscribe, (void*)g_cupti.set_attribute,
                   (void*)g_cupti.timestamp_callback, (void*)g_cupti.register_callbacks,
                   (void*)g_cupti.enable, (void*)g_cupti.disable, (void*)g_cupti.flush_all,
                   (void*)g_cupti.next_record}) {
    if (fn == nullptr) return false;
  }
  CUpti_SubscriberHandle subscriber = nullptr;
  (void)g_cupti.subscribe(&subscriber, &IgnoreCallback, nullptr);  // refused beside gprof-run
  uint8_t one = 1;
  size_t size = sizeof one;
  g_cupti.set_attribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &one);
  if (g_cupti.timestamp_callback(&ApproximateTime) != CUPTI_SUCCESS ||
      g_cupti.register_callbacks(&Requested, &Completed) != CUPTI_SUCCESS) {
    return false;
  }
  for (CUpti_ActivityKind kind : kKinds) {
    if (g_cupti.enable(kind) != CUPTI_SUCCESS) return false;
  }
  return true;
}

void Stop(bool explicit_hand_over) {
  for (CUpti_ActivityKind kind : kKinds) g_cupti.disable(kind);
  g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_cupti.flush_all(0);
  if (explicit_hand_over) {
    if (auto take = HandOverEntry("gprof_run_cupti_take_back")) take();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 100;
  const int from = argc > 2 ? std::atoi(argv[2]) : 40;
  const int inside = argc > 3 ? std::atoi(argv[3]) : 20;
  const bool explicit_hand_over = argc > 4 && std::string(argv[4]) == "explicit";
  for (int i = 0; i < from; ++i) before_kernel<<<1, 32>>>();
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  if (!Start(explicit_hand_over)) {
    std::printf("kineto_like_client: could not start its own profiler\n");
    return 1;
  }
  for (int i = 0; i < inside; ++i) inside_kernel<<<1, 32>>>();
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  Stop(explicit_hand_over);
  for (int i = from + inside; i < launches; ++i) after_kernel<<<1, 32>>>();
  EXAMPLE_CHECK(cudaDeviceSynchronize());
  std::printf("kineto_like_client: own_kernels=%d other_kernels=%d foreign_buffers=%d "
              "off_own_clock=%d\n",
              g_own_kernels.load(), g_other_kernels.load(), g_foreign_buffers.load(),
              g_off_own_clock.load());
  std::printf("GPROF_EXAMPLE_DONE kineto_like_client\n");
  const bool ok = g_own_kernels == inside && g_other_kernels == 0 && g_foreign_buffers == 0 &&
                  g_off_own_clock == 0;
  return ok ? 0 : 1;
}
