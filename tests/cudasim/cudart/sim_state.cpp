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
#include <string>
#include <string_view>
#include <thread>

extern char** environ;

namespace gprof::cudasim {
namespace {

std::atomic<const CudasimToolHooks*> g_hooks{nullptr};
std::atomic<uint32_t> g_correlation{0};
std::atomic<int> g_init_state{0};  // 0 not started, 2 done
std::atomic<bool> g_injection_started{false};  // cudasim_injection_started
std::mutex g_init_mu;              // serializes the one-time init; InitializeInjection runs under it
thread_local bool t_in_init = false;
thread_local cudaError_t t_last_error = cudaSuccess;
std::atomic<CUcontext> g_context{nullptr};

const char* const kKnownKnobs[] = {
    "CUDASIM_API_NS",       "CUDASIM_LAUNCH_API_NS",      "CUDASIM_LAUNCH_LATENCY_NS",
    "CUDASIM_KERNEL_BASE_NS", "CUDASIM_KERNEL_PS_PER_THREAD", "CUDASIM_KERNEL_NS",
    "CUDASIM_BW_PAGEABLE_GBPS", "CUDASIM_BW_PINNED_GBPS",  "CUDASIM_BW_DTOD_GBPS",
    "CUDASIM_FLUSH_PERIOD_MS", "CUDASIM_DROP_EVERY",        "CUDASIM_MAX_BUFFERS",
    "CUDASIM_CUPTI_VERSION",  "CUDASIM_CUPTI_HOLDER",      "CUDASIM_BUFFER_MODE",
    "CUDASIM_PER_THREAD_BUFFERS", "CUDASIM_INCOMPLETE_RECORDS", "CUDASIM_NESTED_DRIVER",
    "CUDASIM_INJECT_IN_FIRST_CALL", "CUDASIM_LOAD_DRIVER", "CUDASIM_CUPTI_BEFORE_DRIVER",
    "CUDASIM_SYMBOL_NAME_REUSE", "CUDASIM_TIMESTAMP_CALLBACK", "CUDASIM_GPU_SKEW_NS",
    "CUDASIM_SIGNAL_IN_CUPTI", "CUDASIM_EMPTY_COPY_RECORDS",
    "CUDASIM_DEVICE_RECORD_BEFORE_INJECTION",
};

// Where knob values come from: the process environment, or (tests) a list of NAME=value lines.
class KnobSource {
 public:
  explicit KnobSource(const char* lines) {
    if (lines == nullptr) {
      for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        if (std::strncmp(*e, "CUDASIM_", 8) == 0) entries_.emplace_back(*e);
      }
      return;
    }
    std::string_view rest(lines);
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      if (!line.empty()) entries_.emplace_back(line);
    }
  }
  const char* Get(const char* name) const {
    size_t n = std::strlen(name);
    for (const std::string& e : entries_) {
      if (e.size() > n && e.compare(0, n, name) == 0 && e[n] == '=') return e.c_str() + n + 1;
    }
    return nullptr;
  }
  void WarnUnknown() const {
    for (const std::string& e : entries_) {
      std::string_view key = std::string_view(e).substr(0, e.find('='));
      if (key.rfind("CUDASIM_", 0) != 0) continue;
      bool known = false;
      for (const char* k : kKnownKnobs) known = known || key == k;
      if (!known) {
        std::fprintf(stderr, "cudasim: unknown knob %.*s (see tests/cudasim/README.md)\n",
                     static_cast<int>(key.size()), key.data());
      }
    }
  }

 private:
  std::vector<std::string> entries_;
};

uint64_t EnvU64(const KnobSource& src, const char* name, uint64_t fallback) {
  const char* v = src.Get(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  unsigned long long x = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || *v == '-') {
    std::fprintf(stderr, "cudasim: %s=%s is not a non-negative integer; using %llu\n", name, v,
                 static_cast<unsigned long long>(fallback));
    return fallback;
  }
  return x;
}

int64_t EnvI64(const KnobSource& src, const char* name, int64_t fallback) {
  const char* v = src.Get(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0') {
    std::fprintf(stderr, "cudasim: %s=%s is not an integer; using %lld\n", name, v,
                 static_cast<long long>(fallback));
    return fallback;
  }
  return x;
}

double EnvDouble(const KnobSource& src, const char* name, double fallback) {
  const char* v = src.Get(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(x > 0)) {
    std::fprintf(stderr, "cudasim: %s=%s is not a positive number; using %g\n", name, v, fallback);
    return fallback;
  }
  return x;
}

bool EnvBool(const KnobSource& src, const char* name, bool fallback) {
  return EnvU64(src, name, fallback ? 1 : 0) != 0;
}

// A knob whose value is one of `names` (index = value).
uint32_t EnvChoice(const KnobSource& src, const char* name, std::initializer_list<const char*> names,
                   uint32_t fallback) {
  const char* v = src.Get(name);
  if (v == nullptr || *v == '\0') return fallback;
  uint32_t i = 0;
  for (const char* n : names) {
    if (std::strcmp(v, n) == 0) return i;
    ++i;
  }
  std::fprintf(stderr, "cudasim: %s=%s is not one of the documented values; using %s\n", name, v,
               names.begin()[fallback]);
  return fallback;
}

// CUDASIM_SIGNAL_IN_CUPTI=SIG:N (fault; README "Knobs"): a signal number and a record count.
void ParseSignalInCupti(const KnobSource& src, CudasimKnobs* k) {
  const char* v = src.Get("CUDASIM_SIGNAL_IN_CUPTI");
  if (v == nullptr || *v == '\0') return;
  char* end = nullptr;
  const long sig = std::strtol(v, &end, 10);
  const unsigned long long n = *end == ':' ? std::strtoull(end + 1, &end, 10) : 0;
  if (sig <= 0 || sig >= 65 || n == 0 || *end != '\0') {
    std::fprintf(stderr, "cudasim: CUDASIM_SIGNAL_IN_CUPTI=%s is not SIGNAL:RECORD; ignored\n", v);
    return;
  }
  k->signal_in_cupti = static_cast<int>(sig);
  k->signal_at_record = n;
}

CudasimKnobs ParseKnobs(const KnobSource& src) {
  CudasimKnobs k{};
  k.api_ns = EnvU64(src, "CUDASIM_API_NS", 1500);
  k.launch_api_ns = EnvU64(src, "CUDASIM_LAUNCH_API_NS", 4000);
  k.launch_latency_ns = EnvU64(src, "CUDASIM_LAUNCH_LATENCY_NS", 3000);
  k.kernel_base_ns = EnvU64(src, "CUDASIM_KERNEL_BASE_NS", 1500);
  k.kernel_ps_per_thread = EnvU64(src, "CUDASIM_KERNEL_PS_PER_THREAD", 50);
  k.bw_pageable_gbps = EnvDouble(src, "CUDASIM_BW_PAGEABLE_GBPS", 12.0);
  k.bw_pinned_gbps = EnvDouble(src, "CUDASIM_BW_PINNED_GBPS", 25.0);
  k.bw_dtod_gbps = EnvDouble(src, "CUDASIM_BW_DTOD_GBPS", 2000.0);
  k.flush_period_ms = std::max<uint64_t>(1, EnvU64(src, "CUDASIM_FLUSH_PERIOD_MS", 20));
  k.drop_every = EnvU64(src, "CUDASIM_DROP_EVERY", 0);
  k.max_buffers = EnvU64(src, "CUDASIM_MAX_BUFFERS", 0);
  k.cupti_version = static_cast<uint32_t>(EnvU64(src, "CUDASIM_CUPTI_VERSION", CUPTI_API_VERSION));
  const char* holder = src.Get("CUDASIM_CUPTI_HOLDER");
  k.cupti_holder = (holder != nullptr && *holder != '\0') ? strdup(holder) : nullptr;
  // Defaults below follow CUPTI's documentation (README "Knobs" cites each); where that default
  // is pending a product fix the README says so.
  k.buffer_mode = EnvChoice(src, "CUDASIM_BUFFER_MODE", {"cupti", "staged"}, kCuptiBuffers);
  k.per_thread_buffers = EnvBool(src, "CUDASIM_PER_THREAD_BUFFERS", true);
  k.incomplete_records = EnvBool(src, "CUDASIM_INCOMPLETE_RECORDS", true);
  k.nested_driver = EnvBool(src, "CUDASIM_NESTED_DRIVER", true);
  // The real driver calls InitializeInjection at cuInit, which the runtime runs lazily inside the
  // program's first runtime call, after that call's entry: its ENTER callback found no subscriber,
  // its nested driver calls and its EXIT come after. 1 (the default) does that inside the call
  // (the CUDASIM_RUNTIME_CALL entry points and launches); 0 injects before the first call.
  k.inject_in_first_call = EnvBool(src, "CUDASIM_INJECT_IN_FIRST_CALL", true);
  // The real libcudart dlopens libcuda.so.1 in its first call and runs cuInit, whose driver then
  // runs InitializeInjection: a process that has started CUDA has the driver loaded. 0 plays a
  // machine without a driver for a real libcupti that the test loads beside the stand-in.
  k.load_driver = EnvBool(src, "CUDASIM_LOAD_DRIVER", true);
  // A CUPTI call before the driver's init: "auto" aborts where CUDA_INJECTION64_PATH is set (as
  // torch 2.15's libcupti 13.2 overflows its stack in a process with no driver), else answers.
  k.cupti_before_driver = EnvChoice(src, "CUDASIM_CUPTI_BEFORE_DRIVER", {"auto", "abort", "answer"},
                                    kBeforeDriverAuto);
  // Faithful default is 1 (README "Knobs"); 0 until the product stops keying its kernel-name cache
  // by the symbolName pointer (Schedule.KernelLaunchesAsSteps fails with 1).
  k.symbol_name_reuse = EnvBool(src, "CUDASIM_SYMBOL_NAME_REUSE", true);
  k.timestamp_clock = EnvChoice(src, "CUDASIM_TIMESTAMP_CALLBACK", {"none", "tsc"}, kClockCupti);
  k.gpu_skew_ns = EnvI64(src, "CUDASIM_GPU_SKEW_NS", 0);
  ParseSignalInCupti(src, &k);
  k.empty_copy_records = EnvBool(src, "CUDASIM_EMPTY_COPY_RECORDS", true);
  k.device_record_before_injection = EnvBool(src, "CUDASIM_DEVICE_RECORD_BEFORE_INJECTION", false);
  src.WarnUnknown();
  return k;
}

std::atomic<const CudasimKnobs*> g_knobs{nullptr};

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

// libcudart's dlopen of the driver: the stand-in's libcuda.so.1, in lib-driver/ beside the
// folder this library was loaded from (tests/cudasim/CMakeLists.txt). Never unloaded.
void LoadDriver() {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&LoadDriver), &self) == 0 || self.dli_fname == nullptr) return;
  std::string path = self.dli_fname;
  const size_t slash = path.rfind('/');
  path = (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) +
         "/../lib-driver/libcuda.so.1";
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::fprintf(stderr, "cudasim: the stand-in driver %s cannot be loaded: %s\n", path.c_str(),
                 dlerror());
  }
}

// "Device records are emitted in CUPTI on CUDA driver initialization" (cupti_activity.h,
// cuptiActivityEnableAndDump), to a tool that enabled DEVICE by then.
void EmitDeviceRecord() {
  CUpti_ActivityDevice5 device{};
  if (KindEnabled(CUPTI_ACTIVITY_KIND_DEVICE) && cudasim_fill_device_record(&device)) {
    EmitRecord(&device, sizeof(device), 0);
  }
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
  if (!Knobs().device_record_before_injection) EmitDeviceRecord();
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
  const CudasimKnobs* k = g_knobs.load(std::memory_order_acquire);
  if (k != nullptr) return *k;
  auto* parsed = new CudasimKnobs(ParseKnobs(KnobSource(nullptr)));  // never freed
  if (!g_knobs.compare_exchange_strong(k, parsed, std::memory_order_acq_rel)) return *k;
  return *parsed;
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
  if (Knobs().load_driver) LoadDriver();
  g_injection_started.store(true, std::memory_order_release);
  if (Knobs().device_record_before_injection) EmitDeviceRecord();
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

namespace {
// symbolName storage when CUDASIM_SYMBOL_NAME_REUSE=1: one buffer per thread, overwritten by every
// callback and poisoned after it returns. cupti_callbacks.h (CUpti_CallbackData): "The callback
// data is valid only within the invocation of the callback function"; only functionName is
// promised to be a global constant, symbolName is not.
thread_local char t_symbol_storage[512];
constexpr const char kReusedSymbol[] = "_Z27cudasim_symbolName_was_reusedv";
}  // namespace

ApiCall::ApiCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name,
                 const void* params, uint64_t host_ns, const char* symbol, Nesting nesting)
    : domain_(domain), cbid_(cbid), name_(name), params_(params), symbol_(symbol),
      host_ns_(host_ns),
      active_(nesting == kTopLevel || Knobs().nested_driver),
      correlation_id_(active_ ? g_correlation.fetch_add(1) + 1 : 0),
      start_ns_(NowNs()) {
  Fire(CUPTI_API_ENTER, nullptr);
  submit_ns_ = NowNs();
}

void ApiCall::Fire(CUpti_ApiCallbackSite site, int* result) {
  const CudasimToolHooks* h = Hooks();
  if (!active_ || h == nullptr || !h->callback_enabled(domain_, cbid_)) return;
  const bool reuse = symbol_ != nullptr && Knobs().symbol_name_reuse;
  CUpti_CallbackData cb{};
  cb.callbackSite = site;
  cb.functionName = name_;
  cb.functionParams = params_;
  cb.functionReturnValue = result;
  cb.symbolName = symbol_;
  if (reuse) {
    std::snprintf(t_symbol_storage, sizeof(t_symbol_storage), "%s", symbol_);
    cb.symbolName = t_symbol_storage;
  }
  cb.context = g_context.load();
  cb.contextUid = cb.context != nullptr ? 1 : 0;
  cb.correlationData = &correlation_data_;
  cb.correlationId = correlation_id_;
  h->callback(domain_, cbid_, &cb);
  if (reuse) std::snprintf(t_symbol_storage, sizeof(t_symbol_storage), "%s", kReusedSymbol);
}

int ApiCall::Finish(int result, bool sets_last_error) {
  WaitUntil(start_ns_ + host_ns_);
  if (!active_) return result;
  Fire(CUPTI_API_EXIT, &result);
  const CudasimToolHooks* h = Hooks();
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

void cudasim_set_knobs_for_test(const char* env) {
  // The previous struct is leaked on purpose: another thread may still be reading it.
  g_knobs.store(new CudasimKnobs(ParseKnobs(KnobSource(env))), std::memory_order_release);
}

void cudasim_initialize(void) { EnsureInitialized(); }

bool cudasim_injection_started(void) { return g_injection_started.load(std::memory_order_acquire); }

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
