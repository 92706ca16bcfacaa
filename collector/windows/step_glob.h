// Step-name matching for NVTX step sources (GPROF_STEP=nvtx:GLOB). Runs on application threads
// inside NVTX hooks: no allocation, no locale, no locks (fnmatch may allocate in multibyte locales,
// which Python sets).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace gprof::collector {

// Shell-style glob on bytes: `*` any run, `?` any one byte, everything else literal. Iterative,
// backtracking only to the last `*`. `name` need not be NUL-terminated; nullptr never matches.
inline bool NameMatchesGlob(std::string_view pattern, const char* name, uint32_t len) {
  if (name == nullptr) return false;
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < len) {
    if (p < pattern.size() && pattern[p] != '*' && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The op name of a PyTorch NVTX range text: what comes before torch's first ", seq = " or
// ", op_id = " suffix (model/torch_op_name.h), so that GPROF_STEP=nvtx:matmul_add matches torch's
// "matmul_add, op_id = 7" as it matches the table's row. The whole text when there is none.
// Two memmem scans: this runs per NVTX range begin while an NVTX step source is on.
inline uint32_t TorchOpNameLength(const char* name, uint32_t len) {
  if (name == nullptr) return 0;
  uint32_t cut = len;
  for (std::string_view key : {std::string_view(", seq = "), std::string_view(", op_id = ")}) {
    const void* at = memmem(name, cut, key.data(), key.size());
    if (at != nullptr) cut = static_cast<uint32_t>(static_cast<const char*>(at) - name);
  }
  return cut;
}

// A step name matches when the text, or its torch op name, matches the glob.
inline bool StepNameMatches(std::string_view pattern, const char* name, uint32_t len) {
  if (NameMatchesGlob(pattern, name, len)) return true;
  const uint32_t op = TorchOpNameLength(name, len);
  return op != len && op != 0 && NameMatchesGlob(pattern, name, op);
}

}  // namespace gprof::collector
