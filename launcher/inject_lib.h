// Finds libgprof_inject.so for the launcher. Launcher process only.
// Search order: $GPROF_INJECT_LIB (tests, unusual installs), <exe_dir>/../lib (build tree
// build/bin -> build/lib, and install tree <prefix>/bin -> <prefix>/lib), <exe_dir>.
#pragma once

#include <string>
#include <vector>

namespace gprof::launcher {

inline constexpr const char* kInjectLibName = "libgprof_inject.so";
inline constexpr const char* kInjectLibEnv = "GPROF_INJECT_LIB";

struct InjectLibSearch {
  std::string found;                  // absolute path, "" when none was found
  std::vector<std::string> tried;     // every candidate, for the error message
};

// `override_path` is the value of GPROF_INJECT_LIB ("" = unset).
InjectLibSearch FindInjectLib(const std::string& override_path);

// Directory of the running executable (/proc/self/exe), "" when unknown.
std::string ExecutableDir();

}  // namespace gprof::launcher
