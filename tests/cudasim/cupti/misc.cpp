// Version, result strings, timestamps, ids, thread-id type and finalize of the stand-in
// libcupti.so.13. Test-only. Threads: any application thread.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/cudasim/cupti/cupti_state.h"
#include "tests/cudasim/cupti/record_layouts.h"

namespace gprof::cudasim {
namespace {

std::atomic<bool> g_destroyed{false};  // constant-initialized: valid before and after the object

// The stand-in's static object with a destructor (cupti_state.h, CheckAlive): constructed when
// the library is loaded (at dlopen, when a tool loads it late), its destructor registered with
// __cxa_atexit then, as the compiler does for every such global of a shared library.
struct LibraryStatics {
  LibraryStatics() = default;
  ~LibraryStatics() { g_destroyed.store(true, std::memory_order_release); }
};
LibraryStatics g_statics;

}  // namespace

bool LibraryDestroyed() { return g_destroyed.load(std::memory_order_acquire); }

void CheckAlive(const char* caller) {
  if (!LibraryDestroyed()) return;
  std::fprintf(stderr,
               "cudasim: %s called after libcupti.so.13's static destructors ran (a tool's exit "
               "handler registered before libcupti was loaded runs after them)\n",
               caller != nullptr ? caller : "a CUPTI function");
  std::abort();
}

}  // namespace gprof::cudasim

using namespace gprof::cudasim;

extern "C" {

CUptiResult cuptiGetVersion(uint32_t* version) {
  EnsureHooks();  // CheckAlive, RequireDriver
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = PlayedCuptiVersion();  // CUDASIM_CUPTI_VERSION: the version played
  return CUPTI_SUCCESS;
}

#define CUDASIM_CUPTI_RESULTS(X)                                                   \
  X(CUPTI_SUCCESS, "CUPTI_SUCCESS")                                                \
  X(CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER")                \
  X(CUPTI_ERROR_INVALID_DEVICE, "CUPTI_ERROR_INVALID_DEVICE")                      \
  X(CUPTI_ERROR_INVALID_CONTEXT, "CUPTI_ERROR_INVALID_CONTEXT")                    \
  X(CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION")                \
  X(CUPTI_ERROR_OUT_OF_MEMORY, "CUPTI_ERROR_OUT_OF_MEMORY")                        \
  X(CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED")                \
  X(CUPTI_ERROR_NOT_READY, "CUPTI_ERROR_NOT_READY")                                \
  X(CUPTI_ERROR_NOT_COMPATIBLE, "CUPTI_ERROR_NOT_COMPATIBLE")                      \
  X(CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED")                    \
  X(CUPTI_ERROR_QUEUE_EMPTY, "CUPTI_ERROR_QUEUE_EMPTY")                            \
  X(CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND")                          \
  X(CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED")                        \
  X(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")    \
  X(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,                                \
    "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED")                              \
  X(CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN")

CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  EnsureHooks();
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
#define CUDASIM_CASE(code, text) \
  case code:                     \
    *str = text;                 \
    return CUPTI_SUCCESS;
  switch (result) {
    CUDASIM_CUPTI_RESULTS(CUDASIM_CASE)
    default:
      *str = "CUPTI_ERROR_UNKNOWN";
      return CUPTI_ERROR_INVALID_PARAMETER;
  }
#undef CUDASIM_CASE
}

CUptiResult cuptiGetErrorMessage(CUptiResult result, const char** str) {
  return cuptiGetResultString(result, str);
}

// "Returns a timestamp normalized to correspond with the start and end timestamps reported in the
// CUPTI activity records" (cupti_activity.h): CLOCK_REALTIME by default, the registered timestamp
// callback's clock once one is registered (by this tool or, CUDASIM_TIMESTAMP_CALLBACK, another).
CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  EnsureHooks();  // CheckAlive, RequireDriver
  if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = ToRecordClock(cudasim_now_ns());
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  EnsureHooks();
  if (contextId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (context == nullptr || context != cudasim_current_context()) return CUPTI_ERROR_INVALID_CONTEXT;
  *contextId = 1;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t* deviceId) {
  EnsureHooks();
  if (deviceId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (context != nullptr && context != cudasim_current_context()) return CUPTI_ERROR_INVALID_CONTEXT;
  *deviceId = 0;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetStreamIdEx(CUcontext /*context*/, CUstream stream, uint8_t /*perThreadStream*/,
                               uint32_t* streamId) {
  EnsureHooks();
  if (streamId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  uint32_t id = cudasim_stream_id(stream);
  if (id == 0) return CUPTI_ERROR_INVALID_STREAM;
  *streamId = id;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t* streamId) {
  EnsureHooks();
  return cuptiGetStreamIdEx(context, stream, 0, streamId);
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  EnsureHooks();
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Cupti().thread_id_type.store(type);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  EnsureHooks();
  if (type == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *type = Cupti().thread_id_type.load();
  return CUPTI_SUCCESS;
}

// Detaches: callbacks off, kinds off, records not yet returned discarded (their buffers are never
// given back). The worker thread stays (idle).
CUptiResult cuptiFinalize(void) {
  EnsureHooks();
  CuptiState& c = Cupti();
  for (auto& k : c.kinds) k.store(false);
  {
    std::lock_guard<std::mutex> lock(c.sub_mu);
    c.callback.store(nullptr);
    for (auto& domain : c.enabled) {
      for (auto& e : domain) e.store(false);
    }
    c.subscribed = false;
    c.subscriber_name.clear();
  }
  std::lock_guard<std::mutex> lock(c.stage_mu);
  c.staged.clear();
  c.unregistered.clear();
  c.full.clear();
  for (BufferSlot* slot : c.thread_slots) *slot = BufferSlot{};
  c.shared_slot = BufferSlot{};
  return CUPTI_SUCCESS;
}

}  // extern "C"
