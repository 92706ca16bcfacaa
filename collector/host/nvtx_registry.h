// NVTX names that live longer than one event: domains (nvtxDomainCreate), registered strings
// (nvtxDomainRegisterString) and category names (nvtxNameCategory). Interned once at
// registration; the handles given back to the program point at entries that are never freed, so
// the hot path reads an entry's index without a lock.
//
// Threads: Register*/NameCategory run on application threads but are cold (called once per name)
// and take the registry's mutex. Snapshot runs on the cold builder thread. Nothing here is called
// from push/pop/mark.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gprof::collector {

struct NvtxDomainEntry {
  uint16_t index;  // Profile::domains index; 0 is the default domain
  std::string name;
};

struct NvtxStringEntry {
  uint32_t id;  // NvtxBeginPayload::registered
  std::string text;  // UTF-8
};

// Domains beyond this share the default domain (index 0) and are counted.
inline constexpr uint32_t kMaxNvtxDomains = 65535;

// Returns the entry for `name` (the same entry for the same name), or nullptr when full.
const NvtxDomainEntry* RegisterNvtxDomain(std::string_view utf8_name);
// Returns the entry for `text` (the same entry for the same text).
const NvtxStringEntry* RegisterNvtxString(std::string_view utf8_text);
void NameNvtxCategory(uint16_t domain, uint32_t category, std::string_view utf8_name);
// nvtxNameOsThread: kept here (not in the thread buffers) so names survive window resets.
void NameNvtxThread(uint32_t tid, std::string_view utf8_name);

struct NvtxRegistrySnapshot {
  std::vector<std::string> domains;  // by index; [0] = "" (default domain)
  std::vector<std::string> strings;  // by id; [0] = ""
  std::map<std::pair<uint16_t, uint32_t>, std::string> categories;
  std::map<uint32_t, std::string> thread_names;  // by OS tid; the last name given wins
};
NvtxRegistrySnapshot SnapshotNvtxRegistry();

// UTF-32 (Linux wchar_t) to UTF-8; invalid code points become U+FFFD.
std::string WideToUtf8(const wchar_t* text, size_t length);

}  // namespace gprof::collector
