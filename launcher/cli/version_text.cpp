// `gprof-run --version` (see version_text.h). Launcher process only.
#include "launcher/cli/version_text.h"

#include <string>

#include "config/cupti_support.h"

namespace gprof::launcher {
namespace {

// 130001 -> "13.0.1" (CUDA 13's CUPTI_API_VERSION is xxyyzz: major, minor, CUPTI update); CUDA
// 12's small integers -> their toolkit, as cupti_version.h of 12.9 lists them (it has no v25).
std::string ApiVersionName(int v) {
  static constexpr const char* kCuda12[] = {"CUDA 12.0", "CUDA 12.2", "CUDA 12.3", "CUDA 12.4",
                                            "CUDA 12.5", "CUDA 12.6", "",          "CUDA 12.8",
                                            "CUDA 12.9", "CUDA 12.9 Update 1"};
  if (v >= 19 && v <= 28 && *kCuda12[v - 19] != '\0') return kCuda12[v - 19];
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace

std::string VersionText(const std::string& version, const std::vector<std::string>& toolkit_dirs) {
  std::string out = "gprof-run " + version + "\n";
  out += "CUPTI it decodes:\n";
  for (const CuptiSupport& s : kCuptiSupported) {
    out += "  libcupti.so." + std::to_string(s.major) + ", CUPTI API " +
           std::to_string(s.min_api_version) + " (" + ApiVersionName(s.min_api_version) +
           ") and later updates of that minor; tested up to " +
           std::to_string(s.max_tested_api_version) + " (" +
           ApiVersionName(s.max_tested_api_version) + "); layouts of " + s.layouts + "\n";
  }
  out += "libcupti search, first found wins (the closing line and trace.json name the one used):\n";
  int n = 0;
  for (const char* where : kCuptiSearchOrder) {
    out += "  " + std::to_string(++n) + ". " + where + "\n";
  }
  if (toolkit_dirs.empty()) {
    out += "built without the CUDA toolkit\n";
  } else {
    out += "built with the CUDA toolkit; step 3 tries";
    for (const std::string& dir : toolkit_dirs) out += " " + dir;
    out += "\n";
  }
  return out;
}

std::vector<std::string> BuildToolkitCuptiDirs() {
  std::vector<std::string> dirs;
  const std::string lib = GPROF_CUDA_LIBRARY_DIR;
  const std::string root = GPROF_CUDA_TOOLKIT_ROOT;
  if (!lib.empty()) dirs.push_back(lib);
  if (!root.empty()) {
    dirs.push_back(root + "/extras/CUPTI/lib64");
    dirs.push_back(root + "/lib64");
  }
  return dirs;
}

}  // namespace gprof::launcher
