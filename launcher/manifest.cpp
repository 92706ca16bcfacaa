// Manifest writer and reader (see manifest.h). Launcher process only.
#include "launcher/manifest.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "model/output_file.h"

namespace gprof::launcher {

std::string WriteManifest(const std::string& dir, const Manifest& m) {
  const nlohmann::json j = {
      {"tool", "gprof-run"},          {"version", m.version},
      {"command_line", m.command_line}, {"pid", m.pid},
      {"launcher_pid", m.launcher_pid}, {"hostname", m.hostname},
      {"start_time_ns", m.start_time_ns},
  };
  const std::string path = dir + "/" + kManifestName;
  return WriteOutputFile(path, j.dump(2) + "\n", /*create_dirs=*/false);
}

bool ReadManifest(const std::string& dir, Manifest* m, std::string* error) {
  const std::string path = dir + "/" + kManifestName;
  std::ifstream in(path);
  if (!in) {
    *error = path + ": not found";
    return false;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    m->version = j.value("version", "");
    m->command_line = j.value("command_line", std::vector<std::string>{});
    m->pid = j.at("pid").get<long>();
    m->launcher_pid = j.value("launcher_pid", 0L);
    m->hostname = j.value("hostname", "");
    m->start_time_ns = j.value("start_time_ns", uint64_t{0});
  } catch (const std::exception& e) {
    *error = path + ": unreadable manifest: " + e.what();
    return false;
  }
  return true;
}

}  // namespace gprof::launcher
