// Injection library and Python hook search (see inject_lib.h). Launcher process only.
#include "launcher/inject_lib.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace gprof::launcher {

std::string ExecutableDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

InjectLibSearch FindInjectLib(const std::string& override_path) {
  InjectLibSearch s;
  if (!override_path.empty()) {
    s.tried.push_back(override_path);
  } else if (const std::string dir = ExecutableDir(); !dir.empty()) {
    s.tried.push_back(dir + "/../lib/" + kInjectLibName);
    s.tried.push_back(dir + "/" + kInjectLibName);
  }
  for (const std::string& candidate : s.tried) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), R_OK) == 0) {
      // The driver dlopens it from the program's cwd: hand it an absolute, normalized path.
      s.found = std::filesystem::weakly_canonical(std::filesystem::absolute(candidate), ec).string();
      if (ec) s.found = std::filesystem::absolute(candidate).string();
      break;
    }
  }
  return s;
}

InjectLibSearch FindPythonHookDir() {
  InjectLibSearch s;
  const std::string dir = ExecutableDir();
  if (dir.empty()) return s;
  const std::string candidate = dir + "/" + kPythonHookSubdir;
  s.tried.push_back(candidate);
  std::error_code ec;
  if (std::filesystem::is_regular_file(candidate + "/sitecustomize.py", ec)) {
    // Python resolves PYTHONPATH entries against the program's cwd: hand it an absolute path.
    s.found = std::filesystem::weakly_canonical(std::filesystem::absolute(candidate), ec).string();
    if (ec) s.found = std::filesystem::absolute(candidate).lexically_normal().string();
  }
  return s;
}

}  // namespace gprof::launcher
