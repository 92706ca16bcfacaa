// NVTX hooks (see nvtx_hooks.h).
//
// Rules: every hook below except the Domain*/Register*/Name* ones runs on application threads on
// the hot path: one relaxed load of the collection flag, one clock read, one record written in
// place (ReserveHostRecord/PublishHostRecord); no allocation, lock, logging, exception or
// syscall. Every hook is noexcept (called from C).
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "collector/host/nvtx_hooks.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <cwchar>

#include "collector/host/host_clock.h"
#include "collector/host/host_collection.h"
#include "collector/host/host_cost.h"
#include "collector/host/nvtx_records.h"
#include "collector/host/nvtx_registry.h"
#include "collector/host/thread_buffer.h"

namespace gprof::collector {
namespace {

// Room for the name after the largest fixed part (range start with category and registered id).
constexpr uint32_t kMaxNameBytes = kMaxHostPayload - 32;

std::atomic<NvtxObserver> g_observer{nullptr};
std::atomic<uint64_t> g_next_range_id{1};

inline uint16_t DomainIndex(nvtxDomainHandle_t domain) {
  return domain == nullptr ? 0 : reinterpret_cast<const NvtxDomainEntry*>(domain)->index;
}

inline void Notify(NvtxEventKind kind, uint16_t domain, const char* name, uint32_t len,
                   uint64_t ticks, uint64_t id) {
  if (NvtxObserver o = g_observer.load(std::memory_order_relaxed)) [[unlikely]] {
    o(kind, domain, name, len, HostTicksToNsLive(ticks), id);
  }
}

// Names up to this many bytes are measured and copied in one pass, straight into the record.
constexpr uint32_t kShortName = 48;

// The common begin path for ASCII/UTF-8 names.
inline void BeginUtf8(HostRecordType type, NvtxEventKind kind, uint16_t domain, uint32_t category,
                      uint64_t id, const char* name) {
  NvtxBeginFields f;
  f.ts = HostTicks();
  f.id = id;
  f.category = category;
  f.domain = domain;
  f.encoding = name != nullptr ? NvtxNameEncoding::kUtf8 : NvtxNameEncoding::kNone;
  uint32_t len = 0;
  if (name != nullptr) [[likely]] {
    // Short names: reserve room for kShortName bytes, copy up to the terminator, publish what was
    // used. No strnlen/memcpy calls (the common case: a short literal).
    const uint32_t fixed = NvtxBeginFixedPayload(type, category != 0, f.encoding);
    char* at = ReserveHostRecord(HostRecordBytes(fixed + kShortName));
    if (at == nullptr) {  // dropped (counted); the observer still sees the event
      return Notify(kind, domain, name, static_cast<uint32_t>(strnlen(name, kMaxNameBytes)), f.ts,
                    id);
    }
    char* dst = at + sizeof(HostRecordHeader) + fixed;
    while (len < kShortName && name[len] != '\0') {
      dst[len] = name[len];
      ++len;
    }
    if (len < kShortName) [[likely]] {
      WriteNvtxBeginFixed(at, type, f, len);
      PublishHostRecord(at, HostRecordBytes(fixed + len));
      Notify(kind, domain, name, len, f.ts, id);
      return SampleHostCost(HostCostKind::kRange, f.ts);
    }
    len = static_cast<uint32_t>(strnlen(name, kMaxNameBytes));  // a long name: the general path
  }
  AppendNvtxBegin(type, f, name, len);
  Notify(kind, domain, name, len, f.ts, id);
}

inline void BeginWide(HostRecordType type, NvtxEventKind kind, uint16_t domain, uint32_t category,
                      uint64_t id, const wchar_t* name) {
  if (name == nullptr) return BeginUtf8(type, kind, domain, category, id, nullptr);
  NvtxBeginFields f;
  f.ts = HostTicks();
  f.id = id;
  f.category = category;
  f.domain = domain;
  f.encoding = NvtxNameEncoding::kWide;
  const size_t units = wcsnlen(name, kMaxNameBytes / sizeof(wchar_t));
  AppendNvtxBegin(type, f, name, static_cast<uint32_t>(units * sizeof(wchar_t)));
  Notify(kind, domain, nullptr, 0, f.ts, id);
}

inline void BeginAttributes(HostRecordType type, NvtxEventKind kind, uint16_t domain, uint64_t id,
                            const nvtxEventAttributes_t* a) {
  constexpr size_t kMessageEnd =
      offsetof(nvtxEventAttributes_t, message) + sizeof(nvtxMessageValue_t);
  if (a == nullptr) return BeginUtf8(type, kind, domain, 0, id, nullptr);
  const uint32_t category =
      a->size >= offsetof(nvtxEventAttributes_t, category) + sizeof(uint32_t) ? a->category : 0;
  if (a->size < kMessageEnd) return BeginUtf8(type, kind, domain, category, id, nullptr);
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return BeginUtf8(type, kind, domain, category, id, a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return BeginWide(type, kind, domain, category, id, a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      const auto* entry = reinterpret_cast<const NvtxStringEntry*>(a->message.registered);
      if (entry == nullptr) return BeginUtf8(type, kind, domain, category, id, nullptr);
      NvtxBeginFields f;
      f.ts = HostTicks();
      f.id = id;
      f.category = category;
      f.registered = entry->id;
      f.domain = domain;
      f.encoding = NvtxNameEncoding::kRegistered;
      AppendNvtxBegin(type, f, nullptr, 0);
      // The entry is immutable and never freed, so its text is safe to hand out here.
      Notify(kind, domain, entry->text.data(), static_cast<uint32_t>(entry->text.size()), f.ts,
             id);
      return;
    }
    default:
      return BeginUtf8(type, kind, domain, category, id, nullptr);
  }
}

// Pop and range end: a fixed-size record (16 B, 24 with a range id).
template <HostRecordType kType>
inline void End(NvtxEventKind kind, uint16_t domain, uint64_t id) {
  const uint64_t ts = HostTicks();
  AppendNvtxEnd<kType>(domain, ts, id);
  Notify(kind, domain, nullptr, 0, ts, id);
  SampleHostCost(HostCostKind::kRange, ts);
}

inline uint64_t NewRangeId() { return g_next_range_id.fetch_add(1, std::memory_order_relaxed); }

// ---- CORE module ----------------------------------------------------------------------------

void NVTX_API MarkEx(const nvtxEventAttributes_t* a) noexcept {
  if (!HostCollectionEnabled()) return;
  BeginAttributes(HostRecordType::kNvtxMark, NvtxEventKind::kMark, 0, 0, a);
}
void NVTX_API MarkA(const char* m) noexcept {
  if (!HostCollectionEnabled()) return;
  BeginUtf8(HostRecordType::kNvtxMark, NvtxEventKind::kMark, 0, 0, 0, m);
}
void NVTX_API MarkW(const wchar_t* m) noexcept {
  if (!HostCollectionEnabled()) return;
  BeginWide(HostRecordType::kNvtxMark, NvtxEventKind::kMark, 0, 0, 0, m);
}
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) noexcept {
  if (!HostCollectionEnabled()) return 0;
  const uint64_t id = NewRangeId();
  BeginAttributes(HostRecordType::kNvtxStart, NvtxEventKind::kStart, 0, id, a);
  return id;
}
nvtxRangeId_t NVTX_API RangeStartA(const char* m) noexcept {
  if (!HostCollectionEnabled()) return 0;
  const uint64_t id = NewRangeId();
  BeginUtf8(HostRecordType::kNvtxStart, NvtxEventKind::kStart, 0, 0, id, m);
  return id;
}
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* m) noexcept {
  if (!HostCollectionEnabled()) return 0;
  const uint64_t id = NewRangeId();
  BeginWide(HostRecordType::kNvtxStart, NvtxEventKind::kStart, 0, 0, id, m);
  return id;
}
void NVTX_API RangeEnd(nvtxRangeId_t id) noexcept {
  if (!HostCollectionEnabled() || id == 0) return;
  End<HostRecordType::kNvtxEnd>(NvtxEventKind::kEnd, 0, id);
}
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) noexcept {
  if (!HostCollectionEnabled()) return 0;
  BeginAttributes(HostRecordType::kNvtxPush, NvtxEventKind::kPush, 0, 0, a);
  return 0;
}
int NVTX_API RangePushA(const char* m) noexcept {
  if (!HostCollectionEnabled()) return 0;
  BeginUtf8(HostRecordType::kNvtxPush, NvtxEventKind::kPush, 0, 0, 0, m);
  return 0;
}
int NVTX_API RangePushW(const wchar_t* m) noexcept {
  if (!HostCollectionEnabled()) return 0;
  BeginWide(HostRecordType::kNvtxPush, NvtxEventKind::kPush, 0, 0, 0, m);
  return 0;
}
int NVTX_API RangePop() noexcept {
  if (!HostCollectionEnabled()) return 0;
  End<HostRecordType::kNvtxPop>(NvtxEventKind::kPop, 0, 0);
  return 0;
}

// Cold naming hooks: no-ops in an inert (forked) child, where the registry lock may be poisoned.
void NVTX_API NameCategoryA(uint32_t category, const char* name) noexcept {
  if (HostInert() || name == nullptr) return;
  try { NameNvtxCategory(0, category, name); } catch (...) {}
}
void NVTX_API NameCategoryW(uint32_t category, const wchar_t* name) noexcept {
  if (HostInert() || name == nullptr) return;
  try { NameNvtxCategory(0, category, WideToUtf8(name, wcslen(name))); } catch (...) {}
}
void NVTX_API NameOsThreadA(uint32_t tid, const char* name) noexcept {
  if (HostInert() || name == nullptr) return;
  try { NameNvtxThread(tid, name); } catch (...) {}
}
void NVTX_API NameOsThreadW(uint32_t tid, const wchar_t* name) noexcept {
  if (HostInert() || name == nullptr) return;
  try { NameNvtxThread(tid, WideToUtf8(name, wcslen(name))); } catch (...) {}
}

// ---- CORE2 module (domains) -----------------------------------------------------------------

void NVTX_API DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  if (!HostCollectionEnabled()) return;
  BeginAttributes(HostRecordType::kNvtxMark, NvtxEventKind::kMark, DomainIndex(d), 0, a);
}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d,
                                          const nvtxEventAttributes_t* a) noexcept {
  if (!HostCollectionEnabled()) return 0;
  const uint64_t id = NewRangeId();
  BeginAttributes(HostRecordType::kNvtxStart, NvtxEventKind::kStart, DomainIndex(d), id, a);
  return id;
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) noexcept {
  if (!HostCollectionEnabled() || id == 0) return;
  End<HostRecordType::kNvtxEnd>(NvtxEventKind::kEnd, DomainIndex(d), id);
}
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  if (!HostCollectionEnabled()) return 0;
  BeginAttributes(HostRecordType::kNvtxPush, NvtxEventKind::kPush, DomainIndex(d), 0, a);
  return 0;
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) noexcept {
  if (!HostCollectionEnabled()) return 0;
  End<HostRecordType::kNvtxPop>(NvtxEventKind::kPop, DomainIndex(d), 0);
  return 0;
}
void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t category,
                                  const char* name) noexcept {
  if (HostInert() || name == nullptr) return;
  try { NameNvtxCategory(DomainIndex(d), category, name); } catch (...) {}
}
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t category,
                                  const wchar_t* name) noexcept {
  if (HostInert() || name == nullptr) return;
  try { NameNvtxCategory(DomainIndex(d), category, WideToUtf8(name, wcslen(name))); } catch (...) {}
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) noexcept {
  if (HostInert() || s == nullptr) return nullptr;
  try {
    return reinterpret_cast<nvtxStringHandle_t>(const_cast<NvtxStringEntry*>(RegisterNvtxString(s)));
  } catch (...) {
    return nullptr;
  }
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) noexcept {
  if (HostInert() || s == nullptr) return nullptr;
  try {
    return reinterpret_cast<nvtxStringHandle_t>(
        const_cast<NvtxStringEntry*>(RegisterNvtxString(WideToUtf8(s, wcslen(s)))));
  } catch (...) {
    return nullptr;
  }
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) noexcept {
  if (HostInert() || name == nullptr) return nullptr;
  try {
    return reinterpret_cast<nvtxDomainHandle_t>(const_cast<NvtxDomainEntry*>(RegisterNvtxDomain(name)));
  } catch (...) {
    return nullptr;
  }
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) noexcept {
  if (HostInert() || name == nullptr) return nullptr;
  try {
    return reinterpret_cast<nvtxDomainHandle_t>(
        const_cast<NvtxDomainEntry*>(RegisterNvtxDomain(WideToUtf8(name, wcslen(name)))));
  } catch (...) {
    return nullptr;
  }
}
// Domains are never destroyed: their entries (and handles) stay valid for the whole run.
void NVTX_API DomainDestroy(nvtxDomainHandle_t) noexcept {}
void NVTX_API Initialize(const void*) noexcept {}

template <typename Fn>
NvtxFunctionPointer Ptr(Fn fn) {
  return reinterpret_cast<NvtxFunctionPointer>(fn);
}

struct Slot {
  unsigned int id;
  NvtxFunctionPointer fn;
};

bool FillModule(const NvtxExportTableCallbacks* cb, NvtxCallbackModule module, const Slot* slots,
                size_t count) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (cb->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return false;
  for (size_t i = 0; i < count; ++i) {
    // `size` counts the slots including the unused slot 0; newer ids than the client knows are
    // skipped.
    if (slots[i].id < size && table[slots[i].id] != nullptr) *table[slots[i].id] = slots[i].fn;
  }
  return true;
}

}  // namespace

void PushTorchOp(const NvtxStringEntry* name) noexcept {
  if (!HostCollectionEnabled()) return;
  NvtxBeginFields f;
  f.ts = HostTicks();
  f.torch_op = true;
  // Without a name (its string could not be registered) the push is still recorded, unnamed, so
  // that its pop closes it and not an enclosing range.
  f.encoding = name != nullptr ? NvtxNameEncoding::kRegistered : NvtxNameEncoding::kNone;
  f.registered = name != nullptr ? name->id : 0;
  AppendNvtxBegin(HostRecordType::kNvtxPush, f, nullptr, 0);
  // The entry is immutable and never freed, so its text is safe to hand out here.
  Notify(NvtxEventKind::kPush, 0, name != nullptr ? name->text.data() : nullptr,
         name != nullptr ? static_cast<uint32_t>(name->text.size()) : 0, f.ts, 0);
  SampleHostCost(HostCostKind::kRange, f.ts);
}

void PopTorchOp() noexcept {
  if (!HostCollectionEnabled()) return;
  End<HostRecordType::kNvtxPop>(NvtxEventKind::kPop, 0, 0);
}

bool InstallNvtxHooks(const void* (*get_export_table)(uint32_t)) {
  if (get_export_table == nullptr) return false;
  const auto* cb =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (cb == nullptr || cb->struct_size < sizeof(NvtxExportTableCallbacks) ||
      cb->GetModuleFunctionTable == nullptr) {
    return false;
  }
  const auto* version =
      static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
  if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  const Slot core[] = {
      {NVTX_CBID_CORE_MarkEx, Ptr(&MarkEx)},
      {NVTX_CBID_CORE_MarkA, Ptr(&MarkA)},
      {NVTX_CBID_CORE_MarkW, Ptr(&MarkW)},
      {NVTX_CBID_CORE_RangeStartEx, Ptr(&RangeStartEx)},
      {NVTX_CBID_CORE_RangeStartA, Ptr(&RangeStartA)},
      {NVTX_CBID_CORE_RangeStartW, Ptr(&RangeStartW)},
      {NVTX_CBID_CORE_RangeEnd, Ptr(&RangeEnd)},
      {NVTX_CBID_CORE_RangePushEx, Ptr(&RangePushEx)},
      {NVTX_CBID_CORE_RangePushA, Ptr(&RangePushA)},
      {NVTX_CBID_CORE_RangePushW, Ptr(&RangePushW)},
      {NVTX_CBID_CORE_RangePop, Ptr(&RangePop)},
      {NVTX_CBID_CORE_NameCategoryA, Ptr(&NameCategoryA)},
      {NVTX_CBID_CORE_NameCategoryW, Ptr(&NameCategoryW)},
      {NVTX_CBID_CORE_NameOsThreadA, Ptr(&NameOsThreadA)},
      {NVTX_CBID_CORE_NameOsThreadW, Ptr(&NameOsThreadW)},
  };
  const Slot core2[] = {
      {NVTX_CBID_CORE2_DomainMarkEx, Ptr(&DomainMarkEx)},
      {NVTX_CBID_CORE2_DomainRangeStartEx, Ptr(&DomainRangeStartEx)},
      {NVTX_CBID_CORE2_DomainRangeEnd, Ptr(&DomainRangeEnd)},
      {NVTX_CBID_CORE2_DomainRangePushEx, Ptr(&DomainRangePushEx)},
      {NVTX_CBID_CORE2_DomainRangePop, Ptr(&DomainRangePop)},
      {NVTX_CBID_CORE2_DomainNameCategoryA, Ptr(&DomainNameCategoryA)},
      {NVTX_CBID_CORE2_DomainNameCategoryW, Ptr(&DomainNameCategoryW)},
      {NVTX_CBID_CORE2_DomainRegisterStringA, Ptr(&DomainRegisterStringA)},
      {NVTX_CBID_CORE2_DomainRegisterStringW, Ptr(&DomainRegisterStringW)},
      {NVTX_CBID_CORE2_DomainCreateA, Ptr(&DomainCreateA)},
      {NVTX_CBID_CORE2_DomainCreateW, Ptr(&DomainCreateW)},
      {NVTX_CBID_CORE2_DomainDestroy, Ptr(&DomainDestroy)},
      {NVTX_CBID_CORE2_Initialize, Ptr(&Initialize)},
  };
  const bool ok_core = FillModule(cb, NVTX_CB_MODULE_CORE, core, std::size(core));
  const bool ok_core2 = FillModule(cb, NVTX_CB_MODULE_CORE2, core2, std::size(core2));
  return ok_core || ok_core2;
}

void SetNvtxObserver(NvtxObserver observer) {
  g_observer.store(observer, std::memory_order_relaxed);
}

}  // namespace gprof::collector
