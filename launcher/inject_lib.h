// Finds libgprof_inject.so and the Python start-up hook for the launcher. Launcher process only.
// Library search order: $GPROF_INJECT_LIB (tests, unusual installs), <exe_dir>/../lib (build tree
// build/bin -> build/lib, and install tree <prefix>/bin -> <prefix>/lib), <exe_dir>.
// The Python hook folder (python/gprof_run_hook/, copied by python/CMakeLists.txt) is at
// <exe_dir>/../lib/gprof-run/python in both trees.
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

// The folder holding gprof-run's sitecustomize.py: <exe_dir>/../lib/gprof-run/python, absolute
// and normalized; `found` is "" when it (or its sitecustomize.py) is missing.
inline constexpr const char* kPythonHookSubdir = "../lib/gprof-run/python";
InjectLibSearch FindPythonHookDir();

// Directory of the running executable (/proc/self/exe), "" when unknown.
std::string ExecutableDir();

}  // namespace gprof::launcher
