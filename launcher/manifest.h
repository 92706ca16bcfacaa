// <outdir>/gprof-run.json: written by the launcher before the program starts, read by `report`
// to tell the main process's dump from those of other processes. Launcher process only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gprof::launcher {

inline constexpr const char* kManifestName = "gprof-run.json";

struct Manifest {
  std::string version;                    // gprof-run version that wrote it
  std::vector<std::string> command_line;  // the program and its arguments
  long pid = 0;                           // the direct child's pid (the profiled program)
  long launcher_pid = 0;
  std::string hostname;
  uint64_t start_time_ns = 0;             // CLOCK_REALTIME, when the program was started
};

// Returns "" or what failed.
std::string WriteManifest(const std::string& dir, const Manifest& manifest);
// Returns false when there is no readable manifest in `dir` (`error` says why).
bool ReadManifest(const std::string& dir, Manifest* manifest, std::string* error);

}  // namespace gprof::launcher
