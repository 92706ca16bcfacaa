// See process_identity.h.
#include "collector/lifecycle/process_identity.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "config/rank_env.h"
#include "model/dump.h"
#include "support/clock.h"
#include "support/proc_self.h"

extern char** environ;

namespace gprof::collector {
namespace {

constexpr const char* kGpuNotStarted = "not started: the program never initialized CUDA";

}  // namespace

std::map<std::string, std::string> ReadEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  return env;
}

ProfileInfo GatherProcessInfo(const std::map<std::string, std::string>& env) {
  ProfileInfo info;
  info.pid = static_cast<uint32_t>(::getpid());
  info.parent_pid = static_cast<uint32_t>(::getppid());
  const std::vector<std::string> argv = ReadSelfCmdline();
  info.program = ProgramNameFrom(ReadSelfExe(), argv);
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) info.command_line += ' ';
    info.command_line += argv[i];
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) info.hostname = host;
  RankFromEnv(env, &info.rank, &info.world_size);
  info.start_ns = NowNs();
  info.gpu_status = kGpuNotStarted;
  return info;
}

std::string WholeRunDumpPath(const std::string& dir, const ProfileInfo& info) {
  const std::string prefix = dir.empty() ? std::string() : dir + "/";
  return prefix + info.program + "." + std::to_string(info.pid) + kDumpExtension;
}

std::string WindowDumpPath(const std::string& dir, const ProfileInfo& info, bool capture) {
  const std::string prefix = dir.empty() ? std::string() : dir + "/";
  if (capture) {
    return prefix + info.program + "." + std::to_string(info.pid) + ".capture" +
           std::to_string(info.cycle + 1) + kDumpExtension;
  }
  return prefix + info.program + "." + std::to_string(info.pid) + ".cycle" +
         std::to_string(info.cycle) + ".steps" + std::to_string(info.first_step) + "-" +
         std::to_string(info.last_step) + kDumpExtension;
}

std::string ProgramNameFrom(const std::string& exe_path, const std::vector<std::string>& argv) {
  std::string exe = PathBasename(exe_path);
  if (exe.empty() && !argv.empty()) exe = PathBasename(argv[0]);
  if (exe.empty()) exe = "program";
  if (exe.rfind("python", 0) != 0) return exe;
  // Interpreter: name the profile after what it runs.
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-m" && i + 1 < argv.size()) return argv[i + 1];
    if (a == "-c" || a == "-") return exe;
    if (a == "-W" || a == "-X" || a == "-Q") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    const std::string script = PathBasename(a);
    return script.empty() ? exe : script;
  }
  return exe;
}

}  // namespace gprof::collector
