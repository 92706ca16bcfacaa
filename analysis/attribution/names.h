// Display names for profile records, as Kineto / torch.profiler show them (launcher process only).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/profile.h"

namespace gprof {

// abi::__cxa_demangle of a kernel's mangled name; the raw name when it does not demangle.
std::string DemangleKernelName(std::string_view mangled);

// "Memcpy HtoD (Pageable -> Device)", "Memcpy PtoP (Device -> Device)".
std::string MemcpyName(const Memcpy& m);
// "Memset (Device)".
std::string MemsetName(const Memset& m);
// "Stream Sync", "Event Sync", "Stream Wait Event", "Context Sync", "Unknown Sync".
std::string_view SyncName(SyncKind kind);
// CUPTI overhead kinds, e.g. "CUPTI activity buffer flush".
std::string_view OverheadName(OverheadKind kind);

// Every name the exporters need, resolved once per profile: API names by (domain, cbid),
// kernel names demangled once per distinct string id.
class NameCache {
 public:
  explicit NameCache(const Profile& profile);
  // Name of an API call; "cuda_runtime cbid N" / "cuda_driver cbid N" when the profile lacks it.
  // The reference stays valid for the cache's lifetime.
  const std::string& ApiCallName(const ApiCall& call);
  const std::string& KernelName(StringId mangled);

 private:
  const Profile& profile_;
  // (domain << 16 | cbid) -> name; a node map so that returned references stay valid.
  std::unordered_map<uint32_t, std::string> apis_;
  std::vector<std::string> kernels_;  // by StringId; empty = not demangled yet
  std::vector<bool> kernel_done_;
};

}  // namespace gprof
