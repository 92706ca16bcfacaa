// State, knobs, injection, timeline and the API-call wrapper of the stand-in libcudart.so.13.
// Test-only. Threads: any application thread; see sim_state.h for the lock rule.
#include "tests/cudasim/cudart/sim_state.h"

#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

extern char** environ;

namespace gprof::cudasim {
namespace {

std::atomic<const CudasimToolHooks*> g_hooks{nullptr};
std::atomic<uint32_t> g_correlation{0};
std::atomic<int> g_init_state{0};  // 0 not started, 2 done
std::mutex g_init_mu;              // serializes the one-time init; InitializeInjection runs under it
thread_local bool t_in_init = false;
thread_local cudaError_t t_last_error = cudaSuccess;
std::atomic<CUcontext> g_context{nullptr};

const char* const kKnownKnobs[] = {
    "CUDASIM_API_NS",       "CUDASIM_LAUNCH_API_NS",      "CUDASIM_LAUNCH_LATENCY_NS",
    "CUDASIM_KERNEL_BASE_NS", "CUDASIM_KERNEL_PS_PER_THREAD", "CUDASIM_KERNEL_NS",
    "CUDASIM_BW_PAGEABLE_GBPS", "CUDASIM_BW_PINNED_GBPS",  "CUDASIM_BW_DTOD_GBPS",
    "CUDASIM_FLUSH_PERIOD_MS", "CUDASIM_DROP_EVERY",        "CUDASIM_MAX_BUFFERS",
    "CUDASIM_CUPTI_VERSION",  "CUDASIM_CUPTI_HOLDER",
};

uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  unsigned long long x = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0') {
    std::fprintf(stderr, "cudasim: %s=%s is not a non-negative integer; using %llu\n", name, v,
                 static_cast<unsigned long long>(fallback));
    return fallback;
  }
  return x;
}

double EnvDouble(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(x > 0)) {
    std::fprintf(stderr, "cudasim: %s=%s is not a positive number; using %g\n", name, v, fallback);
    return fallback;
  }
  return x;
}

void WarnUnknownKnobs() {
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    if (kv.rfind("CUDASIM_", 0) != 0) continue;
    std::string_view key = kv.substr(0, kv.find('='));
    bool known = false;
    for (const char* k : kKnownKnobs) known = known || key == k;
    if (!known) {
      std::fprintf(stderr, "cudasim: unknown knob %.*s (see tests/cudasim/README.md)\n",
                   static_cast<int>(key.size()), key.data());
    }
  }
}

CudasimKnobs ParseKnobs() {
  CudasimKnobs k{};
  k.api_ns = EnvU64("CUDASIM_API_NS", 1500);
  k.launch_api_ns = EnvU64("CUDASIM_LAUNCH_API_NS", 4000);
  k.launch_latency_ns = EnvU64("CUDASIM_LAUNCH_LATENCY_NS", 3000);
  k.kernel_base_ns = EnvU64("CUDASIM_KERNEL_BASE_NS", 1500);
  k.kernel_ps_per_thread = EnvU64("CUDASIM_KERNEL_PS_PER_THREAD", 50);
  k.bw_pageable_gbps = EnvDouble("CUDASIM_BW_PAGEABLE_GBPS", 12.0);
  k.bw_pinned_gbps = EnvDouble("CUDASIM_BW_PINNED_GBPS", 25.0);
  k.bw_dtod_gbps = EnvDouble("CUDASIM_BW_DTOD_GBPS", 2000.0);
  k.flush_period_ms = std::max<uint64_t>(1, EnvU64("CUDASIM_FLUSH_PERIOD_MS", 20));
  k.drop_every = EnvU64("CUDASIM_DROP_EVERY", 0);
  k.max_buffers = EnvU64("CUDASIM_MAX_BUFFERS", 0);
  k.cupti_version = static_cast<uint32_t>(EnvU64("CUDASIM_CUPTI_VERSION", CUPTI_API_VERSION));
  const char* holder = std::getenv("CUDASIM_CUPTI_HOLDER");
  k.cupti_holder = (holder != nullptr && *holder != '\0') ? strdup(holder) : nullptr;
  WarnUnknownKnobs();
  return k;
}

// CUDASIM_KERNEL_NS="substring=ns,substring=ns": fixed durations by (mangled) kernel name.
std::vector<std::pair<std::string, uint64_t>> ParseKernelOverrides() {
  std::vector<std::pair<std::string, uint64_t>> out;
  const char* v = std::getenv("CUDASIM_KERNEL_NS");
  if (v == nullptr) return out;
  std::string_view rest(v);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t eq = item.rfind('=');
    if (eq == std::string_view::npos || eq == 0) {
      std::fprintf(stderr, "cudasim: CUDASIM_KERNEL_NS item '%.*s' is not name=ns\n",
                   static_cast<int>(item.size()), item.data());
      continue;
    }
    out.emplace_back(std::string(item.substr(0, eq)),
                     std::strtoull(std::string(item.substr(eq + 1)).c_str(), nullptr, 10));
  }
  return out;
}

void FireResource(CUpti_CallbackId cbid, const void* data) {
  const CudasimToolHooks* h = Hooks();
  if (h != nullptr && h->callback_enabled(CUPTI_CB_DOMAIN_RESOURCE, cbid)) {
    h->callback(CUPTI_CB_DOMAIN_RESOURCE, cbid, data);
  }
}

void RunInjection() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path == nullptr || *path == '\0') return;
  void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "cudasim: CUDA_INJECTION64_PATH=%s cannot be loaded: %s\n", path,
                 dlerror());
    return;
  }
  using InitFn = int (*)(void);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "InitializeInjection"));
  if (init == nullptr) {
    std::fprintf(stderr, "cudasim: %s has no InitializeInjection\n", path);
    return;
  }
  init();
}

void CreateContext() {
  static int context_storage;  // the context handle only needs a unique address
  g_context.store(reinterpret_cast<CUcontext>(&context_storage));
  CUpti_ResourceData ctx{};
  ctx.context = g_context.load();
  FireResource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &ctx);
  int fatbins = 0;
  {
    std::lock_guard<std::mutex> lock(GetState().mu);
    fatbins = GetState().fatbins;
  }
  for (int i = 0; i < fatbins; ++i) {
    CUpti_ModuleResourceData module{};
    module.moduleId = static_cast<uint32_t>(i + 1);
    CUpti_ResourceData data{};
    data.context = ctx.context;
    data.resourceDescriptor = &module;
    FireResource(CUPTI_CBID_RESOURCE_MODULE_LOADED, &data);
  }
  CUpti_ActivityDevice5 device{};
  if (KindEnabled(CUPTI_ACTIVITY_KIND_DEVICE) && cudasim_fill_device_record(&device)) {
    EmitRecord(&device, sizeof(device), 0);
  }
}

}  // namespace

State& GetState() {
  static State* state = [] {
    auto* s = new State();  // never freed: in use until the last atexit handler
    s->legacy.id = 7;
    s->kernel_overrides = ParseKernelOverrides();
    return s;
  }();
  return *state;
}

const CudasimKnobs& Knobs() {
  static const CudasimKnobs* knobs = new CudasimKnobs(ParseKnobs());
  return *knobs;
}

const CudasimToolHooks* Hooks() { return g_hooks.load(std::memory_order_acquire); }

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void EnsureInitialized() {
  if (g_init_state.load(std::memory_order_acquire) == 2 || t_in_init) return;
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (g_init_state.load(std::memory_order_relaxed) == 2) return;
  t_in_init = true;  // runtime calls made by InitializeInjection itself must not re-enter
  (void)Knobs();
  RunInjection();
  CreateContext();
  t_in_init = false;
  g_init_state.store(2, std::memory_order_release);
}

void WaitUntil(uint64_t t_ns) {
  for (;;) {
    uint64_t now = NowNs();
    if (now >= t_ns) return;
    uint64_t left = t_ns - now;
    if (left > 200000) {
      timespec ts{};
      uint64_t nap = left - 100000;
      ts.tv_sec = static_cast<time_t>(nap / 1000000000ull);
      ts.tv_nsec = static_cast<long>(nap % 1000000000ull);
      nanosleep(&ts, nullptr);
    } else if (left > 20000) {
      sched_yield();
    }
  }
}

Stream* ResolveStreamLocked(State& s, cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
    return &s.legacy;
  }
  auto* st = reinterpret_cast<Stream*>(stream);
  return s.streams.count(st) != 0 ? st : nullptr;
}

uint64_t EnqueueLocked(State& s, Stream* stream, uint64_t earliest, uint64_t duration) {
  uint64_t start = std::max(earliest, stream->tail_ns);
  if (stream == &s.legacy) {
    for (Stream* other : s.streams) {
      if (other->blocking) start = std::max(start, other->tail_ns);
    }
  } else if (stream->blocking) {
    start = std::max(start, s.legacy.tail_ns);
  }
  stream->tail_ns = start + duration;
  return start;
}

uint64_t DeviceTailLocked(State& s) {
  uint64_t tail = s.legacy.tail_ns;
  for (Stream* st : s.streams) tail = std::max(tail, st->tail_ns);
  return tail;
}

CUpti_ActivityMemoryKind MemoryKindLocked(State& s, const void* ptr) {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = s.allocations.upper_bound(p);
  if (it != s.allocations.begin()) {
    --it;
    if (p < it->first + std::max<size_t>(it->second.size, 1)) return it->second.kind;
  }
  return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
}

void SetLastError(cudaError_t err) {
  if (err != cudaSuccess) t_last_error = err;
}

bool KindEnabled(CUpti_ActivityKind kind) {
  const CudasimToolHooks* h = Hooks();
  return h != nullptr && h->kind_enabled(kind);
}

void EmitRecord(const void* record, size_t size, uint64_t complete_ns) {
  const CudasimToolHooks* h = Hooks();
  auto* r = static_cast<const CUpti_Activity*>(record);
  if (h != nullptr && h->kind_enabled(r->kind)) h->record(r, size, complete_ns);
}

ApiCall::ApiCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
                 const void* params, uint64_t host_ns, const char* symbol)
    : domain_(domain), cbid_(cbid), name_(name), params_(params), symbol_(symbol),
      host_ns_(host_ns), correlation_id_(g_correlation.fetch_add(1) + 1), start_ns_(NowNs()) {
  const CudasimToolHooks* h = Hooks();
  if (h != nullptr && h->callback_enabled(domain_, cbid_)) {
    CUpti_CallbackData cb{};
    cb.callbackSite = CUPTI_API_ENTER;
    cb.functionName = name_;
    cb.functionParams = params_;
    cb.symbolName = symbol_;
    cb.context = g_context.load();
    cb.contextUid = cb.context != nullptr ? 1 : 0;
    cb.correlationData = &correlation_data_;
    cb.correlationId = correlation_id_;
    h->callback(domain_, cbid_, &cb);
  }
}

int ApiCall::Finish(int result, bool sets_last_error) {
  WaitUntil(start_ns_ + host_ns_);
  const CudasimToolHooks* h = Hooks();
  if (h != nullptr && h->callback_enabled(domain_, cbid_)) {
    CUpti_CallbackData cb{};
    cb.callbackSite = CUPTI_API_EXIT;
    cb.functionName = name_;
    cb.functionParams = params_;
    cb.functionReturnValue = &result;
    cb.symbolName = symbol_;
    cb.context = g_context.load();
    cb.contextUid = cb.context != nullptr ? 1 : 0;
    cb.correlationData = &correlation_data_;
    cb.correlationId = correlation_id_;
    h->callback(domain_, cbid_, &cb);
  }
  CUpti_ActivityKind kind = domain_ == CUPTI_CB_DOMAIN_DRIVER_API ? CUPTI_ACTIVITY_KIND_DRIVER
                                                                   : CUPTI_ACTIVITY_KIND_RUNTIME;
  uint64_t end = NowNs();
  if (h != nullptr && h->kind_enabled(kind)) {
    CUpti_ActivityAPI rec{};
    rec.kind = kind;
    rec.cbid = cbid_;
    rec.start = start_ns_;
    rec.end = end;
    rec.processId = static_cast<uint32_t>(getpid());
    rec.threadId = h->thread_id();
    rec.correlationId = correlation_id_;
    rec.returnValue = static_cast<uint32_t>(result);
    h->record(reinterpret_cast<const CUpti_Activity*>(&rec), sizeof(rec), end);
  }
  if (h != nullptr && domain_ == CUPTI_CB_DOMAIN_RUNTIME_API) h->api_exit(correlation_id_);
  if (domain_ == CUPTI_CB_DOMAIN_RUNTIME_API && sets_last_error) SetLastError(static_cast<cudaError_t>(result));
  return result;
}

cudaError_t TakeLastError(bool reset) {
  cudaError_t e = t_last_error;
  if (reset) t_last_error = cudaSuccess;
  return e;
}

}  // namespace gprof::cudasim

using namespace gprof::cudasim;

extern "C" {

void cudasim_set_tool_hooks(const CudasimToolHooks* hooks) {
  g_hooks.store(hooks, std::memory_order_release);
}

const CudasimKnobs* cudasim_knobs(void) { return &Knobs(); }

uint64_t cudasim_now_ns(void) { return NowNs(); }

uint32_t cudasim_next_correlation_id(void) { return g_correlation.fetch_add(1) + 1; }

CUcontext cudasim_current_context(void) { return g_context.load(); }

uint32_t cudasim_stream_id(CUstream stream) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  Stream* st = ResolveStreamLocked(s, reinterpret_cast<cudaStream_t>(stream));
  return st != nullptr ? st->id : 0;
}

void cudasim_unimplemented(const char* function_name) {
  std::fprintf(stderr,
               "cudasim: %s is not implemented by the CUDA/CUPTI stand-in (tests/cudasim); "
               "implement it or stop calling it\n",
               function_name);
  std::fflush(stderr);
  std::abort();
}

}  // extern "C"
