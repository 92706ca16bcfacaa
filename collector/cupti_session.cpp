// Implementation of gpu_collector.h: the CUPTI session (subscription, API callbacks, activity
// buffers, parser thread, drain into a Profile).
//
// Threads and rules (this file runs inside the profiled process):
//   Start/Drain/Stop      - cold: the injection thread, the atexit handler, the window thread.
//                           Allocation and logging are fine; never concurrent with each other.
//                           Start publishes g_session early (the buffer callbacks need it) but the
//                           session is usable only once g_ready is set (Start's last step); Drain,
//                           Stop and the Set* calls check it first.
//   SetGpuActivityEnabled - the window thread only; may run while Start runs on the injection
//   SetGpuCollectionEnabled thread: before g_ready they do nothing (no CUPTI call, no Session
//                           access, g_collecting untouched); see g_ready for why that loses
//                           nothing.
//   ApiCallback           - every application thread that calls CUDA. Hot path: no allocation,
//                           locks, logging, exceptions or I/O. One relaxed load says whether to
//                           record; one table lookup applies the API filter.
//   BufferRequested/Completed - CUPTI threads or the app thread that fills a buffer (see
//                           activity_pool.h): lock-free; Completed also reads CUPTI's dropped-record
//                           count, as CUPTI requires, holding none of our locks.
//   ParserMain            - our own thread: decodes completed buffers (allocation is fine).
// Lock order: Session::ready_mu is the only lock. It is never held while calling into CUPTI
// (the parser decodes, which calls cuptiActivityGetNextRecord, before taking it).
// Nothing here is destroyed at exit: the session lives until the process ends.
#include "collector/gpu_collector.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/activity_decoder.h"
#include "collector/activity_pool.h"
#include "collector/api_records.h"
#include "collector/cupti_api_filter.h"
#include "collector/cupti_hooks.h"
#include "collector/cupti_loader.h"
#include "collector/cupti_structs.h"
#include "collector/host_clock.h"
#include "collector/host_collection.h"
#include "collector/thread_buffer.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector {
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

constexpr size_t kRuntime = 0;  // index of per-domain tables
constexpr size_t kDriver = 1;

struct DomainTables {
  std::vector<std::string> names;                // cbid -> CUPTI name
  std::vector<uint8_t> record;                   // cbid -> 1 when recorded (API filter)
  std::unique_ptr<std::atomic<uint8_t>[]> seen;  // cbid -> 1 once recorded (for api_names)
};

struct Session {
  CuptiApi api;
  std::string path;
  pid_t pid = 0;  // a forked child (no parser thread there) must not drain or stop
  CUpti_SubscriberHandle subscriber = nullptr;
  ActivityBufferPool pool;
  DomainTables domains[2];
  std::vector<CUpti_ActivityKind> enabled_kinds;
  std::thread parser;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> processed{0};  // buffers parsed and released
  std::mutex ready_mu;  // guards `ready`. Taken by the parser and by DrainGpu; never held while
                        // calling into CUPTI. No other lock is taken while holding it.
  std::vector<GpuBatch> ready;
  bool stopped = false;
  // Start, then (after g_ready, which hands it over) the window thread only.
  bool activity_on = true;
  bool logged_exits_without_enter = false;
  // Devices seen so far (CUPTI reports each once); every drained profile gets all of them.
  std::vector<std::pair<DeviceInfo, std::string>> devices;
  bool warned_errors = false;
  // Counter values already handed to a profile (windows get deltas).
  uint64_t reported_dropped = 0;
  uint64_t reported_refused = 0;
  uint64_t reported_errors = 0;
};

// Constant-initialized globals: no constructor runs when the library is loaded.
std::atomic<Session*> g_session{nullptr};  // set once by Start; never freed
std::atomic<bool> g_collecting{false};   // "is collection on?" (relaxed loads only)
std::atomic<ApiHook> g_hook{nullptr};
std::atomic<uint64_t> g_dropped{0};       // cuptiActivityGetNumDroppedRecords, summed
std::atomic<uint64_t> g_cupti_errors{0};  // CUPTI calls that failed mid-run
// API exits with no enter: the call during which we subscribed (InitializeInjection runs inside
// the application's first CUDA call, so its EXIT arrives with correlationData still 0). An
// artefact of subscribing mid-call, not lost user data: skipped, counted, logged once (debug).
std::atomic<uint64_t> g_exits_without_enter{0};

// Start's last step stores true (release); Drain, Stop and the Set* calls load it (acquire) and do
// nothing before it, so nothing walks enabled_kinds or calls CUPTI while Start still does. Set*
// requests made before it are dropped, not replayed: Start leaves activity and API records on
// (the safe side: the window cut trims what is not needed), and the window thread repeats its
// decision on every pass (at most 100 ms apart). Replaying a stale "off" at the end of Start
// loses the records of steps the window thread has not seen yet (the schedule tests show it).
// Stop clears it.
std::atomic<bool> g_ready{false};

bool Ready() { return g_ready.load(std::memory_order_acquire); }

// initial-exec: no __tls_get_addr (which may allocate) on the callback path.
thread_local int t_runtime_depth __attribute__((tls_model("initial-exec"))) = 0;

size_t DomainIndex(CUpti_CallbackDomain domain) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? kRuntime : kDriver;
}

// ---- Callbacks (hot path) --------------------------------------------------------------------

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
      ApiHookEvent event{HostTicksToNsLive(now),
                         cb->functionName,
                         cb->symbolName,
                         cb->correlationId,
                         static_cast<uint16_t>(cbid),
                         runtime ? ApiDomain::kRuntime : ApiDomain::kDriver,
                         runtime ? IsRuntimeLaunchCbid(cbid) : IsDriverLaunchCbid(cbid)};
      hook(event);
    }
    return;
  }
  if (runtime) {
    if (t_runtime_depth > 0) --t_runtime_depth;
  } else if (t_runtime_depth > 0) {
    return;
  }
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
  int32_t rc = 0;  // cudaError_t and CUresult are both int-sized enums
  if (cb->functionReturnValue != nullptr) std::memcpy(&rc, cb->functionReturnValue, sizeof(rc));
  if (tables.seen[cbid].load(std::memory_order_relaxed) == 0) {
    tables.seen[cbid].store(1, std::memory_order_relaxed);
  }
  // The record has no tid: the thread is implied by the buffer it lands in.
  AppendApiRecord(start, end, cb->correlationId, static_cast<uint16_t>(cbid),
                  runtime ? ApiDomain::kRuntime : ApiDomain::kDriver, rc);
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept {
  Session* s = g_session;
  *max_records = 0;  // fill the buffer
  uint8_t* b = s != nullptr ? s->pool.Acquire() : nullptr;
  // Null is allowed since CUPTI API 27: CUPTI drops (and counts) records instead of growing.
  *buffer = b;
  *size = b != nullptr ? s->pool.buffer_size() : 0;
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                              size_t valid_size) noexcept {
  Session* s = g_session;
  if (s == nullptr) return;
  size_t dropped = 0;
  if (s->api.ActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    g_dropped.fetch_add(dropped, std::memory_order_relaxed);
  } else {
    g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
  }
  if (buffer != nullptr) s->pool.Complete(buffer, valid_size);
}

// ---- Parser thread ---------------------------------------------------------------------------

void ParserMain(Session* s) {
  std::vector<ActivityBufferPool::Completed> work;
  for (;;) {
    uint32_t generation = s->pool.generation();
    work.clear();
    s->pool.TakeCompleted(&work);
    for (const ActivityBufferPool::Completed& c : work) {
      GpuBatch batch;
      uint64_t errors = 0;
      DecodeBuffer(c.buffer, c.valid_size, s->api.ActivityGetNextRecord, &batch, &errors);
      s->pool.Release(c.buffer, c.valid_size);
      if (errors != 0) g_cupti_errors.fetch_add(errors, std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> lock(s->ready_mu);
        s->ready.push_back(std::move(batch));
      }
      s->processed.fetch_add(1, std::memory_order_release);
    }
    if (!work.empty()) continue;
    if (s->stop.load(std::memory_order_acquire)) return;
    s->pool.WaitForWork(generation);
  }
}

// ---- Cold helpers ----------------------------------------------------------------------------

std::string ResultText(const CuptiApi& api, CUptiResult rc) {
  const char* text = nullptr;
  if (api.GetResultString != nullptr && api.GetResultString(rc, &text) == CUPTI_SUCCESS && text) {
    return std::string(text) + " (" + std::to_string(static_cast<int>(rc)) + ")";
  }
  return "CUPTI error " + std::to_string(static_cast<int>(rc));
}

constexpr const char* kNoGpuData = "GPU activity is not collected; NVTX ranges still are.";

bool DriverLoaded() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  return h != nullptr;  // RTLD_NOLOAD took a reference only if it was loaded; harmless
}

std::string StartFailure(const CuptiApi& api, const char* step, CUptiResult rc) {
  if (!DriverLoaded()) {
    return std::string("no CUDA driver is loaded in this process (CUPTI ") + step + ": " +
           ResultText(api, rc) + "): " + kNoGpuData +
           " Check that the NVIDIA driver is installed and a GPU is visible (nvidia-smi).";
  }
  return std::string("CUPTI could not start (") + step + ": " + ResultText(api, rc) + "): " +
         kNoGpuData + " Check that a GPU is visible (nvidia-smi) and that the driver supports "
                      "CUDA 13.";
}

// Turns CUPTI's "CUPTI for <tool>" holder name into what users call the tool.
std::string FriendlyHolder(const std::string& raw) {
  std::string lower;
  for (char c : raw) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("kineto") != std::string::npos || lower.find("torch") != std::string::npos) {
    return "torch.profiler (Kineto)";
  }
  if (lower.find("nsys") != std::string::npos || lower.find("nsight systems") != std::string::npos) {
    return "Nsight Systems (nsys)";
  }
  if (lower.find("ncu") != std::string::npos || lower.find("nsight compute") != std::string::npos) {
    return "Nsight Compute (ncu)";
  }
  if (lower.find("sanitizer") != std::string::npos) return "compute-sanitizer";
  if (lower.find("dcgm") != std::string::npos) return "DCGM";
  if (raw.empty()) return "another profiling tool";
  return raw;
}

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
    t.seen = std::make_unique<std::atomic<uint8_t>[]>(sizes[d]);
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

GpuStartResult Start(const Config& config) {
  GpuStartResult result;
  if (!config.cuda) {
    result.status = "GPU collection is off (GPROF_CUDA=0): only NVTX ranges are collected.";
    return result;
  }
  CuptiLoadResult load = LoadCupti(CollectSearchInputs(config.cupti_lib));
  if (!load.ok) {
    result.status = "CUPTI is unavailable: " + load.error + ". " + kNoGpuData +
                    " Set GPROF_CUPTI_LIB to the libcupti.so.13 of a CUDA 13.0 toolkit, or install "
                    "the nvidia-cuda-cupti wheel.";
    return result;
  }
  result.cupti_library = load.path;
  const CuptiApi& api = load.api;

  // Version check: the record layouts in cupti_structs.h belong to exactly one CUPTI API version.
  uint32_t version = 0;
  CUptiResult rc = api.GetVersion(&version);
  if (rc != CUPTI_SUCCESS || version == 0) {
    result.status = StartFailure(api, "cuptiGetVersion", rc == CUPTI_SUCCESS ? CUPTI_ERROR_UNKNOWN : rc);
    return result;
  }
  if (version != kBuiltCuptiApiVersion) {
    result.status = load.path + " is CUPTI API version " + std::to_string(version) +
                    " but gprof-run was built for version " +
                    std::to_string(kBuiltCuptiApiVersion) +
                    " (CUDA 13.0): its records would be misread, so " + kNoGpuData +
                    " Point GPROF_CUPTI_LIB at the CUDA 13.0 libcupti, or rebuild gprof-run "
                    "against this CUDA toolkit.";
    return result;
  }

  auto* s = new Session();  // never freed (see the file comment)
  s->api = api;
  s->path = load.path;
  s->pid = getpid();
  s->pool.Init(static_cast<size_t>(config.activity_buffer_kib) * 1024,
               config.activity_pool_buffers);
  g_session = s;
  BuildDomainTables(api, config);

  // Zeroed buffers let CUPTI skip clearing them on the app thread; the pool keeps them zeroed.
  // Older CUPTI lack the attribute: not an error.
  uint8_t one = 1;
  size_t one_size = sizeof(one);
  api.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &one_size, &one);

  rc = api.ActivityRegisterCallbacks(&BufferRequested, &BufferCompleted);
  if (rc != CUPTI_SUCCESS) {
    result.status = StartFailure(api, "cuptiActivityRegisterCallbacks", rc);
    ReleaseFailedSession(s);
    return result;
  }

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
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    rc = api.EnableDomain(1, s->subscriber, domain);
    if (rc != CUPTI_SUCCESS) {
      result.status = StartFailure(api, "cuptiEnableDomain", rc);
      ReleaseFailedSession(s);
      return result;
    }
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
    if (api.ActivityEnable(kind) == CUPTI_SUCCESS) {
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

// Re-interns one parsed batch into `profile`.
using ConfigIndex = std::unordered_map<LaunchConfig, uint32_t, LaunchConfigHash, LaunchConfigEqual>;

void MergeBatch(GpuBatch& batch, Profile* profile, ConfigIndex* config_index,
                std::vector<std::pair<DeviceInfo, std::string>>* devices) {
  std::vector<StringId> names(batch.strings.size());
  for (size_t i = 0; i < names.size(); ++i) {
    names[i] = profile->strings.Intern(batch.strings.Get(static_cast<StringId>(i)));
  }
  std::vector<uint32_t> configs(batch.launch_configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    const LaunchConfig& c = batch.launch_configs[i];
    auto [it, inserted] =
        config_index->try_emplace(c, static_cast<uint32_t>(profile->launch_configs.size()));
    if (inserted) profile->launch_configs.push_back(c);
    configs[i] = it->second;
  }
  for (Kernel k : batch.kernels) {
    k.name = names[k.name];
    k.launch_config = configs[k.launch_config];
    profile->kernels.push_back(k);
  }
  profile->memcpys.insert(profile->memcpys.end(), batch.memcpys.begin(), batch.memcpys.end());
  profile->memsets.insert(profile->memsets.end(), batch.memsets.begin(), batch.memsets.end());
  profile->syncs.insert(profile->syncs.end(), batch.syncs.begin(), batch.syncs.end());
  profile->memory_ops.insert(profile->memory_ops.end(), batch.memory_ops.begin(),
                             batch.memory_ops.end());
  profile->overheads.insert(profile->overheads.end(), batch.overheads.begin(),
                            batch.overheads.end());
  for (const DeviceInfo& d : batch.devices) {
    bool seen = false;
    for (const auto& old : *devices) seen = seen || old.first.id == d.id;
    if (!seen) devices->emplace_back(d, std::string(batch.strings.Get(d.name)));
  }
  profile->counters.records_unknown_kind += batch.records_unknown_kind;
}

// Every device seen so far, in every profile (a window after the first still names its GPU).
void AddDevices(const std::vector<std::pair<DeviceInfo, std::string>>& devices, Profile* profile) {
  for (const auto& [info, name] : devices) {
    bool seen = false;
    for (const DeviceInfo& old : profile->devices) seen = seen || old.id == info.id;
    if (seen) continue;
    DeviceInfo d = info;
    d.name = profile->strings.Intern(name);
    profile->devices.push_back(d);
  }
}

template <typename Rec>
uint64_t CountUnlinked(const std::vector<Rec>& records, size_t first,
                       const std::unordered_set<uint32_t>& ids) {
  uint64_t n = 0;
  for (size_t i = first; i < records.size(); ++i) {
    if (records[i].correlation_id == 0 || ids.count(records[i].correlation_id) == 0) ++n;
  }
  return n;
}

void AddApiNames(Session* s, Profile* profile) {
  std::unordered_set<uint32_t> have;
  for (const ApiName& n : profile->api_names) {
    have.insert(static_cast<uint32_t>(n.domain) << 16 | n.cbid);
  }
  const ApiDomain domains[2] = {ApiDomain::kRuntime, ApiDomain::kDriver};
  for (size_t d = 0; d < 2; ++d) {
    DomainTables& t = s->domains[d];
    for (size_t cbid = 0; cbid < t.names.size(); ++cbid) {
      if (t.seen[cbid].load(std::memory_order_relaxed) == 0) continue;
      uint32_t key = static_cast<uint32_t>(domains[d]) << 16 | static_cast<uint32_t>(cbid);
      if (!have.insert(key).second) continue;
      ApiName name{};
      name.cbid = static_cast<uint16_t>(cbid);
      name.domain = domains[d];
      std::string_view text = DisplayApiName(t.names[cbid]);
      name.name = profile->strings.Intern(text.empty() ? std::string_view("cbid_" + std::to_string(cbid))
                                                       : text);
      profile->api_names.push_back(name);
    }
  }
}

void Drain(Profile* profile, bool forced) {
  if (!Ready()) return;  // Start has not finished (or failed, or Stop ran)
  Session* s = g_session;
  if (s == nullptr || s->stopped || s->pid != getpid()) return;
  CUptiResult rc = s->api.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  if (rc != CUPTI_SUCCESS) {
    g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
    log::Debug("cuptiActivityFlushAll failed: " + ResultText(s->api, rc));
  }
  // Records dropped after the last completed buffer (no completion callback read them yet): ask
  // once more for the global queue (context NULL). Reset on read, so nothing is counted twice.
  size_t late_dropped = 0;
  if (s->api.ActivityGetNumDroppedRecords(nullptr, 0, &late_dropped) == CUPTI_SUCCESS) {
    g_dropped.fetch_add(late_dropped, std::memory_order_relaxed);
  }
  // The flush hands back completed buffers before it returns; wait for the parser to decode them.
  // Bounded: a wedged parser must not hang the program's exit.
  const uint64_t target = s->pool.completed();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (s->processed.load(std::memory_order_acquire) < target &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::vector<GpuBatch> ready;
  {
    std::lock_guard<std::mutex> lock(s->ready_mu);
    ready.swap(s->ready);
  }
  const size_t first_kernel = profile->kernels.size();
  const size_t first_memcpy = profile->memcpys.size();
  const size_t first_memset = profile->memsets.size();
  uint64_t uncorrelated_ids_zero = 0;
  ConfigIndex config_index;
  for (size_t i = 0; i < profile->launch_configs.size(); ++i) {
    config_index.try_emplace(profile->launch_configs[i], static_cast<uint32_t>(i));
  }
  uint64_t bad_timestamps = 0;
  for (GpuBatch& batch : ready) {
    uncorrelated_ids_zero += batch.records_uncorrelated;
    bad_timestamps += batch.records_bad_timestamps;
    MergeBatch(batch, profile, &config_index, &s->devices);
  }
  // Records CUPTI delivered with broken timestamps were dropped by the decoder: a CUPTI-side
  // error, counted (and warned about) with the others.
  if (bad_timestamps != 0) g_cupti_errors.fetch_add(bad_timestamps, std::memory_order_relaxed);
  const uint64_t exits_without_enter = g_exits_without_enter.load(std::memory_order_relaxed);
  if (exits_without_enter != 0 && !s->logged_exits_without_enter) {
    s->logged_exits_without_enter = true;
    log::Debug(std::to_string(exits_without_enter) +
               " CUDA API call(s) ended without a recorded start (the call during which gprof-run "
               "subscribed to CUPTI): not recorded.");
  }
  AddDevices(s->devices, profile);
  // A GPU record is linked when its correlation id belongs to a recorded API call. The API calls
  // are host records: when the profile builder already placed them, check against them; else
  // only a zero id is known to be unlinked.
  if (!profile->api_calls.empty()) {
    std::unordered_set<uint32_t> ids;
    ids.reserve(profile->api_calls.size());
    for (const ApiCall& c : profile->api_calls) ids.insert(c.correlation_id);
    profile->counters.gpu_records_uncorrelated += CountUnlinked(profile->kernels, first_kernel, ids) +
                                                  CountUnlinked(profile->memcpys, first_memcpy, ids) +
                                                  CountUnlinked(profile->memsets, first_memset, ids);
  } else {
    profile->counters.gpu_records_uncorrelated += uncorrelated_ids_zero;
  }
  AddApiNames(s, profile);

  const uint64_t dropped = g_dropped.load(std::memory_order_relaxed);
  const uint64_t refused = s->pool.refused();
  const uint64_t errors = g_cupti_errors.load(std::memory_order_relaxed);
  profile->counters.cupti_dropped_records += dropped - s->reported_dropped;
  profile->counters.cupti_buffers_refused += refused - s->reported_refused;
  profile->counters.cupti_errors += errors - s->reported_errors;
  if (dropped != s->reported_dropped || refused != s->reported_refused) {
    log::Warn(std::to_string(dropped - s->reported_dropped) +
              " CUPTI activity records were dropped (" + std::to_string(refused - s->reported_refused) +
              " buffer requests refused: all " + std::to_string(s->pool.capacity()) + " buffers of " +
              std::to_string(s->pool.buffer_size() / 1024) +
              " KiB were in use): that GPU activity is missing from the profile, and the count "
              "is in the outputs. Raise GPROF_ACTIVITY_POOL or GPROF_ACTIVITY_BUFFER_KIB to keep it.");
  }
  s->reported_dropped = dropped;
  s->reported_refused = refused;
  s->reported_errors = errors;
  if (errors != 0 && !s->warned_errors) {
    s->warned_errors = true;
    log::Warn("CUPTI reported " + std::to_string(errors) +
              " error(s) during the run: some GPU activity may be missing from the profile (the "
              "count is in the outputs). Rerun with GPROF_LOG_LEVEL=debug for details.");
  }
}

// Order matters: no CUPTI teardown while our parser may still be inside
// cuptiActivityGetNextRecord. Kinds off (no new records), a forced flush (CUPTI hands back every
// buffer), the parser stopped and joined once it has decoded them, then unsubscribe and finalize.
void Stop() {
  if (!Ready()) return;
  Session* s = g_session;
  if (s == nullptr || s->stopped || s->pid != getpid()) return;
  s->stopped = true;
  g_ready.store(false, std::memory_order_release);  // later Set*/Drain calls do nothing
  g_collecting.store(false, std::memory_order_relaxed);
  for (CUpti_ActivityKind kind : s->enabled_kinds) s->api.ActivityDisable(kind);
  if (s->api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS) {
    g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
  }
  s->stop.store(true, std::memory_order_release);
  s->pool.Wake();
  if (s->parser.joinable()) s->parser.join();
  s->api.Unsubscribe(s->subscriber);
  // 13.0/13.1 can crash at unload without cuptiFinalize (REFERENCE.md §1).
  s->api.Finalize();
}

}  // namespace

GpuStartResult StartGpuCollection(const Config& config) {
  static std::atomic<bool> started{false};
  if (started.exchange(true)) {
    GpuStartResult again;
    again.collecting = Ready();
    again.status = again.collecting ? "collected" : "GPU collection was already attempted";
    Session* s = g_session.load();
    again.cupti_library = s != nullptr ? s->path : "";
    return again;
  }
  try {
    return Start(config);
  } catch (...) {
    GpuStartResult failed;
    failed.status = std::string("GPU collection failed to start (out of memory?): ") + kNoGpuData;
    return failed;
  }
}

void DrainGpu(Profile* profile, bool forced) {
  try {
    Drain(profile, forced);
  } catch (...) {
    log::Error("collecting GPU records failed (out of memory?): the profile lacks some GPU data.");
  }
}

void SetGpuCollectionEnabled(bool enabled) {
  if (!Ready()) return;  // see g_ready
  g_collecting.store(enabled, std::memory_order_relaxed);
}

void SetGpuActivityEnabled(bool enabled) {
  if (!Ready()) return;  // see g_ready
  Session* s = g_session;
  if (s == nullptr || s->stopped || s->pid != getpid() || s->activity_on == enabled) return;
  for (CUpti_ActivityKind kind : s->enabled_kinds) {
    CUptiResult rc = enabled ? s->api.ActivityEnable(kind) : s->api.ActivityDisable(kind);
    if (rc != CUPTI_SUCCESS) g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
  }
  s->activity_on = enabled;
}

void StopGpuCollection() {
  try {
    Stop();
  } catch (...) {
  }
}

void SetApiHook(ApiHook hook) { g_hook.store(hook, std::memory_order_relaxed); }

}  // namespace gprof::collector
