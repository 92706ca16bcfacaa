// Test-only libcupti shim: forwards every function the collector uses to the libcupti named by
// GPROF_TEST_FAULT_TARGET (the stand-in) and injects one fault, chosen by GPROF_TEST_FAULT_MODE:
//   (unset) or "flush_error"  every cuptiActivityFlushAll fails with CUPTI_ERROR_UNKNOWN after it
//                             ran ("CUPTI error mid-run").
//   "exit_without_enter"      the first runtime API call after subscribing reaches the tool's
//                             callback only at its EXIT, with correlationData 0: what real CUPTI
//                             does for the call during which InitializeInjection subscribed.
// Loaded via GPROF_CUPTI_LIB.
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace {

void* Target() {
  static void* handle = [] {
    const char* path = std::getenv("GPROF_TEST_FAULT_TARGET");
    return path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : nullptr;
  }();
  return handle;
}

template <typename Fn>
Fn Real(const char* name) {
  void* h = Target();
  return h ? reinterpret_cast<Fn>(dlsym(h, name)) : nullptr;
}

bool Mode(const char* name) {
  const char* mode = std::getenv("GPROF_TEST_FAULT_MODE");
  return std::strcmp(mode != nullptr ? mode : "flush_error", name) == 0;
}

CUpti_CallbackFunc g_tool_callback = nullptr;
std::atomic<bool> g_swallowed{false};

// Between the stand-in and the tool's callback: drops the ENTER of the first runtime call.
void CUPTIAPI ShimCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                           const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cb->callbackSite == CUPTI_API_ENTER &&
      !g_swallowed.exchange(true)) {
    return;
  }
  g_tool_callback(userdata, domain, cbid, data);
}

}  // namespace

#define GPROF_FORWARD(ret_fail, name, params, args)               \
  extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI name params { \
    static auto fn = Real<CUptiResult(CUPTIAPI*) params>(#name);   \
    return fn ? fn args : ret_fail;                               \
  }

GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiGetVersion, (uint32_t * v), (v))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiGetResultString, (CUptiResult r, const char** s), (r, s))
extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe_v2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc f, void* u,
                  CUpti_SubscriberParams* p) {
  static auto fn = Real<CUptiResult(CUPTIAPI*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*,
                                               CUpti_SubscriberParams*)>("cuptiSubscribe_v2");
  if (fn == nullptr) return CUPTI_ERROR_UNKNOWN;
  if (!Mode("exit_without_enter")) return fn(s, f, u, p);
  g_tool_callback = f;
  return fn(s, &ShimCallback, u, p);
}
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiUnsubscribe, (CUpti_SubscriberHandle s), (s))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiEnableDomain,
              (uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d), (e, s, d))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiGetCallbackName,
              (CUpti_CallbackDomain d, uint32_t c, const char** n), (d, c, n))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityEnable, (CUpti_ActivityKind k), (k))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityDisable, (CUpti_ActivityKind k), (k))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivitySetAttribute,
              (CUpti_ActivityAttribute a, size_t* s, void* v), (a, s, v))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityRegisterCallbacks,
              (CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c), (r, c))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityGetNextRecord,
              (uint8_t * b, size_t v, CUpti_Activity** r), (b, v, r))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityGetNumDroppedRecords,
              (CUcontext c, uint32_t s, size_t* d), (c, s, d))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiFinalize, (void), ())

extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiActivityFlushAll(uint32_t flag) {
  static auto fn = Real<CUptiResult(CUPTIAPI*)(uint32_t)>("cuptiActivityFlushAll");
  if (!Mode("flush_error")) return fn ? fn(flag) : CUPTI_ERROR_UNKNOWN;
  if (fn) fn(flag);
  return CUPTI_ERROR_UNKNOWN;
}
