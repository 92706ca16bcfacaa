// A do-nothing libcupti for the API-callback benchmark (figure 2): exports the CUPTI functions
// the collector loads (collector/cupti/loader.h), accepts every request, and hands the callback
// that gprof subscribes back to the benchmark (BenchSubscribedCallback), which then calls it with
// CUpti_CallbackData built in memory. No CUDA, no GPU. Never shipped.
#include <cupti.h>

#include <cstdio>

namespace {
CUpti_CallbackFunc g_callback = nullptr;
void* g_userdata = nullptr;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUpti_CallbackFunc BenchSubscribedCallback(void** userdata) {
  *userdata = g_userdata;
  return g_callback;
}

CUptiResult cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiGetResultString(CUptiResult, const char** str) {
  *str = "bench shim";
  return CUPTI_SUCCESS;
}
CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                              void* userdata, CUpti_SubscriberParams*) {
  g_callback = callback;
  g_userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&g_callback);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) { return CUPTI_SUCCESS; }
CUptiResult cuptiEnableDomain(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) {
  return CUPTI_SUCCESS;
}
CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  static char names[2][1024][32];
  if (cbid >= 1024) return CUPTI_ERROR_INVALID_PARAMETER;
  const int d = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? 0 : 1;
  if (d == 0 && cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000) {
    *name = "__cudaLaunchKernel_v13000";
  } else if (d == 0 && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020) {
    *name = "cudaDeviceSynchronize_v3020";  // figure 13: selected by GPROF_BACKTRACE=sync
  } else {
    std::snprintf(names[d][cbid], sizeof(names[d][cbid]), "%sApi%u", d == 0 ? "cuda" : "cu", cbid);
    *name = names[d][cbid];
  }
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityEnable(CUpti_ActivityKind) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivityDisable(CUpti_ActivityKind) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute, size_t*, void*) {
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc) {
  return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityFlushAll(uint32_t) { return CUPTI_SUCCESS; }
CUptiResult cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) {
  return CUPTI_ERROR_MAX_LIMIT_REACHED;
}
CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 0;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiFinalize() { return CUPTI_SUCCESS; }
CUptiResult cuptiGetTimestamp(uint64_t* ts) {
  *ts = 0;  // "not checked" for the clock check
  return CUPTI_SUCCESS;
}

}  // extern "C"
