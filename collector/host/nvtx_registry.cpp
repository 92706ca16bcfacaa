// NVTX registry (see nvtx_registry.h). Cold code on application threads: one mutex, held only
// while looking up or inserting a name; nothing is called while holding it.
#include "collector/host/nvtx_registry.h"

#include <mutex>
#include <unordered_map>

namespace gprof::collector {
namespace {

struct Registry {
  // Guards everything below. Leaf lock: nothing else is locked or called while holding it.
  std::mutex mutex;
  std::unordered_map<std::string, NvtxDomainEntry*> domains_by_name;
  std::vector<NvtxDomainEntry*> domains{nullptr};  // [0] = default domain
  std::unordered_map<std::string, NvtxStringEntry*> strings_by_text;
  std::vector<NvtxStringEntry*> strings{nullptr};  // [0] = no string
  std::map<std::pair<uint16_t, uint32_t>, std::string> categories;
  std::map<uint32_t, std::string> thread_names;
};

// Built on first use and never destroyed: hooks may run during and after static destruction.
Registry& TheRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

}  // namespace

const NvtxDomainEntry* RegisterNvtxDomain(std::string_view utf8_name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.domains_by_name.find(std::string(utf8_name));
  if (it != r.domains_by_name.end()) return it->second;
  if (r.domains.size() > kMaxNvtxDomains) return nullptr;
  auto* entry = new NvtxDomainEntry{static_cast<uint16_t>(r.domains.size()), std::string(utf8_name)};
  r.domains.push_back(entry);
  r.domains_by_name.emplace(entry->name, entry);
  return entry;
}

const NvtxStringEntry* RegisterNvtxString(std::string_view utf8_text) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.strings_by_text.find(std::string(utf8_text));
  if (it != r.strings_by_text.end()) return it->second;
  auto* entry = new NvtxStringEntry{static_cast<uint32_t>(r.strings.size()), std::string(utf8_text)};
  r.strings.push_back(entry);
  r.strings_by_text.emplace(entry->text, entry);
  return entry;
}

void NameNvtxCategory(uint16_t domain, uint32_t category, std::string_view utf8_name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.categories[{domain, category}] = std::string(utf8_name);
}

void NameNvtxThread(uint32_t tid, std::string_view utf8_name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.thread_names[tid] = std::string(utf8_name);
}

NvtxRegistrySnapshot SnapshotNvtxRegistry() {
  Registry& r = TheRegistry();
  NvtxRegistrySnapshot s;
  std::lock_guard<std::mutex> lock(r.mutex);
  s.domains.reserve(r.domains.size());
  for (const NvtxDomainEntry* d : r.domains) s.domains.push_back(d ? d->name : std::string());
  s.strings.reserve(r.strings.size());
  for (const NvtxStringEntry* e : r.strings) s.strings.push_back(e ? e->text : std::string());
  s.categories = r.categories;
  s.thread_names = r.thread_names;
  return s;
}

std::string WideToUtf8(const wchar_t* text, size_t length) {
  std::string out;
  out.reserve(length);
  for (size_t i = 0; i < length; ++i) {
    uint32_t cp = static_cast<uint32_t>(text[i]);
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

}  // namespace gprof::collector
