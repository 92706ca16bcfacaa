// Test-only libcupti shim for the "CUPTI error mid-run" failure mode: forwards every function the
// collector uses to the libcupti named by GPROF_TEST_FAULT_TARGET (the stand-in), but makes every
// cuptiActivityFlushAll fail with CUPTI_ERROR_UNKNOWN after it ran. Loaded via GPROF_CUPTI_LIB.
#include <cupti.h>
#include <dlfcn.h>

#include <cstdlib>

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

}  // namespace

#define GPROF_FORWARD(ret_fail, name, params, args)               \
  extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI name params { \
    static auto fn = Real<CUptiResult(CUPTIAPI*) params>(#name);   \
    return fn ? fn args : ret_fail;                               \
  }

GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiGetVersion, (uint32_t * v), (v))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiGetResultString, (CUptiResult r, const char** s), (r, s))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiSubscribe_v2,
              (CUpti_SubscriberHandle * s, CUpti_CallbackFunc f, void* u, CUpti_SubscriberParams* p),
              (s, f, u, p))
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
  if (fn) fn(flag);
  return CUPTI_ERROR_UNKNOWN;
}
