// CUPTI's API callback (the hot path on every application thread that calls CUDA) and the two
// cheap switches around it: the API hook for step detection and the collection flag. Rules: see
// session_state.h (no allocation, locks, logging, exceptions or I/O here).
#include <dlfcn.h>
#include <execinfo.h>

#include <cstring>

#include "collector/cupti/api_filter.h"
#include "collector/cupti/call_params.h"
#include "collector/cupti/capture_streams.h"
#include "collector/cupti/session_state.h"
#include "collector/host/api_records.h"
#include "collector/host/host_clock.h"
#include "collector/host/host_collection.h"
#include "collector/host/host_cost.h"
#include "collector/host/native_stack.h"

namespace gprof::collector::session {
namespace {

// initial-exec: no __tls_get_addr (which may allocate) on the callback path.
thread_local int t_runtime_depth __attribute__((tls_model("initial-exec"))) = 0;
// Stream captures this thread began and has not ended: the rule for the few work calls whose
// stream is not read (call_params.h kNone), whose work is taken as captured while it is open.
thread_local int t_open_captures __attribute__((tls_model("initial-exec"))) = 0;
// The streams under capture (capture_streams.h); constant-initialized.
constinit CaptureStreams g_captures;

// Follows the process's stream captures at each EXIT (a failed begin opens none, a failed record
// or wait joins none) and returns the flags of the call's record: captured when it queues work
// into a capturing stream, no GPU work for an empty or host-to-host copy. The flag travels in the
// record, so a window or segment that starts inside the capture still knows (gpu_collector.h
// CapturedCalls).
uint8_t StreamFlags(bool runtime, CUpti_CallbackId cbid, const void* params, int32_t rc) noexcept {
  const CallFacts f = ReadCallFacts(runtime, cbid, params);
  switch (f.op) {
    case StreamOp::kWork: {
      uint8_t flags = f.no_gpu_work ? kApiCallNoGpuWork : 0;
      if (f.stream != 0 ? g_captures.Captured(f.stream) : t_open_captures > 0) {
        flags |= kApiCallCaptured;
      }
      return flags;
    }
    case StreamOp::kBeginCapture:
      if (rc == 0) {
        ++t_open_captures;
        g_captures.Begin(f.stream);
      }
      return 0;
    case StreamOp::kEndCapture:
      if (t_open_captures > 0) --t_open_captures;
      g_captures.End(f.stream);
      return 0;
    case StreamOp::kEventRecord:
      if (rc == 0) g_captures.Record(f.event, f.stream);
      return 0;
    case StreamOp::kWaitEvent:
      if (rc == 0) g_captures.Wait(f.stream, f.event);
      return 0;
    case StreamOp::kNone:
      break;
  }
  // A call whose stream is not read here (cudaMemcpy3DAsync, cudaMemcpyToSymbolAsync, ...): the
  // thread rule. Calls that queue no work carry the flag harmlessly.
  return t_open_captures > 0 ? kApiCallCaptured : 0;
}

// Whether a frame of the calling thread's stack belongs to the shared CUDA runtime: then
// InitializeInjection runs inside a runtime call (at its lazy cuInit), whose ENTER came before we
// subscribed. Cold: once, at Start. A statically linked cudart is not seen (its frames are the
// program's): there the driver calls nested in that first call stay recorded as the user's.
bool InsideSharedCudart() {
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  for (int i = 0; i < n; ++i) {
    Dl_info info{};
    if (::dladdr(frames[i], &info) != 0 && info.dli_fname != nullptr &&
        std::strstr(info.dli_fname, "libcudart.so") != nullptr) {
      return true;
    }
  }
  return false;
}

size_t DomainIndex(CUpti_CallbackDomain domain) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? kRuntime : kDriver;
}

void CallHook(ApiHook hook, bool runtime, CUpti_CallbackId cbid, const CUpti_CallbackData* cb,
              uint64_t now, bool exit) noexcept {
  ApiHookEvent event{HostTicksToNsLive(now),
                     cb->functionName,
                     cb->symbolName,
                     cb->correlationId,
                     static_cast<uint16_t>(cbid),
                     runtime ? ApiDomain::kRuntime : ApiDomain::kDriver,
                     runtime ? IsRuntimeLaunchCbid(cbid) : IsDriverLaunchCbid(cbid),
                     exit};
  hook(event);
}

// The hook's EXIT call, made on every way out of the EXIT callback, after the call's record is
// stored: a window cut at this boundary (the call ends a step and belongs to it) must find it.
struct HookAtExit {
  bool runtime;
  CUpti_CallbackId cbid;
  const CUpti_CallbackData* cb;
  ~HookAtExit() {
    if (ApiHook hook = g_hook.load(std::memory_order_relaxed)) [[unlikely]] {
      CallHook(hook, runtime, cbid, cb, HostTicks(), /*exit=*/true);
    }
  }
};

}  // namespace

void NoteInjectionThread() {
  // The runtime call that made CUDA load us ends with an EXIT whose ENTER we never saw; until then
  // this thread is one call deep, and the driver calls it makes are the runtime's, not the user's.
  if (t_runtime_depth == 0 && InsideSharedCudart()) t_runtime_depth = 1;
}

void CUPTIAPI ApiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) noexcept {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    // Driver calls made inside a runtime call are the runtime's business, not the user's.
    if (runtime) {
      ++t_runtime_depth;
    } else if (t_runtime_depth > 0) {
      return;
    }
    const uint64_t now = HostTicks();
    if (cb->correlationData != nullptr) *cb->correlationData = now;
    if (ApiHook hook = g_hook.load(std::memory_order_relaxed)) [[unlikely]] {
      CallHook(hook, runtime, cbid, cb, now, /*exit=*/false);
    }
    return;
  }
  if (runtime) {
    if (t_runtime_depth > 0) --t_runtime_depth;
  } else if (t_runtime_depth > 0) {
    return;
  }
  const HookAtExit hook_at_exit{runtime, cbid, cb};
  int32_t rc = 0;  // cudaError_t and CUresult are both int-sized enums
  if (cb->functionReturnValue != nullptr) std::memcpy(&rc, cb->functionReturnValue, sizeof(rc));
  // Before the collecting check: a capture begun while collection was off still counts.
  const uint8_t flags = StreamFlags(runtime, cbid, cb->functionParams, rc);
  if (!g_collecting.load(std::memory_order_relaxed) || HostInert()) return;
  Session* s = g_session;
  DomainTables& tables = s->domains[DomainIndex(domain)];
  if (cbid >= tables.record.size() || tables.record[cbid] == 0) return;
  const uint64_t start = cb->correlationData != nullptr ? *cb->correlationData : 0;
  if (start == 0) [[unlikely]] {
    // No ENTER was seen for this call (see g_exits_without_enter): a record starting at tick 0
    // would move the trace's base time to the epoch.
    g_exits_without_enter.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint64_t end = HostTicks();
  if (tables.seen[cbid].load(std::memory_order_relaxed) == 0) {
    tables.seen[cbid].store(1, std::memory_order_relaxed);
  }
  // The record has no tid: the thread is implied by the buffer it lands in.
  const bool recorded = AppendApiRecord(start, end, cb->correlationId,
                                        static_cast<uint16_t>(cbid),
                                        runtime ? ApiDomain::kRuntime : ApiDomain::kDriver, rc,
                                        flags);
  // GPROF_BACKTRACE: taken at EXIT, after `end` was read, so the walk is not part of the call's
  // time, and only for calls that were recorded (the stack is the same as at ENTER: this
  // callback runs inside the API function's frame both times). Skips this callback's frame.
  if (tables.stack[cbid] != 0 && recorded) [[unlikely]] {
    AppendApiStackRecord(cb->correlationId, start, 1);
  }
  SampleHostCost(HostCostKind::kApiCall, end);
}

}  // namespace gprof::collector::session

namespace gprof::collector {

void SetApiHook(ApiHook hook) { session::g_hook.store(hook, std::memory_order_relaxed); }

void SetGpuCollectionEnabled(bool enabled) {
  if (!session::Ready()) return;  // see g_ready
  session::g_collecting.store(enabled, std::memory_order_relaxed);
}

}  // namespace gprof::collector
