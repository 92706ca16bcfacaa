// See process_identity.h.
#include "collector/lifecycle/process_identity.h"

#include <sys/timex.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

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
  info.placement = GatherPlacement(env);
  info.start_ns = NowNs();
  info.gpu_status = kGpuNotStarted;
  return info;
}

ProcessPlacement GatherPlacement(const std::map<std::string, std::string>& env) {
  ProcessPlacement p;
  NodePlaceFromEnv(env, &p.local_rank, &p.node_rank);
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::getline(boot, p.boot_id);
  const ClockPairReading c = ReadClockPairNow();
  p.clock_start = {c.realtime_ns, c.monotonic_ns, c.read_ns};
  timex tx{};  // modes 0: read only
  const int state = ::adjtimex(&tx);
  if (state >= 0) {
    p.ntp.known = true;
    p.ntp.state = state;
    p.ntp.status = tx.status;
    p.ntp.offset_ns = (tx.status & STA_NANO) ? tx.offset : int64_t{tx.offset} * 1000;
    p.ntp.maxerror_us = tx.maxerror;
    p.ntp.esterror_us = tx.esterror;
  }
  return p;
}

void StampClockEnd(ProfileInfo* info) {
  const ClockPairReading c = ReadClockPairNow();
  info->placement.clock_end = {c.realtime_ns, c.monotonic_ns, c.read_ns};
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
