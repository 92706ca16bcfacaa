// Step-name matching for NVTX step sources (GPROF_STEP=nvtx:GLOB). Runs on application threads
// inside NVTX hooks: no allocation, no locale, no locks (fnmatch may allocate in multibyte locales,
// which Python sets).
#pragma once

#include <cstdint>
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

}  // namespace gprof::collector
