// libFuzzer target: the NVTX paths of the collector that take whatever a program passes to NVTX
// (collector/host/nvtx_hooks.h, nvtx_registry.h) and the profile builder that decodes the host
// records they write (profile_builder.h). Any program may name domains, strings, categories and
// threads with any bytes (invalid UTF-8, control bytes, very long, wchar_t text that is not
// Unicode) and push, start and mark events with any nvtxEventAttributes_t.
//
// The first byte picks one of two modes; the rest are operations, each one byte and its
// arguments (bytes past the end read as 0). Texts are [u16 length % 2048][bytes] and wide texts
// [u16 units % 600][4 bytes each], NUL-terminated by the harness (an embedded NUL ends the C
// string early, as it does for the program).
//
// Hooks mode (even first byte): the real hooks, installed with InstallNvtxHooks through an
// in-memory export table as NVTX's injection hands it over (as nvtx_hooks_test.cpp does), are
// called as an NVTX client calls them:
//   op % 7 == 0  domain create        [flags: 1 wide, 2 null][text]
//   op % 7 == 1  register string      [flags][domain][text]
//   op % 7 == 2  name a category      [flags][domain][u32 category][text]
//   op % 7 == 3  name an OS thread    [flags][u32 tid][text]
//   op % 7 == 4  push/start/mark Ex   [kind: (k & 3) % 3, 4 domain API][domain][u16 size]
//                                     [u32 category][payload type][u64 payload][message type
//                                     (< 4, else [i32])][message: [null][text], [null][wide
//                                     text] or [string]]
//   op % 7 == 5  push/start/mark A/W  [kind: (k & 3) % 3, 4 wide, 8 null][text]
//   op % 7 == 6  pop / range end      [which % 4][domain][range: 0 = [u64 id], else one started]
// Pointers cannot be fuzzed: a [domain] or [string] byte picks a handle the hooks returned in
// this input (0: nullptr), a message points at a text of the input.
// The registry is process-wide and append-only by design (entries are never freed, the handles
// stay valid for the run), so a fuzzing process would grow it without bound and every profile
// build would copy all of it: after kRegistryBudget new entries the harness stops adding new
// names (it keeps re-registering the names it has, and keeps naming events with any bytes).
// Checks: the same UTF-8 name gives the same handle, in any input, whether it came as char or
// wchar_t text; an entry holds the name it was given; the snapshot holds exactly what was
// registered, the last name of each category and thread winning; WideToUtf8 gives valid UTF-8
// that decodes to the units given (U+FFFD for what is not a Unicode scalar value); the observer
// sees each event's raw name and the stamp its record gets; BuildHostProfile gives one range per
// push and start (open ones closed and flagged at the end), one mark per mark, with the name,
// domain, category and flags each event promises (long names cut to the record's limit, never in
// the middle of a UTF-8 sequence; torch op texts split), counts unmatched pops and ends, drops
// nothing, and passes CheckProfile (what the dump reader accepts).
//
// Builder mode (odd first byte): a registry snapshot made from the input, then host records of
// any type, flags and bytes fed to ProfileBuilder::Add as VisitHostRecords hands them over
// (payload in a buffer of exactly its size):
//   [domains u8][texts] [strings u8][texts] [threads u8][u32 tid, text each] then records
//   [tid % 4][type][flags][u16 size % 1100][size bytes] to the end, and Finish.
// Checks: every name, shapes, domain and thread the profile refers to exists; one range per
// accepted push and per distinct accepted start id, every pop and end either closes one or is
// counted unmatched, what stays open is counted and flagged; ranges do not end before they start;
// marks and API calls are all kept; threads are sorted, unique and complete.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cwchar>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/host/api_records.h"
#include "collector/host/host_collection.h"
#include "collector/host/nvtx_hooks.h"
#include "collector/host/nvtx_records.h"
#include "collector/host/nvtx_registry.h"
#include "collector/host/profile_builder.h"
#include "collector/host/thread_buffer.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "model/profile.h"
#include "model/torch_op_name.h"

namespace gprof::collector {
namespace {

using Reader = fuzz::FuzzReader;

// ---- Independent checks of the text conversions ----------------------------------------------

// Decodes strict UTF-8 (shortest forms, no surrogates, at most U+10FFFF); false if invalid.
bool DecodeUtf8(std::string_view s, std::vector<uint32_t>* out) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1
                     : (b & 0xE0) == 0xC0 ? 2
                     : (b & 0xF0) == 0xE0 ? 3
                     : (b & 0xF8) == 0xF0 ? 4
                                          : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = cp << 6 | (c & 0x3F);
    }
    const uint32_t min = n == 1 ? 0 : n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    out->push_back(cp);
    i += n;
  }
  return true;
}

// WideToUtf8 of `units` (the first `n`): valid UTF-8 whose code points are the units, U+FFFD for
// a unit that is not a Unicode scalar value.
std::string CheckedWideToUtf8(const wchar_t* units, size_t n) {
  const std::string utf8 = WideToUtf8(units, n);
  std::vector<uint32_t> decoded;
  GPROF_FUZZ_CHECK(DecodeUtf8(utf8, &decoded));
  GPROF_FUZZ_CHECK(decoded.size() == n);
  for (size_t i = 0; i < n; ++i) {
    const auto cp = static_cast<uint32_t>(units[i]);
    const bool scalar = cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    GPROF_FUZZ_CHECK(decoded[i] == (scalar ? cp : 0xFFFDu));
  }
  return utf8;
}

// profile_builder.cpp's rule for UTF-8 names, as it states it: a trailing incomplete UTF-8
// sequence is dropped. Checked here to cut at most 3 bytes and to leave valid UTF-8 alone.
std::string TrimPartialUtf8(std::string_view s) {
  size_t i = s.size();
  size_t back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) {
    --i;
    ++back;
  }
  std::string_view kept = s;
  if (i != 0) {
    const auto lead = static_cast<unsigned char>(s[i - 1]);
    size_t want = 1;
    if ((lead & 0xE0) == 0xC0) want = 2;
    else if ((lead & 0xF0) == 0xE0) want = 3;
    else if ((lead & 0xF8) == 0xF0) want = 4;
    if (lead >= 0x80 && back + 1 < want) kept = s.substr(0, i - 1);
  }
  GPROF_FUZZ_CHECK(s.size() - kept.size() <= 3);
  std::vector<uint32_t> ignored;
  if (DecodeUtf8(s, &ignored)) GPROF_FUZZ_CHECK(kept.size() == s.size());
  return std::string(kept);
}

// ---- Hooks mode ---------------------------------------------------------------------------------

// The client side of NVTX's export table: one slot array per module, as nvtxImpl.h keeps them.
NvtxFunctionPointer g_core_slots[NVTX_CBID_CORE_SIZE];
NvtxFunctionPointer* g_core_table[NVTX_CBID_CORE_SIZE];
NvtxFunctionPointer g_core2_slots[NVTX_CBID_CORE2_SIZE];
NvtxFunctionPointer* g_core2_table[NVTX_CBID_CORE2_SIZE];

int NVTX_API GetModuleFunctionTable(NvtxCallbackModule module, NvtxFunctionTable* out,
                                    unsigned int* size) {
  if (module == NVTX_CB_MODULE_CORE) {
    for (unsigned i = 0; i < NVTX_CBID_CORE_SIZE; ++i) g_core_table[i] = &g_core_slots[i];
    *out = g_core_table;
    *size = NVTX_CBID_CORE_SIZE;
    return 1;
  }
  if (module == NVTX_CB_MODULE_CORE2) {
    for (unsigned i = 0; i < NVTX_CBID_CORE2_SIZE; ++i) g_core2_table[i] = &g_core2_slots[i];
    *out = g_core2_table;
    *size = NVTX_CBID_CORE2_SIZE;
    return 1;
  }
  return 0;
}

const NvtxExportTableCallbacks kCallbacks{sizeof(NvtxExportTableCallbacks),
                                          &GetModuleFunctionTable};

const void* GetExportTable(uint32_t id) {
  return id == NVTX_ETID_CALLBACKS ? &kCallbacks : nullptr;
}

template <typename Fn>
Fn Core(unsigned id) {
  return reinterpret_cast<Fn>(g_core_slots[id]);
}
template <typename Fn>
Fn Core2(unsigned id) {
  return reinterpret_cast<Fn>(g_core2_slots[id]);
}

// What the observer saw last (it runs synchronously inside the hook).
struct Observed {
  int calls = 0;
  NvtxEventKind kind{};
  uint16_t domain = 0;
  bool has_name = false;
  std::string name;
  uint64_t ts_ns = 0;
  uint64_t range_id = 0;
  uint64_t latest = 0;  // the latest stamp of this input
};
Observed g_observed;

void Observe(NvtxEventKind kind, uint16_t domain, const char* name, uint32_t len, uint64_t ts_ns,
             uint64_t range_id) {
  ++g_observed.calls;
  g_observed.latest = std::max(g_observed.latest, ts_ns);
  g_observed.kind = kind;
  g_observed.domain = domain;
  g_observed.has_name = name != nullptr;
  g_observed.name.assign(name != nullptr ? name : "", name != nullptr ? len : 0);
  g_observed.ts_ns = ts_ns;
  g_observed.range_id = range_id;
}

// Everything registered so far in this process, by UTF-8 name (the registry outlives inputs).
struct Mirror {
  std::unordered_map<std::string, const NvtxDomainEntry*> domains;
  std::unordered_map<std::string, const NvtxStringEntry*> strings;
  std::map<std::pair<uint16_t, uint32_t>, std::string> categories;
  std::map<uint32_t, std::string> threads;
  size_t entries() const {
    return domains.size() + strings.size() + categories.size() + threads.size();
  }
};
Mirror& TheMirror() {
  static Mirror* mirror = new Mirror;  // never destroyed, like the registry it mirrors
  return *mirror;
}
constexpr size_t kRegistryBudget = 128;

constexpr uint32_t kMaxNameBytes = kMaxHostPayload - 32;  // nvtx_hooks.cpp: longer names are cut

// An event's name as the program gave it.
struct Message {
  enum Kind { kNone, kAscii, kWide, kRegistered } kind = kNone;
  std::string ascii;           // the C string (up to its NUL)
  std::vector<wchar_t> wide;   // the units up to the NUL
  const NvtxStringEntry* registered = nullptr;
};

// One range the hooks should have produced.
struct ExpectedRange {
  std::string name;
  uint16_t domain;
  uint32_t category;
  uint16_t flags;  // kRangeTorch, kRangeCpuOp, kRangeStartEnd; kRangeOpenAtEnd added at the end
  uint64_t start_ns;
  bool open = true;
};
using RangeKey = std::tuple<std::string, uint16_t, uint32_t, uint16_t, uint64_t>;
using MarkKey = std::tuple<std::string, uint16_t, uint32_t, uint64_t>;

class HooksRun {
 public:
  explicit HooksRun(Reader* in) : in_(*in) {}

  void Run() {
    ResetHostRecords();  // the previous input's records
    g_observed = Observed{};
    while (!in_.empty()) {
      switch (in_.Byte() % 7) {
        case 0: CreateDomain(); break;
        case 1: RegisterString(); break;
        case 2: NameCategory(); break;
        case 3: NameThread(); break;
        case 4: BeginEx(); break;
        case 5: BeginPlain(); break;
        case 6: End(); break;
      }
    }
    Profile p;
    BuildHostProfile(&p, g_observed.latest + 1000);  // the end of the run: after its last event
    CheckProfileOfRun(p);
    CheckSnapshot();
  }

 private:
  // A name given as char or wchar_t text (flags 1: wide, 2: nullptr), and its UTF-8 form.
  struct Name {
    bool null = false;
    bool wide = false;
    std::string ascii;
    std::vector<wchar_t> units;
    std::string utf8;
  };
  Name ReadName(uint8_t flags) {
    Name n;
    n.wide = (flags & 1) != 0;
    n.null = (flags & 2) != 0;
    if (n.wide) {
      n.units = in_.Wide();
      const size_t len = std::wcslen(n.units.data());
      CheckedWideToUtf8(n.units.data(), n.units.size() - 1);  // embedded NULs too
      n.utf8 = CheckedWideToUtf8(n.units.data(), len);
    } else {
      n.ascii = in_.Text();
      n.utf8 = std::string(n.ascii.c_str());
    }
    return n;
  }
  // Whether a name that is not registered yet may be added (see the file comment).
  static bool MayAdd(bool known) { return known || TheMirror().entries() < kRegistryBudget; }

  nvtxDomainHandle_t PickDomain() {
    const uint8_t b = in_.Byte();
    if (b == 0 || domains_.empty()) return nullptr;
    return domains_[(b - 1) % domains_.size()];
  }
  static uint16_t IndexOf(nvtxDomainHandle_t d) {
    return d == nullptr ? 0 : reinterpret_cast<const NvtxDomainEntry*>(d)->index;
  }

  void CreateDomain() {
    const Name n = ReadName(in_.Byte());
    Mirror& m = TheMirror();
    const auto known = m.domains.find(n.utf8);
    if (!n.null && !MayAdd(known != m.domains.end())) return;
    nvtxDomainHandle_t d;
    if (n.wide) {
      d = Core2<nvtxDomainHandle_t(NVTX_API*)(const wchar_t*)>(NVTX_CBID_CORE2_DomainCreateW)(
          n.null ? nullptr : n.units.data());
    } else {
      d = Core2<nvtxDomainHandle_t(NVTX_API*)(const char*)>(NVTX_CBID_CORE2_DomainCreateA)(
          n.null ? nullptr : n.ascii.c_str());
    }
    if (n.null) {
      GPROF_FUZZ_CHECK(d == nullptr);
      return;
    }
    GPROF_FUZZ_CHECK(d != nullptr);  // the budget keeps the registry far from kMaxNvtxDomains
    const auto* entry = reinterpret_cast<const NvtxDomainEntry*>(d);
    GPROF_FUZZ_CHECK(entry->name == n.utf8 && entry->index != 0);
    if (known != m.domains.end()) {
      GPROF_FUZZ_CHECK(known->second == entry);  // same name, same domain
    } else {
      m.domains.emplace(n.utf8, entry);
    }
    domains_.push_back(d);
  }

  void RegisterString() {
    const uint8_t flags = in_.Byte();
    const nvtxDomainHandle_t d = PickDomain();
    const Name n = ReadName(flags);
    Mirror& m = TheMirror();
    const auto known = m.strings.find(n.utf8);
    if (!n.null && !MayAdd(known != m.strings.end())) return;
    nvtxStringHandle_t s;
    if (n.wide) {
      s = Core2<nvtxStringHandle_t(NVTX_API*)(nvtxDomainHandle_t, const wchar_t*)>(
          NVTX_CBID_CORE2_DomainRegisterStringW)(d, n.null ? nullptr : n.units.data());
    } else {
      s = Core2<nvtxStringHandle_t(NVTX_API*)(nvtxDomainHandle_t, const char*)>(
          NVTX_CBID_CORE2_DomainRegisterStringA)(d, n.null ? nullptr : n.ascii.c_str());
    }
    if (n.null) {
      GPROF_FUZZ_CHECK(s == nullptr);
      return;
    }
    GPROF_FUZZ_CHECK(s != nullptr);
    const auto* entry = reinterpret_cast<const NvtxStringEntry*>(s);
    GPROF_FUZZ_CHECK(entry->text == n.utf8 && entry->id != 0);
    if (known != m.strings.end()) {
      GPROF_FUZZ_CHECK(known->second == entry);
    } else {
      m.strings.emplace(n.utf8, entry);
    }
    strings_.push_back(s);
  }

  void NameCategory() {
    const uint8_t flags = in_.Byte();
    const nvtxDomainHandle_t d = PickDomain();
    const auto category = in_.Get<uint32_t>();
    const Name n = ReadName(flags);
    Mirror& m = TheMirror();
    const std::pair<uint16_t, uint32_t> key{IndexOf(d), category};
    if (!n.null && !MayAdd(m.categories.count(key) != 0)) return;
    const char* a = n.null ? nullptr : n.ascii.c_str();
    const wchar_t* w = n.null ? nullptr : n.units.data();
    if (d == nullptr && n.wide) {
      Core<void(NVTX_API*)(uint32_t, const wchar_t*)>(NVTX_CBID_CORE_NameCategoryW)(category, w);
    } else if (d == nullptr) {
      Core<void(NVTX_API*)(uint32_t, const char*)>(NVTX_CBID_CORE_NameCategoryA)(category, a);
    } else if (n.wide) {
      Core2<void(NVTX_API*)(nvtxDomainHandle_t, uint32_t, const wchar_t*)>(
          NVTX_CBID_CORE2_DomainNameCategoryW)(d, category, w);
    } else {
      Core2<void(NVTX_API*)(nvtxDomainHandle_t, uint32_t, const char*)>(
          NVTX_CBID_CORE2_DomainNameCategoryA)(d, category, a);
    }
    if (!n.null) m.categories[key] = n.utf8;  // the last name wins
  }

  void NameThread() {
    const uint8_t flags = in_.Byte();
    const auto tid = in_.Get<uint32_t>();
    const Name n = ReadName(flags);
    Mirror& m = TheMirror();
    if (!n.null && !MayAdd(m.threads.count(tid) != 0)) return;
    if (n.wide) {
      Core<void(NVTX_API*)(uint32_t, const wchar_t*)>(NVTX_CBID_CORE_NameOsThreadW)(
          tid, n.null ? nullptr : n.units.data());
    } else {
      Core<void(NVTX_API*)(uint32_t, const char*)>(NVTX_CBID_CORE_NameOsThreadA)(
          tid, n.null ? nullptr : n.ascii.c_str());
    }
    if (!n.null) m.threads[tid] = n.utf8;
  }

  // The name an event's record gets (profile_builder.cpp NameOf/OpenRange) and what the observer
  // is handed (nvtx_hooks.h: UTF-8 bytes, or nullptr for wide and unnamed events).
  void Expect(HostRecordType type, uint16_t domain, uint32_t category, const Message& msg,
              uint64_t range_id) {
    GPROF_FUZZ_CHECK(g_observed.calls == 1);
    const NvtxEventKind kind = type == HostRecordType::kNvtxPush    ? NvtxEventKind::kPush
                               : type == HostRecordType::kNvtxStart ? NvtxEventKind::kStart
                                                                    : NvtxEventKind::kMark;
    GPROF_FUZZ_CHECK(g_observed.kind == kind && g_observed.domain == domain &&
                     g_observed.range_id == range_id);
    std::string name;
    uint16_t flags = type == HostRecordType::kNvtxStart ? kRangeStartEnd : 0;
    switch (msg.kind) {
      case Message::kNone:
        GPROF_FUZZ_CHECK(!g_observed.has_name);
        break;
      case Message::kAscii: {
        const std::string cut = msg.ascii.substr(0, kMaxNameBytes);
        GPROF_FUZZ_CHECK(g_observed.has_name && g_observed.name == cut);
        name = TrimPartialUtf8(cut);
        TorchOpName torch;
        if (type != HostRecordType::kNvtxMark && ParseTorchOpName(name, &torch)) {
          flags |= kRangeTorch | (torch.cpu_op ? kRangeCpuOp : 0);
          name = std::string(torch.name);
        }
        break;
      }
      case Message::kWide: {
        GPROF_FUZZ_CHECK(!g_observed.has_name);
        const size_t units = std::min<size_t>(msg.wide.size(), kMaxNameBytes / sizeof(wchar_t));
        name = CheckedWideToUtf8(msg.wide.data(), units);
        break;
      }
      case Message::kRegistered:
        GPROF_FUZZ_CHECK(g_observed.has_name && g_observed.name == msg.registered->text);
        name = msg.registered->text;
        break;
    }
    if (type == HostRecordType::kNvtxMark) {
      marks_.emplace_back(name, domain, category, g_observed.ts_ns);
      return;
    }
    const size_t index = ranges_.size();
    ranges_.push_back(ExpectedRange{name, domain, category, flags, g_observed.ts_ns});
    if (type == HostRecordType::kNvtxPush) stacks_[domain].push_back(index);
    else started_[range_id] = index;
  }

  Message ReadMessage(int32_t type) {
    Message m;
    switch (type) {
      case NVTX_MESSAGE_TYPE_ASCII: {
        const uint8_t null = in_.Byte();
        texts_.push_back(in_.Text());
        if (null == 0) {
          m.kind = Message::kAscii;
          m.ascii = texts_.back().c_str();
        }
        break;
      }
      case NVTX_MESSAGE_TYPE_UNICODE: {
        const uint8_t null = in_.Byte();
        wides_.push_back(in_.Wide());
        if (null == 0) {
          m.kind = Message::kWide;
          const wchar_t* w = wides_.back().data();
          m.wide.assign(w, w + std::wcslen(w));
        }
        break;
      }
      case NVTX_MESSAGE_TYPE_REGISTERED: {
        const uint8_t b = in_.Byte();
        if (b != 0 && !strings_.empty()) {
          m.kind = Message::kRegistered;
          m.registered =
              reinterpret_cast<const NvtxStringEntry*>(strings_[(b - 1) % strings_.size()]);
        }
        break;
      }
      default:
        break;
    }
    return m;
  }

  static HostRecordType TypeOf(uint8_t kind) {
    switch ((kind & 3) % 3) {
      case 0: return HostRecordType::kNvtxPush;
      case 1: return HostRecordType::kNvtxStart;
      default: return HostRecordType::kNvtxMark;
    }
  }

  void BeginEx() {
    const uint8_t kind = in_.Byte();
    const HostRecordType type = TypeOf(kind);
    const bool domain_api = (kind & 4) != 0;
    const nvtxDomainHandle_t d = domain_api ? PickDomain() : nullptr;
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = in_.Get<uint16_t>();
    a.category = in_.Get<uint32_t>();
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xff00ff00u;
    a.payloadType = in_.Byte();  // any type and bits: the hooks do not record payloads
    a.payload.ullValue = in_.Get<uint64_t>();
    const uint8_t type_byte = in_.Byte();
    a.messageType = type_byte < 4 ? static_cast<int32_t>(type_byte) : in_.Get<int32_t>();
    const Message read = ReadMessage(a.messageType);
    switch (a.messageType) {
      case NVTX_MESSAGE_TYPE_ASCII:
        a.message.ascii = read.kind == Message::kAscii ? texts_.back().c_str() : nullptr;
        break;
      case NVTX_MESSAGE_TYPE_UNICODE:
        a.message.unicode = read.kind == Message::kWide ? wides_.back().data() : nullptr;
        break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        a.message.registered = read.kind == Message::kRegistered
                                   ? reinterpret_cast<nvtxStringHandle_t>(
                                         const_cast<NvtxStringEntry*>(read.registered))
                                   : nullptr;
        break;
      default:
        break;
    }
    // nvtx_hooks.cpp reads only the fields `size` covers.
    const uint32_t category =
        a.size >= offsetof(nvtxEventAttributes_t, category) + sizeof(uint32_t) ? a.category : 0;
    const bool has_message =
        a.size >= offsetof(nvtxEventAttributes_t, message) + sizeof(nvtxMessageValue_t);
    const Message msg = has_message ? read : Message{};
    g_observed.calls = 0;
    uint64_t id = 0;
    switch (type) {
      case HostRecordType::kNvtxPush:
        if (domain_api) {
          Core2<int(NVTX_API*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*)>(
              NVTX_CBID_CORE2_DomainRangePushEx)(d, &a);
        } else {
          Core<int(NVTX_API*)(const nvtxEventAttributes_t*)>(NVTX_CBID_CORE_RangePushEx)(&a);
        }
        break;
      case HostRecordType::kNvtxStart:
        id = domain_api ? Core2<nvtxRangeId_t(NVTX_API*)(nvtxDomainHandle_t,
                                                         const nvtxEventAttributes_t*)>(
                              NVTX_CBID_CORE2_DomainRangeStartEx)(d, &a)
                        : Core<nvtxRangeId_t(NVTX_API*)(const nvtxEventAttributes_t*)>(
                              NVTX_CBID_CORE_RangeStartEx)(&a);
        GPROF_FUZZ_CHECK(id != 0);
        range_ids_.push_back(id);
        break;
      default:
        if (domain_api) {
          Core2<void(NVTX_API*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*)>(
              NVTX_CBID_CORE2_DomainMarkEx)(d, &a);
        } else {
          Core<void(NVTX_API*)(const nvtxEventAttributes_t*)>(NVTX_CBID_CORE_MarkEx)(&a);
        }
        break;
    }
    Expect(type, IndexOf(d), category, msg, id);
  }

  void BeginPlain() {
    const uint8_t kind = in_.Byte();
    const HostRecordType type = TypeOf(kind);
    const bool wide = (kind & 4) != 0, null = (kind & 8) != 0;
    Message msg;
    const char* a = nullptr;
    const wchar_t* w = nullptr;
    if (wide) {
      wides_.push_back(in_.Wide());
      if (!null) {
        w = wides_.back().data();
        msg.kind = Message::kWide;
        msg.wide.assign(w, w + std::wcslen(w));
      }
    } else {
      texts_.push_back(in_.Text());
      if (!null) {
        a = texts_.back().c_str();
        msg.kind = Message::kAscii;
        msg.ascii = a;
      }
    }
    g_observed.calls = 0;
    uint64_t id = 0;
    switch (type) {
      case HostRecordType::kNvtxPush:
        if (wide) Core<int(NVTX_API*)(const wchar_t*)>(NVTX_CBID_CORE_RangePushW)(w);
        else Core<int(NVTX_API*)(const char*)>(NVTX_CBID_CORE_RangePushA)(a);
        break;
      case HostRecordType::kNvtxStart:
        id = wide ? Core<nvtxRangeId_t(NVTX_API*)(const wchar_t*)>(NVTX_CBID_CORE_RangeStartW)(w)
                  : Core<nvtxRangeId_t(NVTX_API*)(const char*)>(NVTX_CBID_CORE_RangeStartA)(a);
        GPROF_FUZZ_CHECK(id != 0);
        range_ids_.push_back(id);
        break;
      default:
        if (wide) Core<void(NVTX_API*)(const wchar_t*)>(NVTX_CBID_CORE_MarkW)(w);
        else Core<void(NVTX_API*)(const char*)>(NVTX_CBID_CORE_MarkA)(a);
        break;
    }
    Expect(type, 0, 0, msg, id);
  }

  void End() {
    const uint8_t which = in_.Byte() % 4;
    const nvtxDomainHandle_t d = which % 2 == 1 ? PickDomain() : nullptr;
    const uint16_t domain = IndexOf(d);
    g_observed.calls = 0;
    if (which < 2) {
      if (d == nullptr) Core<int(NVTX_API*)()>(NVTX_CBID_CORE_RangePop)();
      else Core2<int(NVTX_API*)(nvtxDomainHandle_t)>(NVTX_CBID_CORE2_DomainRangePop)(d);
      GPROF_FUZZ_CHECK(g_observed.calls == 1 && g_observed.kind == NvtxEventKind::kPop &&
                       !g_observed.has_name && g_observed.domain == domain);
      std::vector<size_t>& stack = stacks_[domain];
      if (stack.empty()) {
        ++unmatched_;
      } else {
        ranges_[stack.back()].open = false;
        stack.pop_back();
      }
      return;
    }
    const uint8_t pick = in_.Byte();
    const uint64_t id = pick == 0 || range_ids_.empty()
                            ? in_.Get<uint64_t>()
                            : range_ids_[(pick - 1) % range_ids_.size()];
    if (d == nullptr) {
      Core<void(NVTX_API*)(nvtxRangeId_t)>(NVTX_CBID_CORE_RangeEnd)(id);
    } else {
      Core2<void(NVTX_API*)(nvtxDomainHandle_t, nvtxRangeId_t)>(NVTX_CBID_CORE2_DomainRangeEnd)(
          d, id);
    }
    if (id == 0) {  // nothing to end: no record
      GPROF_FUZZ_CHECK(g_observed.calls == 0);
      return;
    }
    GPROF_FUZZ_CHECK(g_observed.calls == 1 && g_observed.kind == NvtxEventKind::kEnd &&
                     g_observed.range_id == id);
    ends_.push_back(id);  // matched at the end, as the builder does (an end may come first)
  }

  void CheckProfileOfRun(const Profile& p) {
    GPROF_FUZZ_CHECK(p.counters.host_events_dropped == 0);
    // Ends close the range started with their id, once; the rest are unmatched.
    std::set<uint64_t> ended;
    for (uint64_t id : ends_) {
      const auto it = started_.find(id);
      if (it == started_.end() || !ended.insert(id).second) {
        ++unmatched_;
      } else {
        ranges_[it->second].open = false;
      }
    }
    std::vector<RangeKey> want, got;
    uint64_t open = 0;
    for (const ExpectedRange& r : ranges_) {
      open += r.open;
      const auto flags = static_cast<uint16_t>(r.flags | (r.open ? kRangeOpenAtEnd : 0));
      want.emplace_back(r.name, r.domain, r.category, flags, r.start_ns);
    }
    for (const HostRange& r : p.ranges) {
      GPROF_FUZZ_CHECK(r.start_ns <= r.end_ns);
      GPROF_FUZZ_CHECK(r.tid == CurrentTid());
      got.emplace_back(std::string(p.strings.Get(r.name)), r.domain, r.category, r.flags,
                       r.start_ns);
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    GPROF_FUZZ_CHECK(want == got);
    GPROF_FUZZ_CHECK(p.counters.nvtx_unmatched_pops == unmatched_);
    GPROF_FUZZ_CHECK(p.counters.nvtx_ranges_open_at_end == open);
    std::vector<MarkKey> got_marks;
    for (const HostMark& m : p.marks) {
      got_marks.emplace_back(std::string(p.strings.Get(m.name)), m.domain, m.category, m.ts_ns);
    }
    std::sort(marks_.begin(), marks_.end());
    std::sort(got_marks.begin(), got_marks.end());
    GPROF_FUZZ_CHECK(marks_ == got_marks);
    // Every domain known so far, named; every named thread listed with its name.
    const NvtxRegistrySnapshot s = SnapshotNvtxRegistry();
    GPROF_FUZZ_CHECK(p.domains.size() == s.domains.size());
    for (size_t i = 1; i < p.domains.size(); ++i) {
      GPROF_FUZZ_CHECK(p.strings.Get(p.domains[i]) == s.domains[i]);
    }
    for (const auto& named : s.thread_names) {
      const auto it = std::find_if(p.threads.begin(), p.threads.end(),
                                   [&](const ThreadInfo& t) { return t.tid == named.first; });
      GPROF_FUZZ_CHECK(it != p.threads.end() && p.strings.Get(it->name) == named.second);
    }
    const std::string why = CheckProfile(p);
    if (!why.empty()) std::fprintf(stderr, "CheckProfile: %s\n", why.c_str());
    GPROF_FUZZ_CHECK(why.empty());
  }

  // The snapshot holds exactly what was registered in this process.
  static void CheckSnapshot() {
    const Mirror& m = TheMirror();
    const NvtxRegistrySnapshot s = SnapshotNvtxRegistry();
    GPROF_FUZZ_CHECK(s.domains.size() == m.domains.size() + 1 && s.domains[0].empty());
    GPROF_FUZZ_CHECK(s.strings.size() == m.strings.size() + 1 && s.strings[0].empty());
    for (const auto& [name, entry] : m.domains) GPROF_FUZZ_CHECK(s.domains[entry->index] == name);
    for (const auto& [text, entry] : m.strings) GPROF_FUZZ_CHECK(s.strings[entry->id] == text);
    GPROF_FUZZ_CHECK(s.categories == m.categories);
    GPROF_FUZZ_CHECK(s.thread_names == m.threads);
  }

  Reader& in_;
  std::vector<nvtxDomainHandle_t> domains_;  // returned in this input
  std::vector<nvtxStringHandle_t> strings_;
  std::vector<uint64_t> range_ids_;
  std::vector<std::string> texts_;           // what messages point at, alive for the run
  std::vector<std::vector<wchar_t>> wides_;
  std::vector<ExpectedRange> ranges_;
  std::vector<MarkKey> marks_;
  std::map<uint16_t, std::vector<size_t>> stacks_;  // push stacks per domain (one thread)
  std::map<uint64_t, size_t> started_;              // range id -> ranges_ index
  std::vector<uint64_t> ends_;
  uint64_t unmatched_ = 0;
};

// ---- Builder mode -------------------------------------------------------------------------------

void RunBuilder(Reader* in) {
  NvtxRegistrySnapshot registry;
  const uint8_t domains = in->Byte() % 16;
  for (uint8_t i = 0; i < domains; ++i) registry.domains.push_back(in->Text());
  const uint8_t strings = in->Byte() % 16;
  for (uint8_t i = 0; i < strings; ++i) registry.strings.push_back(in->Text());
  const uint8_t threads = in->Byte() % 8;
  for (uint8_t i = 0; i < threads; ++i) {
    const auto tid = in->Get<uint32_t>();
    registry.thread_names[tid] = in->Text();
  }
  Profile p;
  ProfileBuilder builder(registry, &p);
  uint64_t pushes = 0, pops = 0, ends = 0, marks = 0, api = 0;
  std::set<uint64_t> start_ids;
  std::set<uint32_t> tids;
  static constexpr uint32_t kTids[4] = {1, 2, 77, 0xffffffffu};
  while (!in->empty()) {
    const uint32_t tid = kTids[in->Byte() % 4];
    const auto type = static_cast<HostRecordType>(in->Byte());
    const uint8_t flags = in->Byte();
    const uint32_t size = in->Get<uint16_t>() % 1100;
    std::vector<char> payload(size);  // exactly `size` bytes: ASan sees any read past them
    in->Bytes(payload.data(), size);
    // What the builder will accept, by the record layouts' own readers.
    NvtxBeginFields f;
    const char* name = nullptr;
    uint32_t name_len = 0;
    uint16_t domain = 0;
    uint64_t ts = 0, id = 0;
    ApiHostRecord r;
    switch (type) {
      case HostRecordType::kNvtxPush:
      case HostRecordType::kNvtxStart:
      case HostRecordType::kNvtxMark:
        if (ReadNvtxBegin(type, flags, payload.data(), size, &f, &name, &name_len)) {
          tids.insert(tid);
          if (type == HostRecordType::kNvtxPush) ++pushes;
          else if (type == HostRecordType::kNvtxStart) start_ids.insert(f.id);
          else ++marks;
        }
        break;
      case HostRecordType::kNvtxPop:
      case HostRecordType::kNvtxEnd:
        if (ReadNvtxEnd(type, payload.data(), size, &domain, &ts, &id)) {
          ++(type == HostRecordType::kNvtxPop ? pops : ends);
        }
        break;
      case HostRecordType::kApiCall:
        if (ReadApiRecord(payload.data(), size, &r)) {
          tids.insert(tid);
          ++api;
        }
        break;
      default:
        break;
    }
    builder.Add(tid, type, flags, payload.data(), size);
  }
  builder.Finish(in->Get<uint64_t>());

  const size_t n_strings = p.strings.size();
  const size_t n_domains = p.domains.size();
  GPROF_FUZZ_CHECK(n_domains == std::max<size_t>(1, registry.domains.size()));
  for (size_t i = 1; i < n_domains; ++i) {
    GPROF_FUZZ_CHECK(p.domains[i] < n_strings &&
                     p.strings.Get(p.domains[i]) == registry.domains[i]);
  }
  uint64_t open = 0;
  for (const HostRange& r : p.ranges) {
    GPROF_FUZZ_CHECK(r.name < n_strings && r.shapes < n_strings && r.domain < n_domains);
    GPROF_FUZZ_CHECK(r.start_ns <= r.end_ns);
    open += (r.flags & kRangeOpenAtEnd) != 0;
  }
  // One range per push and per start id; each pop and end closes one or is unmatched.
  GPROF_FUZZ_CHECK(p.ranges.size() == pushes + start_ids.size());
  GPROF_FUZZ_CHECK(p.counters.nvtx_ranges_open_at_end == open);
  GPROF_FUZZ_CHECK(pops + ends == p.counters.nvtx_unmatched_pops + (p.ranges.size() - open));
  GPROF_FUZZ_CHECK(p.marks.size() == marks);
  for (const HostMark& m : p.marks) GPROF_FUZZ_CHECK(m.name < n_strings && m.domain < n_domains);
  GPROF_FUZZ_CHECK(p.api_calls.size() == api);
  for (const ApiCall& c : p.api_calls) GPROF_FUZZ_CHECK(c.start_ns <= c.end_ns);
  for (const auto& [tid, name] : registry.thread_names) tids.insert(tid);
  GPROF_FUZZ_CHECK(p.threads.size() == tids.size());
  auto t = tids.begin();
  for (const ThreadInfo& info : p.threads) {
    GPROF_FUZZ_CHECK(info.tid == *t++ && info.name < n_strings);
    const auto named = registry.thread_names.find(info.tid);
    GPROF_FUZZ_CHECK(p.strings.Get(info.name) ==
                     (named != registry.thread_names.end() ? named->second : std::string()));
  }
}

}  // namespace
}  // namespace gprof::collector

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gprof::collector;
  static const bool ready = [] {
    // Once per process, as the runtime does at init: the host buffers (and clock), the hooks.
    GPROF_FUZZ_CHECK(InitThreadBuffers(uint64_t{256} << 20));
    GPROF_FUZZ_CHECK(InstallNvtxHooks(&GetExportTable));
    SetNvtxObserver(&Observe);
    SetHostCollectionEnabled(true);
    return true;
  }();
  (void)ready;
  Reader in(data, size);
  if ((in.Byte() & 1) == 0) {
    HooksRun(&in).Run();
  } else {
    RunBuilder(&in);
  }
  return 0;
}
