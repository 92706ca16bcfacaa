// Subscriber and callback API of the stand-in libcupti.so.13, with CUPTI's one-subscriber rule
// (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, holder's name via cuptiSubscribe_v2), and the
// hook table libcudart calls. Test-only. Threads: any application thread.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/cudasim/cupti/cupti_state.h"

namespace gprof::cudasim {
namespace {

struct CbidName {
  uint32_t id;
  const char* name;
};
#include "cbid_names.inc"

// libcudart plays the CUDA 13.0 runtime and reports each call by 13.0's callback id
// (cupti_runtime_cbid.h of 13.0: __cudaLaunchKernel_v13000 = 505, __cudaLaunchKernel_ptsz_v13000
// = 506; layout_check.cpp checks both). libcupti.so.12 plays a CUDA 12 runtime, which has no such
// ids: its <<<>>> launches are cudaLaunchKernel (the nvcc 12 stub calls it), and calls that CUDA
// 12 cannot trace (ids at or past its CUPTI_*_TRACE_CBID_SIZE) reach no subscriber. The id the
// subscriber sees; 0 (INVALID) for none.
constexpr CUpti_CallbackId kCuda13LaunchKernel = 505, kCuda13LaunchKernelPtsz = 506;
CUpti_CallbackId PlayedCbid(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
#if CUPTI_API_VERSION < 130000
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (cbid == kCuda13LaunchKernel) return CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    if (cbid == kCuda13LaunchKernelPtsz) return CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000;
    return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE ? cbid : 0;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE ? cbid : 0;
#else
  static_assert(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 == kCuda13LaunchKernel &&
                CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000 == kCuda13LaunchKernelPtsz);
  (void)domain;
#endif
  return cbid;
}

bool CallbackEnabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  cbid = PlayedCbid(domain, cbid);
  if (cbid == 0) return false;
  CuptiState& c = Cupti();
  return !LibraryDestroyed() && domain > 0 && domain < kMaxDomain && cbid < static_cast<CUpti_CallbackId>(kMaxCbid) &&
         c.enabled[domain][cbid].load(std::memory_order_relaxed) &&
         c.callback.load(std::memory_order_acquire) != nullptr;
}

void Callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  CuptiState& c = Cupti();
  CUpti_CallbackFunc fn = c.callback.load(std::memory_order_acquire);
  const CUpti_CallbackId played = PlayedCbid(domain, cbid);
  if (fn == nullptr || played == 0) return;
  CountCallback(domain, played);  // callback_report.cpp (CUDASIM_CALLBACK_REPORT)
  if (played != cbid && domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    // The CUDA 12 runtime's name for the call, as its id says (the subscriber may write through
    // the copy's pointers, as through the original's).
    CUpti_CallbackData renamed = *static_cast<const CUpti_CallbackData*>(cbdata);
    renamed.functionName = played == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
                               ? "cudaLaunchKernel"
                               : "cudaLaunchKernel_ptsz";
    fn(c.userdata.load(std::memory_order_relaxed), domain, played, &renamed);
    return;
  }
  fn(c.userdata.load(std::memory_order_relaxed), domain, played, cbdata);
}

bool KindEnabledHook(CUpti_ActivityKind kind) {
  return !LibraryDestroyed() && kind > 0 && kind < CUPTI_ACTIVITY_KIND_COUNT &&
         Cupti().kinds[kind].load(std::memory_order_relaxed);
}

const CudasimToolHooks kHooks = {CallbackEnabled, Callback,   KindEnabledHook,
                                 StageRecord,     CurrentThreadId, EmitExternalCorrelations};

void CopyName(char* out, size_t out_size, const std::string& name) {
  if (out == nullptr || out_size == 0) return;
  std::snprintf(out, out_size, "%s", name.c_str());
}

int DomainCbidLimit(CUpti_CallbackDomain domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
  }
}

}  // namespace

CuptiState& Cupti() {
  static CuptiState* state = new CuptiState();  // never freed: used until the last atexit handler
  return *state;
}

void RequireDriver(const char* caller) {
  // Without an injection library the process plays a machine with a driver, where a program that
  // links CUPTI itself may call it first (CUPTI then initializes the driver): api_test does.
  // CUDASIM_CUPTI_BEFORE_DRIVER=abort plays that libcupti in a process a tool attaches to.
  static const bool injected = [] {
    const char* path = std::getenv("CUDA_INJECTION64_PATH");
    return path != nullptr && *path != '\0';
  }();
  const uint32_t mode = cudasim_knobs()->cupti_before_driver;
  const bool fatal = mode == kBeforeDriverAbort || (mode == kBeforeDriverAuto && injected);
  if (!fatal || cudasim_injection_started()) return;
  std::fprintf(stderr,
               "cudasim: %s was called before the CUDA driver ran InitializeInjection: a real "
               "libcupti (13.2) overflows its stack here (tests/cudasim/README.md); aborting\n",
               caller);
  std::abort();
}

void EnsureHooks(const char* caller) {
  CheckAlive(caller);
  RequireDriver(caller);
  static const bool done = [] {
    cudasim_set_tool_hooks(&kHooks);
    return true;
  }();
  (void)done;
}

}  // namespace gprof::cudasim

using namespace gprof::cudasim;

extern "C" {

// cuptiSubscribe_v2's work; `name` and the old subscriber's name buffer come from its params
// (CUDA 13.0+; CUDA 12's cuptiSubscribe has neither).
static CUptiResult Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                             void* userdata, const char* name, char* old_name, size_t old_size) {
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  CuptiState& c = Cupti();
  const char* holder = cudasim_knobs()->cupti_holder;
  std::lock_guard<std::mutex> lock(c.sub_mu);
  if (holder != nullptr) {
    CopyName(old_name, old_size, holder);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  if (c.subscribed) {
    CopyName(old_name, old_size, c.subscriber_name);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  c.subscribed = true;
  c.subscriber_name = name != nullptr ? std::string("CUPTI for ") + name : "CUPTI";
  for (auto& domain : c.enabled) {
    for (auto& e : domain) e.store(false, std::memory_order_relaxed);
  }
  c.userdata.store(userdata, std::memory_order_relaxed);
  c.callback.store(callback, std::memory_order_release);
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&c);
  return CUPTI_SUCCESS;
}

#if CUPTI_API_VERSION >= 130000  // libcupti.so.13 only: the 12.8 headers have no SubscriberParams
CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                              void* userdata, CUpti_SubscriberParams* params) {
  EnsureHooks();
  const bool sized = params != nullptr && params->structSize >= CUpti_SubscriberParams_STRUCT_SIZE;
  return Subscribe(subscriber, callback, userdata, sized ? params->subscriberName : nullptr,
                   sized ? params->oldSubscriberName : nullptr,
                   sized ? params->oldSubscriberSize : 0);
}
#endif

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* userdata) {
  EnsureHooks();
  return Subscribe(subscriber, callback, userdata, nullptr, nullptr, 0);
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  EnsureHooks();
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.sub_mu);
  if (!c.subscribed || subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&c)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  c.callback.store(nullptr, std::memory_order_release);
  for (auto& domain : c.enabled) {
    for (auto& e : domain) e.store(false, std::memory_order_relaxed);
  }
  c.subscribed = false;
  c.subscriber_name.clear();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  EnsureHooks();
  CuptiState& c = Cupti();
  if (subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&c) || !c.subscribed) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  if (domain <= 0 || domain >= kMaxDomain || static_cast<int>(cbid) >= DomainCbidLimit(domain)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  c.enabled[domain][cbid].store(enable != 0, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                              CUpti_CallbackDomain domain) {
  EnsureHooks();
  CuptiState& c = Cupti();
  if (subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&c) || !c.subscribed) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  if (domain <= 0 || domain >= kMaxDomain) return CUPTI_ERROR_INVALID_PARAMETER;
  for (int i = 0; i < DomainCbidLimit(domain); ++i) {
    c.enabled[domain][i].store(enable != 0, std::memory_order_relaxed);
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  EnsureHooks();
  for (int d = 1; d < kMaxDomain; ++d) {
    CUptiResult r = cuptiEnableDomain(enable, subscriber, static_cast<CUpti_CallbackDomain>(d));
    if (r != CUPTI_SUCCESS) return r;
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                  CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  EnsureHooks();
  CuptiState& c = Cupti();
  if (enable == nullptr || subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&c) ||
      domain <= 0 || domain >= kMaxDomain || static_cast<int>(cbid) >= DomainCbidLimit(domain)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  *enable = c.enabled[domain][cbid].load(std::memory_order_relaxed) ? 1 : 0;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  EnsureHooks();
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const CbidName* table = nullptr;
  size_t n = 0;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    table = k_runtime_cbid_names;
    n = sizeof(k_runtime_cbid_names) / sizeof(k_runtime_cbid_names[0]);
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    table = k_driver_cbid_names;
    n = sizeof(k_driver_cbid_names) / sizeof(k_driver_cbid_names[0]);
  } else {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  for (size_t i = 0; i < n; ++i) {
    if (table[i].id == cbid) {
      *name = table[i].name;
      return CUPTI_SUCCESS;
    }
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiSupportedDomains(size_t* domainCount, CUpti_DomainTable* domainTable) {
  EnsureHooks();
  static CUpti_CallbackDomain domains[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
                                           CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_SYNCHRONIZE,
                                           CUPTI_CB_DOMAIN_NVTX, CUPTI_CB_DOMAIN_STATE};
  if (domainCount == nullptr || domainTable == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *domainCount = sizeof(domains) / sizeof(domains[0]);
  *domainTable = domains;
  return CUPTI_SUCCESS;
}

}  // extern "C"
