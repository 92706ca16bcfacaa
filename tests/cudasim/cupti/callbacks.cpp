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

bool CallbackEnabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  CuptiState& c = Cupti();
  return !LibraryDestroyed() && domain > 0 && domain < kMaxDomain && cbid < static_cast<CUpti_CallbackId>(kMaxCbid) &&
         c.enabled[domain][cbid].load(std::memory_order_relaxed) &&
         c.callback.load(std::memory_order_acquire) != nullptr;
}

void Callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* cbdata) {
  CuptiState& c = Cupti();
  CUpti_CallbackFunc fn = c.callback.load(std::memory_order_acquire);
  if (fn == nullptr) return;
  CountCallback(domain, cbid);  // callback_report.cpp (CUDASIM_CALLBACK_REPORT)
  fn(c.userdata.load(std::memory_order_relaxed), domain, cbid, cbdata);
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
  static const bool injected = [] {
    const char* path = std::getenv("CUDA_INJECTION64_PATH");
    return path != nullptr && *path != '\0';
  }();
  if (!injected || cudasim_injection_started()) return;
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

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                              void* userdata, CUpti_SubscriberParams* params) {
  EnsureHooks();
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  CuptiState& c = Cupti();
  const char* holder = cudasim_knobs()->cupti_holder;
  char* old_name = nullptr;
  size_t old_size = 0;
  if (params != nullptr && params->structSize >= CUpti_SubscriberParams_STRUCT_SIZE) {
    old_name = params->oldSubscriberName;
    old_size = params->oldSubscriberSize;
  }
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
  const char* name = params != nullptr && params->structSize >= CUpti_SubscriberParams_STRUCT_SIZE
                         ? params->subscriberName : nullptr;
  c.subscriber_name = name != nullptr ? std::string("CUPTI for ") + name : "CUPTI";
  for (auto& domain : c.enabled) {
    for (auto& e : domain) e.store(false, std::memory_order_relaxed);
  }
  c.userdata.store(userdata, std::memory_order_relaxed);
  c.callback.store(callback, std::memory_order_release);
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&c);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                           void* userdata) {
  EnsureHooks();
  return cuptiSubscribe_v2(subscriber, callback, userdata, nullptr);
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
