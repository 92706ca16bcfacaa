// `gprof-run export [--type sqlite] PATH [-o FILE]`: the dumps of an output directory (or one
// dump) as SQLite databases with Nsight Systems' table names (outputs/sqlite/sqlite_export.h,
// docs/EXPORT.md). Launcher process only.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "launcher/commands.h"
#include "launcher/cli/flag_suggest.h"
#include "launcher/render/segmented_export.h"
#include "launcher/render/segmented_render.h"
#include "launcher/report.h"
#include "launcher/subcommand_args.h"
#include "model/dump.h"
#include "outputs/sqlite/sqlite_export.h"

namespace gprof::launcher {
namespace {

constexpr const char* kExportUsage =
    "Usage: gprof-run export [--type sqlite] PATH [-o FILE] [--segment-render-mb N] [--quiet]\n"
    "Writes every dump of the output directory PATH as PATH/<dump>.sqlite (one .gpdump file:\n"
    "<dump>.sqlite next to it; -o FILE names the output when there is one dump): an SQLite\n"
    "database with Nsight Systems' table and column names (nsys export --type sqlite), for the\n"
    "data gprof-run records (docs/EXPORT.md). sqlite is the only --type. A dump over\n"
    "--segment-render-mb MiB (default 128) is read segment by segment, in bounded memory.\n"
    "Exit: 0 all written, 1 no dump, or a dump could not be read or written, 2 usage error.\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s\n%s", message.c_str(), kExportUsage);
  return kExitUsage;
}

}  // namespace

std::string CheckExportType(const std::string& type) {
  if (type != "sqlite") {
    return "export type '" + type + "' is not known: gprof-run exports sqlite (nsys's other "
           "export types are not supported)";
  }
  if (!SqliteExportAvailable()) {
    return "this gprof-run was built without SQLite, so it cannot export sqlite (install "
           "libsqlite3-dev and rebuild)";
  }
  return "";
}

int ExportCommand(const std::vector<std::string>& args) {
  std::string type = "sqlite", path, output;
  bool quiet = false;
  TraceOptions segments;  // --segment-render-mb
  SubcommandArgs a(args);
  while (a.Next()) {
    const std::string& arg = a.arg();
    const std::string& value = a.value();
    if (arg == "--help" || arg == "-h") {
      std::fputs(kExportUsage, stdout);
      return 0;
    } else if (arg == "--type" || arg == "-t") {
      if (!a.TakeValue()) return Usage(arg + " needs a value");
      type = value;
    } else if (arg == "--output" || arg == "-o") {
      if (!a.TakeValue()) return Usage(arg + " needs a value");
      output = value;
    } else if (arg == "--segment-render-mb") {
      if (!a.TakeValue()) return Usage(arg + " needs a value");
      if (std::string e = ParseSegmentRenderMb(value, &segments); !e.empty()) return Usage(e);
    } else if ((arg == "--quiet" || arg == "-q") && !a.has_inline_value()) {
      quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage("unknown flag " + arg + (a.has_inline_value() ? "=" + value : "") +
                   DidYouMean(arg, FlagsInUsage(kExportUsage)));
    } else if (path.empty()) {
      path = arg;
    } else {
      return Usage("one directory or dump at a time (got " + path + " and " + arg + ")");
    }
  }
  if (std::string e = CheckExportType(type); !e.empty()) return Usage("--type " + type + ": " + e);
  if (path.empty()) return Usage("no directory or dump given");

  // (dump path, output path) pairs, in RenderDirectory's order.
  std::vector<std::pair<std::string, std::string>> jobs;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<DumpName> dumps = DumpsIn(path);
    std::sort(dumps.begin(), dumps.end(), [](const DumpName& x, const DumpName& y) {
      if (x.pid != y.pid) return x.pid < y.pid;
      if (x.window != y.window) return !x.window;
      if (x.cycle != y.cycle) return x.cycle < y.cycle;
      return x.stem < y.stem;
    });
    for (const DumpName& d : dumps) {
      jobs.emplace_back(path + "/" + d.stem + kDumpExtension, SqliteExportPath(path, d));
    }
  } else if (std::filesystem::is_regular_file(path, ec)) {
    const std::filesystem::path p(path);
    DumpName d;
    d.stem = p.filename().string();
    const std::string ext = kDumpExtension;
    if (d.stem.size() > ext.size() && d.stem.ends_with(ext)) d.stem.resize(d.stem.size() - ext.size());
    const std::string parent = p.parent_path().string();
    jobs.emplace_back(path, SqliteExportPath(parent.empty() ? "." : parent, d));
  } else {
    return Usage(path + " is neither a directory nor a file");
  }
  if (jobs.empty()) {
    std::fprintf(stderr, "gprof-run: no dump in %s\n", path.c_str());
    return kExitInternal;
  }
  if (!output.empty()) {
    if (jobs.size() != 1) {
      return Usage("-o " + output + " names one file, but " + path + " holds " +
                   std::to_string(jobs.size()) +
                   " dumps: leave -o out to write <dump>.sqlite beside each");
    }
    jobs[0].second = output;
  }

  int failed = 0;
  for (const auto& [dump, out] : jobs) {
    // A long run's dump segment by segment; the reader's errors name the dump.
    const bool segmented = RenderInSegments(dump, segments);
    Profile profile;
    std::string error;
    if (!segmented && !ReadDump(dump, &profile, &error)) {
      std::fprintf(stderr, "gprof-run: error: %s; not exported\n", error.c_str());
      ++failed;
      continue;
    }
    try {
      const SqliteExportStats s =
          segmented ? ExportDumpInSegments(dump, out) : WriteSqliteExport(profile, out);
      if (!quiet) {
        std::fprintf(stderr, "gprof-run: wrote %s (%llu rows, %llu bytes)\n", out.c_str(),
                     static_cast<unsigned long long>(s.rows),
                     static_cast<unsigned long long>(s.bytes));
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gprof-run: error: %s: not exported: %s\n", dump.c_str(), e.what());
      ++failed;
    }
  }
  return failed == 0 ? 0 : kExitInternal;
}

}  // namespace gprof::launcher
