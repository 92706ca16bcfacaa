// Test-only libcupti shim: forwards every function the collector uses to the libcupti named by
// GPROF_TEST_FAULT_TARGET (the stand-in) and injects one fault, chosen by GPROF_TEST_FAULT_MODE:
//   (unset) or "flush_error"  every cuptiActivityFlushAll fails with CUPTI_ERROR_UNKNOWN after it
//                             ran ("CUPTI error mid-run").
//   "exit_without_enter"      the first runtime API call after subscribing reaches the tool's
//                             callback only at its EXIT, with correlationData 0: what real CUPTI
//                             does for the call during which InitializeInjection subscribed.
//   "record_calls"            no fault: every forwarded call is logged in order (attributes with
//                             their value, flushes with their flag) and printed as one
//                             "GPROF_SHIM_CALLS name name ..." line on stderr when the library is
//                             unloaded at exit, after the tool's own atexit flush.
// Loaded via GPROF_CUPTI_LIB.
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
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

// The call log of "record_calls": a fixed buffer (no allocation while the tool runs), guarded
// by a spin flag (calls may come from several threads).
char g_log[1 << 16];
size_t g_log_used = 0;
std::atomic_flag g_log_busy = ATOMIC_FLAG_INIT;

void Record(const char* name, long long value = -1) {
  if (!Mode("record_calls")) return;
  while (g_log_busy.test_and_set(std::memory_order_acquire)) {
  }
  char item[96];
  const int n = value < 0 ? std::snprintf(item, sizeof item, " %s", name)
                          : std::snprintf(item, sizeof item, " %s:%lld", name, value);
  if (n > 0 && g_log_used + static_cast<size_t>(n) < sizeof g_log) {
    std::memcpy(g_log + g_log_used, item, static_cast<size_t>(n));
    g_log_used += static_cast<size_t>(n);
  }
  g_log_busy.clear(std::memory_order_release);
}

__attribute__((destructor)) void PrintLog() {
  if (Mode("record_calls")) std::fprintf(stderr, "GPROF_SHIM_CALLS%.*s\n", static_cast<int>(g_log_used), g_log);
}

}  // namespace

#define GPROF_FORWARD(ret_fail, name, params, args)               \
  extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI name params { \
    static auto fn = Real<CUptiResult(CUPTIAPI*) params>(#name);   \
    Record(#name);                                                \
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
  Record("cuptiSubscribe_v2");
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
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityEnableAndDump, (CUpti_ActivityKind k), (k))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityDisable, (CUpti_ActivityKind k), (k))
extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiActivitySetAttribute(CUpti_ActivityAttribute a, size_t* s, void* v) {
  static auto fn = Real<CUptiResult(CUPTIAPI*)(CUpti_ActivityAttribute, size_t*, void*)>(
      "cuptiActivitySetAttribute");
  // "attr<id>=<value>" for the one-byte attributes the collector sets.
  char name[48];
  std::snprintf(name, sizeof name, "cuptiActivitySetAttribute(%d)", static_cast<int>(a));
  Record(name, s != nullptr && *s == 1 && v != nullptr ? *static_cast<uint8_t*>(v) : -1);
  return fn ? fn(a, s, v) : CUPTI_ERROR_UNKNOWN;
}
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityRegisterCallbacks,
              (CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c), (r, c))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityGetNextRecord,
              (uint8_t * b, size_t v, CUpti_Activity** r), (b, v, r))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiActivityGetNumDroppedRecords,
              (CUcontext c, uint32_t s, size_t* d), (c, s, d))
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiFinalize, (void), ())
GPROF_FORWARD(CUPTI_ERROR_UNKNOWN, cuptiGetTimestamp, (uint64_t * t), (t))

extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiActivityFlushAll(uint32_t flag) {
  static auto fn = Real<CUptiResult(CUPTIAPI*)(uint32_t)>("cuptiActivityFlushAll");
  Record("cuptiActivityFlushAll", flag);
  if (!Mode("flush_error")) return fn ? fn(flag) : CUPTI_ERROR_UNKNOWN;
  if (fn) fn(flag);
  return CUPTI_ERROR_UNKNOWN;
}
