// Output template expansion and the never-overwrite rule (see output_dir.h). Launcher only.
#include "launcher/output_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "config/rank_env.h"
#include "model/dump.h"
#include "model/output_file.h"

namespace gprof::launcher {

std::string RankOf(const TemplateValues& values) {
  int32_t rank = -1, world = -1;
  RankFromEnv(values.env, &rank, &world);
  return RankLabel(rank, world);
}

std::string JobOf(const TemplateValues& values) {
  for (const char* key :
       {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"}) {
    auto it = values.env.find(key);
    if (it != values.env.end() && !it->second.empty()) return it->second;
  }
  return "ppid" + std::to_string(values.parent_pid);
}

const char* DefaultOutputTemplate(const TemplateValues& values) {
  return RankOf(values).empty() ? kDefaultOutputTemplate : kDefaultRankOutputTemplate;
}

std::string ExpandOutputTemplate(const std::string& templ, const TemplateValues& values,
                                 std::string* out) {
  std::string result;
  for (size_t i = 0; i < templ.size(); ++i) {
    if (templ[i] != '%') {
      result += templ[i];
      continue;
    }
    if (i + 1 >= templ.size()) return "output template '" + templ + "' ends with a lone %";
    const char c = templ[++i];
    if (c == 'p') {
      result += std::to_string(values.pid);
    } else if (c == 'h') {
      result += values.host;
    } else if (c == 'n') {
      result += values.program;
    } else if (c == 'r') {
      result += RankOf(values);
    } else if (c == 'j') {
      result += JobOf(values);
    } else if (c == '%') {
      result += '%';
    } else if (c == 'q') {
      const size_t close = templ.find('}', i);
      if (i + 1 >= templ.size() || templ[i + 1] != '{' || close == std::string::npos ||
          close == i + 2) {
        return "output template '" + templ + "': %q needs a variable name: %q{VAR}";
      }
      const std::string var = templ.substr(i + 2, close - i - 2);
      auto it = values.env.find(var);
      if (it != values.env.end()) result += it->second;
      i = close;
    } else {
      return "output template '" + templ + "': unknown %" + std::string(1, c) +
             " (allowed: %p %h %n %r %j %q{VAR} %%)";
    }
  }
  if (result.empty()) return "output template '" + templ + "' expands to an empty path";
  *out = result;
  return "";
}

bool HoldsProfile(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "gprof-run.json" || name == "table.txt" || name == "trace.json" ||
        name.ends_with(kDumpExtension)) {
      return true;
    }
  }
  return false;
}

std::string ClaimOutputDir(const std::string& dir, std::string* chosen) {
  // Every candidate is checked by the output rules (model/output_file.h): a planted link or a
  // directory of another user is refused before the program starts.
  for (int n = 0; n < 10000; ++n) {
    const std::string candidate = n == 0 ? dir : dir + "-" + std::to_string(n);
    std::error_code ec;
    const bool existed = std::filesystem::exists(std::filesystem::symlink_status(candidate, ec));
    int fd = -1;
    if (std::string e = OpenOutputDir(candidate, /*create=*/true, &fd); !e.empty()) return e;
    // An existing directory may refuse our files (its mode, a read-only mount): say so now, not
    // after the run, when the profile would be lost.
    const bool writable = ::faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) == 0;
    const int access_errno = errno;
    ::close(fd);
    if (!writable) {
      return candidate + " is not writable (" + std::strerror(access_errno) +
             "): gprof-run could not save the profile there; make it writable or choose "
             "another directory with -o DIR";
    }
    // It already existed: reuse it only when it holds no profile.
    if (!existed || !HoldsProfile(candidate)) {
      *chosen = candidate;
      return "";
    }
  }
  return "no free name for " + dir + "-N (tried 10000)";
}

}  // namespace gprof::launcher
