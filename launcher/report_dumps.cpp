// The dumps of an output directory and the trace options (see report.h). Launcher process only.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "launcher/manifest.h"
#include "launcher/report.h"
#include "model/dump.h"

namespace gprof::launcher {

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool ParseDumpName(const std::string& file_name, DumpName* name) {
  static const std::regex kPattern(
      R"(^(.+)\.(\d+)(\.cycle(\d+)\.steps(\d+)-(\d+)|\.capture(\d+))?\.gpdump$)");
  std::smatch m;
  if (!std::regex_match(file_name, m, kPattern)) return false;
  try {
    name->stem = file_name.substr(0, file_name.size() - std::string(kDumpExtension).size());
    name->program = m[1].str();
    name->pid = std::stol(m[2].str());
    name->window = m[3].matched;
    name->capture = m[7].matched;
    if (name->capture) {
      const unsigned long k = std::stoul(m[7].str());
      if (k == 0 || k > UINT32_MAX) return false;
      name->cycle = static_cast<uint32_t>(k - 1);
    } else if (name->window) {
      name->cycle = static_cast<uint32_t>(std::stoul(m[4].str()));
      name->first_step = static_cast<uint32_t>(std::stoul(m[5].str()));
      name->last_step = static_cast<uint32_t>(std::stoul(m[6].str()));
    }
  } catch (const std::exception&) {
    return false;  // numbers out of range
  }
  return true;
}

std::string ForkedWithoutExecText(const std::string& dir, const std::vector<DumpName>& dumps) {
  namespace fs = std::filesystem;
  std::set<long> with_dump;
  for (const DumpName& d : dumps) with_dump.insert(d.pid);
  std::set<long> forked;
  const std::string ext = kForkMarkerExtension;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= ext.size() || !name.ends_with(ext)) continue;
    const std::string stem = name.substr(0, name.size() - ext.size());
    const size_t dot = stem.rfind('.');
    if (dot == std::string::npos) continue;
    char* end = nullptr;
    const long pid = std::strtol(stem.c_str() + dot + 1, &end, 10);
    if (end == nullptr || *end != '\0' || pid <= 0 || with_dump.count(pid)) continue;
    forked.insert(pid);
  }
  if (forked.empty()) return "";
  std::string pids;
  size_t shown = 0;
  for (long pid : forked) {
    if (shown++ == 8) {
      pids += ", ...";
      break;
    }
    pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
  }
  return Plural(forked.size(), "forked process", "forked processes") +
         " did not exec and were not profiled (pid" + (forked.size() == 1 ? " " : "s ") + pids +
         "; docs/LAUNCHER.md, Processes)";
}

std::vector<DumpName> DumpsIn(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<DumpName> dumps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    DumpName name;
    if (entry.is_regular_file(ec) && ParseDumpName(entry.path().filename().string(), &name)) {
      dumps.push_back(name);
    }
  }
  return dumps;
}

std::vector<std::string> ProcessDumps(const std::string& dir) {
  std::vector<DumpName> dumps = DumpsIn(dir);
  std::set<long> whole_run;
  for (const DumpName& d : dumps) {
    if (!d.window) whole_run.insert(d.pid);
  }
  std::sort(dumps.begin(), dumps.end(), [](const DumpName& a, const DumpName& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.cycle != b.cycle) return a.cycle < b.cycle;
    return a.stem < b.stem;
  });
  std::vector<std::string> paths;
  for (const DumpName& d : dumps) {
    if (!d.window || whole_run.count(d.pid) == 0) {
      paths.push_back(dir + "/" + d.stem + kDumpExtension);
    }
  }
  return paths;
}

std::string ParseMaxTraceMb(const std::string& text, TraceOptions* out) {
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || mb == 0 || mb > (1ull << 20)) {
    return "--max-trace-mb " + text + ": expected a whole number of MiB, 1 to 1048576";
  }
  out->max_json_bytes = static_cast<uint64_t>(mb) << 20;
  return "";
}

std::string ParseSegmentRenderMb(const std::string& text, TraceOptions* out) {
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || mb > (1ull << 20)) {
    return "--segment-render-mb " + text + ": expected a whole number of MiB, 0 to 1048576";
  }
  out->segmented_render_bytes = static_cast<uint64_t>(mb) << 20;
  return "";
}

std::string ParseTraceFormats(const std::string& text, TraceOptions* out) {
  TraceOptions f = *out;
  f.json = f.json_gz = f.pftrace = false;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    if (part == "json") f.json = true;
    else if (part == "json.gz") f.json_gz = true;
    else if (part == "pftrace") f.pftrace = true;
    else return "--trace-format " + text + ": '" + part + "' is not one of json, json.gz, pftrace";
    start = comma + 1;
  }
  *out = f;
  return "";
}

long MainPid(const std::string& dir, const std::vector<DumpName>& dumps) {
  Manifest manifest;
  std::string manifest_error;
  if (ReadManifest(dir, &manifest, &manifest_error)) return manifest.pid;
  long main_pid = -1, whole_runs = 0;
  for (const DumpName& d : dumps) {
    if (!d.window) {
      ++whole_runs;
      main_pid = d.pid;
    }
  }
  return whole_runs == 1 ? main_pid : -1;
}

}  // namespace gprof::launcher
