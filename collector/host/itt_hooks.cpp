// ITT collector side (see itt_hooks.h).
#include "collector/host/itt_hooks.h"

#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace gprof::collector {
namespace {

// ittnotify_config.h's __itt_global up to the API table, as the static part lays it out.
struct IttGlobalPrefix {
  unsigned char magic[8];
  unsigned long version_major;
  unsigned long version_minor;
  unsigned long version_build;
  volatile long api_initialized;
  volatile long mutex_initialized;
  volatile long atomic_counter;
  pthread_mutex_t mutex;
  void* lib;
  void* error_handler;
  const char** dll_path_ptr;
  IttApiInfo* api_list_ptr;
};
static_assert(offsetof(IttGlobalPrefix, api_list_ptr) == 120, "ITT's __itt_global layout");
constexpr unsigned char kIttMagic[8] = {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30};

// Per-thread name cache: direct-mapped by the name pointer, on the heap (allocated at a thread's
// first ITT op, freed at its exit by the key's destructor): this library's TLS is static TLS
// (initial-exec elsewhere), and a dlopen'ed library gets only glibc's small static TLS surplus,
// so an array here would make the library fail to load.
// Our string handles: never freed, one per registered string.
constexpr uint64_t kHandleMagic = 0x4750524f46495454ull;  // "GPROFITT"
struct IttHandle {
  uint64_t magic;
  const NvtxStringEntry* entry;
};
std::mutex* g_handles_mutex = new std::mutex;  // never destroyed (no global destructors)
auto* g_handles = new std::unordered_map<const NvtxStringEntry*, const IttHandle*>;

const IttHandle* HandleOf(const NvtxStringEntry* entry) {
  std::lock_guard<std::mutex> lock(*g_handles_mutex);
  auto [it, fresh] = g_handles->emplace(entry, nullptr);
  if (fresh) it->second = new IttHandle{kHandleMagic, entry};
  return it->second;
}

struct CacheSlot {
  const char* pointer;
  const IttHandle* handle;
};
constexpr size_t kCacheSlots = 128;
thread_local CacheSlot* t_cache __attribute__((tls_model("initial-exec"))) = nullptr;
pthread_key_t g_cache_key;
pthread_once_t g_cache_key_once = PTHREAD_ONCE_INIT;
bool g_cache_key_ok = false;

void MakeCacheKey() { g_cache_key_ok = pthread_key_create(&g_cache_key, &free) == 0; }

CacheSlot* ThreadCache() {
  if (t_cache != nullptr) return t_cache;
  pthread_once(&g_cache_key_once, &MakeCacheKey);
  if (!g_cache_key_ok) return nullptr;
  auto* cache = static_cast<CacheSlot*>(calloc(kCacheSlots, sizeof(CacheSlot)));
  if (cache == nullptr) return nullptr;
  if (pthread_setspecific(g_cache_key, cache) != 0) {
    free(cache);
    return nullptr;
  }
  t_cache = cache;
  return cache;
}

size_t Slot(const char* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  return ((v >> 3) ^ (v >> 11)) & (kCacheSlots - 1);
}

}  // namespace

bool FillIttApi(void* itt_global, const char* const* names, void* const* functions,
                size_t count) noexcept {
  auto* g = static_cast<IttGlobalPrefix*>(itt_global);
  if (g == nullptr || std::memcmp(g->magic, kIttMagic, sizeof kIttMagic) != 0 ||
      g->api_list_ptr == nullptr) {
    return false;
  }
  for (IttApiInfo* api = g->api_list_ptr; api->name != nullptr; ++api) {
    if (api->func_ptr == nullptr) continue;
    void* chosen = api->null_func;
    for (size_t i = 0; i < count; ++i) {
      if (std::strcmp(api->name, names[i]) == 0) chosen = functions[i];
    }
    *api->func_ptr = chosen;
  }
  return true;
}

const void* IttStringHandle(const char* name) noexcept {
  if (name == nullptr) return nullptr;
  CacheSlot* cache = ThreadCache();
  CacheSlot* slot = cache != nullptr ? &cache[Slot(name)] : nullptr;
  if (slot != nullptr && slot->pointer == name &&
      std::strcmp(slot->handle->entry->text.c_str(), name) == 0) {
    return slot->handle;
  }
  try {
    const NvtxStringEntry* entry = RegisterNvtxString(std::string_view(name));
    if (entry == nullptr) return nullptr;
    const IttHandle* handle = HandleOf(entry);
    if (slot != nullptr) *slot = CacheSlot{name, handle};
    return handle;
  } catch (...) {
    return nullptr;
  }
}

const NvtxStringEntry* IttEntryOf(const void* handle) noexcept {
  if (handle == nullptr) return nullptr;
  const auto* ours = static_cast<const IttHandle*>(handle);
  if (ours->magic == kHandleMagic) return ours->entry;
  const char* name = *static_cast<const char* const*>(handle);  // the static part's strA
  const auto* again = static_cast<const IttHandle*>(IttStringHandle(name));
  return again != nullptr ? again->entry : nullptr;
}

namespace {
std::atomic<const void*> g_torch_domain{nullptr};
}  // namespace

bool IttIsTorchDomain(const void* domain) noexcept {
  if (domain == nullptr) return false;
  if (g_torch_domain.load(std::memory_order_relaxed) == domain) return true;
  struct DomainPrefix {  // ittnotify.h's __itt_domain, first two fields
    volatile int flags;
    const char* nameA;
  };
  const char* name = static_cast<const DomainPrefix*>(domain)->nameA;
  if (name == nullptr || std::strcmp(name, "PyTorch") != 0) return false;
  g_torch_domain.store(domain, std::memory_order_relaxed);
  return true;
}

}  // namespace gprof::collector
