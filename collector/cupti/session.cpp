// Implementation of gpu_collector.h's start and stop: loads libcupti, checks its version,
// subscribes, registers the buffer callbacks, enables the activity kinds and starts the parser
// thread; stops them in a safe order. The callbacks, the parser and the drain live in the other
// files of this folder; their shared state and threading rules are in session_state.h.
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "collector/cupti/api_filter.h"
#include "collector/cupti/gpu_collector.h"
#include "collector/cupti/loader.h"
#include "collector/cupti/record_structs.h"
#include "collector/cupti/session_state.h"
#include "collector/cupti/start_messages.h"
#include "collector/host/api_records.h"
#include "collector/host/native_stack.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector::session {

std::atomic<Session*> g_session{nullptr};
std::atomic<bool> g_collecting{false};
std::atomic<ApiHook> g_hook{nullptr};
std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_cupti_errors{0};
std::atomic<uint64_t> g_exits_without_enter{0};
std::atomic<bool> g_ready{false};

namespace {

// Activity kinds we enable. KERNEL would serialize kernels (REFERENCE.md §1): CONCURRENT_KERNEL.
// GRAPH_TRACE is not enabled: it replaces per-kernel records of graph launches with one record
// per graph, and kernels already carry their graph ids.
constexpr CUpti_ActivityKind kRequiredKind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
constexpr CUpti_ActivityKind kOptionalKinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,          CUPTI_ACTIVITY_KIND_MEMORY2,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
    CUPTI_ACTIVITY_KIND_DEVICE,
};

void BuildDomainTables(const CuptiApi& api, const Config& config) {
  Session* s = g_session;
  const CUpti_CallbackDomain domains[2] = {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API};
  const size_t sizes[2] = {CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE};
  for (size_t d = 0; d < 2; ++d) {
    DomainTables& t = s->domains[d];
    t.names.assign(sizes[d], std::string());
    for (size_t cbid = 1; cbid < sizes[d]; ++cbid) {
      const char* name = nullptr;
      if (api.GetCallbackName(domains[d], static_cast<uint32_t>(cbid), &name) == CUPTI_SUCCESS &&
          name != nullptr) {
        t.names[cbid] = name;
      }
    }
    t.record = BuildApiFilterTable(config.api_filter, t.names);
    t.stack = BuildBacktraceTable(config.backtrace, t.names, d == kRuntime);
    t.seen = std::make_unique<std::atomic<uint8_t>[]>(sizes[d]);
    t.gpu_work.assign(sizes[d], 0);
    for (size_t cbid = 1; cbid < sizes[d]; ++cbid) {
      const std::string_view base = BaseApiName(t.names[cbid]);
      const bool launch = d == kRuntime ? IsRuntimeLaunchCbid(static_cast<uint32_t>(cbid))
                                        : IsDriverLaunchCbid(static_cast<uint32_t>(cbid));
      t.gpu_work[cbid] = launch || base.starts_with("cudaMemcpy") ||
                         base.starts_with("cudaMemset") || base.starts_with("cuMemcpy") ||
                         base.starts_with("cuMemset");
    }
  }
}

void ReleaseFailedSession(Session* s) {
  if (s->subscriber != nullptr) s->api.Unsubscribe(s->subscriber);
  for (CUpti_ActivityKind kind : s->enabled_kinds) s->api.ActivityDisable(kind);
  s->enabled_kinds.clear();
  s->subscriber = nullptr;
  s->stopped = true;
  g_collecting.store(false, std::memory_order_relaxed);
  g_session = nullptr;  // the Session leaks on purpose: CUPTI may still hold our callbacks
}


// GPU timestamps go on the host timeline as they are: they are right only when CUPTI's clock is
// the host's (CLOCK_REALTIME here). cuptiGetTimestamp read between two host clock reads must fall
// between them; WSL, or another tool's cuptiActivityRegisterTimestampCallback, makes it differ.
void CheckClock(const CuptiApi& api, GpuStartResult* result) {
  uint64_t gpu = 0;
  const uint64_t before = NowNs();
  const CUptiResult rc = api.GetTimestamp(&gpu);
  const uint64_t after = NowNs();
  if (rc != CUPTI_SUCCESS || gpu == 0 || after < before) return;  // not checked (or clock stepped)
  result->clock_window_ns = after > before ? after - before : 1;
  result->clock_offset_ns =
      static_cast<int64_t>(gpu) - static_cast<int64_t>(before + (after - before) / 2);
  ProfileInfo probe;
  probe.cupti_clock_offset_ns = result->clock_offset_ns;
  probe.cupti_clock_window_ns = result->clock_window_ns;
  if (!CuptiClockAgrees(probe)) {
    log::Warn("CUPTI's clock is " + std::to_string(result->clock_offset_ns / 1000) +
              " us away from the host clock: GPU activity is shifted against the CPU side in the "
              "trace (another tool's timestamp callback, or a virtualized clock such as WSL's)");
  }
}

GpuStartResult Start(const Config& config, bool late) {
  GpuStartResult result;
  if (!config.cuda) {
    result.status = "GPU collection is off (GPROF_CUDA=0): only NVTX ranges are collected.";
    return result;
  }
  // dlopen and dlsym only: no call into libcupti before this point, which is inside the driver's
  // InitializeInjection (or an attach to a process that already ran CUDA).
  CuptiLoadResult load = LoadCupti(CollectSearchInputs(config.cupti_lib));
  if (!load.ok) {
    result.status = CuptiUnavailable(load, ReadCudaStack());
    return result;
  }
  result.cupti_library = load.path;
  const CuptiApi& api = load.api;
  if (!load.explicit_not_loaded.empty()) {
    log::Warn("GPROF_CUPTI_LIB=" + load.explicit_not_loaded + " is not loaded: the program already "
              "has " + load.path + ", and one process can use only one libcupti");
  }

  // Version check: config/cupti_support.h's table says which versions the decoder reads.
  uint32_t version = 0;
  CUptiResult rc = api.GetVersion(&version);
  NoteCuptiInUse(load.path, version, load.already_loaded);
  if (rc != CUPTI_SUCCESS || version == 0) {
    result.status = StartFailure(api, "cuptiGetVersion", rc == CUPTI_SUCCESS ? CUPTI_ERROR_UNKNOWN : rc);
    return result;
  }
  if (!CuptiVersionSupported(version)) {
    result.status = CuptiVersionRefused(ReadCudaStack());
    return result;
  }
  if (CuptiVersionUntested(version)) {
    log::Info("CUPTI " + CuptiVersionText(version) + " is newer than any version gprof-run's " +
              "record layouts were checked against: its records are read by their known prefix");
  }

  auto* s = new Session();  // never freed (see the file comment)
  s->api = api;
  s->path = load.path;
  s->pid = getpid();
  s->started_ns = NowNs();
  s->pool.Init(static_cast<size_t>(config.activity_buffer_kib) * 1024,
               config.activity_pool_buffers, uint64_t{config.pending_mib} << 20);
  // Decoded records count against GPROF_PENDING_MIB only where drains during the run take them
  // (segments; windows drain at their ends either way). With GPROF_SEGMENT_SECONDS=0 they are
  // the profile itself, kept until exit.
  s->count_decoded = config.segment_seconds != 0;
  g_session = s;
  BuildDomainTables(api, config);
  if (config.backtrace != 0) WarmNativeStack();  // native_stack.h: first-walk setup, here

  // Subscribe first: cuptiActivityRegisterCallbacks and the activity attributes are process-wide,
  // so touching them while another tool (torch.profiler, a DCGM/Kineto daemon) holds CUPTI would
  // replace its buffer callbacks and lose all of its records. Nothing global is changed unless
  // the subscription succeeds.
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = {0};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gprof-run";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof(holder);
  const CUpti_CallbackFunc callback = &ApiCallback;  // noexcept -> plain: a standard conversion
  rc = api.Subscribe(&s->subscriber, callback, nullptr, &params);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    holder[sizeof(holder) - 1] = '\0';
    s->subscriber = nullptr;
    result.status = "CUPTI is already used by " + FriendlyHolder(holder) +
                    " in this process: " + kNoGpuData +
                    " Run without the other profiler to get GPU data.";
    ReleaseFailedSession(s);
    return result;
  }
  if (rc != CUPTI_SUCCESS) {
    s->subscriber = nullptr;
    result.status = StartFailure(api, "cuptiSubscribe_v2", rc);
    ReleaseFailedSession(s);
    return result;
  }
  // Zeroed buffers let CUPTI skip clearing them on the app thread; the pool keeps them zeroed.
  // Older CUPTI lack the attribute: not an error.
  uint8_t one = 1;
  size_t one_size = sizeof(one);
  api.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &one_size, &one);
  // CUDA 13 defaults to per-thread activity buffers (cupti_activity.h:
  // CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, "The default value is 1"; to be set before
  // registering the buffer callbacks and before enabling any kind). Then every thread that does
  // CUDA work holds one of our pool's buffers, and a program with more CUDA threads than the pool
  // has buffers drops records. Shared buffers keep the pool's bound meaningful whatever the
  // thread count. Refused by an older CUPTI: the pool then has to cover the threads (logged).
  uint8_t zero = 0;
  size_t zero_size = sizeof(zero);
  if (api.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &zero_size, &zero) !=
      CUPTI_SUCCESS) {
    log::Debug("CUPTI kept per-thread activity buffers: each CUDA thread holds a pool buffer");
  }
  rc = api.ActivityRegisterCallbacks(&BufferRequested, &BufferCompleted);
  if (rc != CUPTI_SUCCESS) {
    result.status = StartFailure(api, "cuptiActivityRegisterCallbacks", rc);
    ReleaseFailedSession(s);
    return result;
  }
  if (!late) NoteInjectionThread();  // attach: the borrowed thread is in no CUDA call
  rc = EnableCallbacks(api, s, config);
  if (rc != CUPTI_SUCCESS) {
    result.status = StartFailure(api, "cuptiEnableDomain", rc);
    ReleaseFailedSession(s);
    return result;
  }
  rc = api.ActivityEnable(kRequiredKind);
  if (rc != CUPTI_SUCCESS) {
    result.status = StartFailure(api, "cuptiActivityEnable(CONCURRENT_KERNEL)", rc);
    ReleaseFailedSession(s);
    return result;
  }
  s->enabled_kinds.push_back(kRequiredKind);
  std::string missing_kinds;
  for (CUpti_ActivityKind kind : kOptionalKinds) {
    // DEVICE: always with the dump. CUPTI emits device records at driver initialization, and
    // InitializeInjection runs inside it (cuInit), possibly after them; "the records for CUDA
    // resources ... that are currently active" are dumped (cupti_activity.h,
    // cuptiActivityEnableAndDump). A device reported twice is kept once (KnownDevices).
    const bool dump = kind == CUPTI_ACTIVITY_KIND_DEVICE;
    if ((dump ? api.ActivityEnableAndDump(kind) : api.ActivityEnable(kind)) == CUPTI_SUCCESS) {
      s->enabled_kinds.push_back(kind);
    } else {
      missing_kinds += (missing_kinds.empty() ? "" : ", ") + std::to_string(static_cast<int>(kind));
    }
  }
  try {
    s->parser = std::thread(ParserMain, s);
  } catch (...) {
    result.status = "could not start the activity parser thread: " + std::string(kNoGpuData) +
                    " The process may be out of threads or memory.";
    ReleaseFailedSession(s);
    return result;
  }
  CheckClock(api, &result);
  {
    ProfileInfo probe;
    probe.cupti_clock_offset_ns = result.clock_offset_ns;
    probe.cupti_clock_window_ns = result.clock_window_ns;
    s->clock_agreed = CuptiClockAgrees(probe);
  }
  g_collecting.store(true, std::memory_order_relaxed);
  g_ready.store(true, std::memory_order_release);  // last step: from here the session is usable
  result.collecting = true;
  result.status = "collected";
  if (!missing_kinds.empty()) {
    log::Warn("CUPTI refused activity kinds " + missing_kinds +
              ": those records (copies, memsets, syncs, memory, overhead or devices) are missing "
              "from the profile; kernels are collected.");
  }
  log::Debug("CUPTI loaded from " + load.path + " (" + CuptiSourceName(load.source) + ")");
  return result;
}

// Order matters: no CUPTI teardown while our parser may still be inside
// cuptiActivityGetNextRecord. Kinds off (no new records), a forced flush (CUPTI hands back every
// buffer), the parser stopped and joined once it has decoded them, then unsubscribe.
// No cuptiFinalize: it tears CUPTI down under threads that may still be inside it (Kineto's crash
// reports at exit), and the one documented reason to call it, the CUDA 13.0 crash when libcupti
// is unloaded while callbacks are registered, does not apply: we never dlclose libcupti.
void Stop() {
  if (!Ready()) return;
  Session* s = g_session;
  if (s == nullptr || s->stopped || s->pid != getpid()) return;
  s->stopped = true;
  g_ready.store(false, std::memory_order_release);  // later Set*/Drain calls do nothing
  g_collecting.store(false, std::memory_order_relaxed);
  // While the program's own profiler holds CUPTI (handover.cpp) the kinds and buffers are its.
  if (!HandedOver()) {
    for (CUpti_ActivityKind kind : s->enabled_kinds) s->api.ActivityDisable(kind);
    if (s->api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS) {
      g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
    }
  }
  s->stop.store(true, std::memory_order_release);
  s->pool.Wake();
  if (s->parser.joinable()) s->parser.join();
  s->api.Unsubscribe(s->subscriber);
}

}  // namespace
}  // namespace gprof::collector::session

namespace gprof::collector {

using session::g_session;
using session::Ready;
using session::Session;

GpuStartResult StartGpuCollection(const Config& config, bool late) {
  // An attach to a process that has not started CUDA (torch on the CPU, say, whose libcupti is
  // loaded from the start): no call into its libcupti, which may not be safe before the driver
  // runs (REFERENCE.md section 1; torch 2.15's 13.2 overflows its stack in cuptiGetVersion).
  static std::atomic<bool> started{false};
  // A late start into a process whose driver has not started loads and calls nothing, and does
  // not count as the one attempt (the driver's InitializeInjection makes it later).
  if (late && !started.load() && !CudaDriverInitialized()) {
    GpuStartResult waiting;
    waiting.waiting_for_cuda = true;
    waiting.status = "waiting: the process has not started CUDA yet";
    return waiting;
  }
  if (started.exchange(true)) {
    GpuStartResult again;
    again.collecting = Ready();
    again.status = again.collecting ? "collected" : "GPU collection was already attempted";
    Session* s = g_session.load();
    again.cupti_library = s != nullptr ? s->path : "";
    return again;
  }
  try {
    return session::Start(config, late);
  } catch (...) {
    GpuStartResult failed;
    failed.status = std::string("GPU collection failed to start (out of memory?): ") + kNoGpuData;
    return failed;
  }
}

namespace {
std::atomic<bool> g_abandoned{false};  // AbandonGpuCollection
}  // namespace

void AbandonGpuCollection() { g_abandoned.store(true, std::memory_order_release); }

void DrainGpu(Profile* profile, bool forced) {
  if (g_abandoned.load(std::memory_order_acquire)) return;
  try {
    session::Drain(profile, forced);
  } catch (...) {
    log::Error("collecting GPU records failed (out of memory?): the profile lacks some GPU data.");
  }
}

void SetGpuActivityEnabled(bool enabled) {
  if (!Ready() || g_abandoned.load(std::memory_order_acquire)) return;  // see g_ready
  Session* s = g_session;
  if (s == nullptr || s->stopped || s->pid != getpid()) return;
  std::lock_guard<std::mutex> kinds(s->kinds_mu);
  if (s->activity_on == enabled) return;
  if (session::HandedOver()) {  // the program's profiler holds CUPTI: the take-back applies it
    s->activity_on = enabled;
    return;
  }
  for (CUpti_ActivityKind kind : s->enabled_kinds) {
    CUptiResult rc = enabled ? s->api.ActivityEnable(kind) : s->api.ActivityDisable(kind);
    if (rc != CUPTI_SUCCESS) session::g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
  }
  s->activity_on = enabled;
}

bool CallMakesGpuWork(const ApiCall& c) {
  if (c.return_code != 0 || (c.flags & kApiCallNoGpuWork) != 0 || !Ready()) return false;
  const Session* s = g_session;
  const auto& t = s->domains[c.domain == ApiDomain::kRuntime ? session::kRuntime : session::kDriver];
  return c.cbid < t.gpu_work.size() && t.gpu_work[c.cbid] != 0 && !session::InHandOver(c.start_ns);
}

void StopGpuCollection() {
  if (g_abandoned.load(std::memory_order_acquire)) return;
  try {
    session::Stop();
  } catch (...) {
  }
}

}  // namespace gprof::collector

