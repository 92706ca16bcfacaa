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

// The program's own step number: N of a step named "ProfilerStep#N" (torch.profiler's
// record_function scopes, and programs that number their steps so), also with torch's NVTX
// suffixes ("ProfilerStep#3, op_id = 9"); -1 for any other name or a number past 2^32 - 1.
inline int64_t ProgramStepNumber(const char* name, uint32_t len) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  const uint32_t end = TorchOpNameLength(name, len);
  if (end <= kPrefix.size() || std::memcmp(name, kPrefix.data(), kPrefix.size()) != 0) return -1;
  int64_t n = 0;
  for (uint32_t i = static_cast<uint32_t>(kPrefix.size()); i < end; ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
    if (n > int64_t{UINT32_MAX}) return -1;
  }
  return n;
}

}  // namespace gprof::collector
