// See recover_dumps.h.
#include "launcher/recover_dumps.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "model/dump.h"

namespace gprof::launcher {
namespace {

namespace fs = std::filesystem;

// Whether `pid` still runs (or belongs to another user: then it is not ours to judge).
bool Alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

std::string Seconds(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

// model/output_file.cpp's temporary names of whole-run dumps: `<name>.tmp.<pid>`, or `.<n>` after
// when taken. (A window's dump is written whole: its temporary file never holds a segment.)
const std::regex& TempName() {
  static const std::regex kTemp(R"(^(.+\.(\d+)\.gpdump)\.tmp\.(\d+)(\.\d+)?$)");
  return kTemp;
}

}  // namespace

bool HasPartialDumps(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (std::regex_match(entry.path().filename().string(), TempName())) return true;
  }
  return false;
}

int RecoverPartialDumps(const std::string& dir, std::FILE* err) {
  const std::regex& kTemp = TempName();
  int recovered = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    std::smatch m;
    if (!entry.is_regular_file(ec) || !std::regex_match(file, m, kTemp)) continue;
    long writer = 0;
    try {
      writer = std::stol(m[3].str());
    } catch (const std::exception&) {
      continue;
    }
    if (Alive(writer)) continue;  // still writing (a program that outlived the launcher)
    const fs::path final_path = fs::path(dir) / m[1].str();
    if (fs::exists(final_path, ec)) continue;  // its dump was written after all
    Profile p;
    std::string error;
    if (!ReadDump(entry.path().string(), &p, &error)) {
      std::fprintf(err,
                   "gprof-run: warning: %s was left by pid %ld, which ended before its profile "
                   "had one complete segment; nothing to recover (%s)\n",
                   file.c_str(), writer, error.c_str());
      continue;
    }
    fs::rename(entry.path(), final_path, ec);
    if (ec) {
      std::fprintf(err, "gprof-run: warning: cannot rename %s to %s: %s\n", file.c_str(),
                   final_path.filename().c_str(), ec.message().c_str());
      continue;
    }
    ++recovered;
    std::fprintf(err,
                 "gprof-run: pid %ld ended without writing its profile (killed?): recovered %s "
                 "from the %u segment%s it wrote during the run\n",
                 writer, final_path.filename().c_str(), p.info.segments,
                 p.info.segments == 1 ? "" : "s");
  }
  return recovered;
}

std::string IncompleteDumpText(const Profile& p, const std::string& shown) {
  if (p.info.complete) return "";
  std::string text =
      "gprof-run: warning: " + shown + " is incomplete: the program ended without gprof-run's "
      "exit flush (killed, e.g. by SIGKILL or the OOM killer, or it called _exit), so the "
      "profile holds the " + std::to_string(p.info.segments) + " segment" +
      (p.info.segments == 1 ? "" : "s") + " written during the run, up to " +
      Seconds(p.info.end_ns - p.info.start_ns) + " after the start";
  if (p.info.incomplete_launches_in_flight != 0) {
    text += "; the GPU work of the last " + std::to_string(p.info.incomplete_launches_in_flight) +
            " launches (made after the last GPU record it holds ended) is missing";
  }
  if (p.info.incomplete_tail_bytes != 0) {
    text += "; a last segment of " + std::to_string(p.info.incomplete_tail_bytes) +
            " bytes was cut short and is not read";
  }
  return text + ". Ranges still open then are missing.";
}

}  // namespace gprof::launcher
