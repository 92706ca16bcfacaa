// What `gprof-run --version` prints: the version, the CUPTI versions the injection library
// decodes (config/cupti_support.h) and where it looks for libcupti. Launcher process only.
#pragma once

#include <string>
#include <vector>

namespace gprof::launcher {

// `version` is the product's (GPROF_VERSION); `toolkit_dirs` the folders of the CUDA toolkit
// the build found that the injection library tries (step 3 of the search; empty when built
// without CUDA: the injection library is then not built either).
std::string VersionText(const std::string& version, const std::vector<std::string>& toolkit_dirs);

// The toolkit folders collector/cupti/loader.cpp tries for this build (the same CMake variables
// collector/CMakeLists.txt hands it); empty when built without CUDA.
std::vector<std::string> BuildToolkitCuptiDirs();

}  // namespace gprof::launcher
