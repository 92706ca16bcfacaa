// `gprof-run diff A B`: compares two profiles (analysis/tables/diff.h), each an output directory or one
// dump (a whole run or a window). Launcher process only.
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/tables/diff.h"
#include "launcher/commands.h"
#include "launcher/cli/flag_suggest.h"
#include "launcher/python/torch_memory_file.h"
#include "launcher/report.h"
#include "launcher/subcommand_args.h"
#include "model/dump.h"

namespace gprof::launcher {
namespace {

constexpr const char* kDiffUsage =
    "Usage: gprof-run diff A B [--format table|csv|json] [--by kernel|op|range|all]\n"
    "Compares two profiles (before and after a change): per kernel, host op and range, count,\n"
    "total and median time in A and in B, delta (B - A) and ratio (B / A), largest change\n"
    "first; totals (wall time, GPU busy, kernels, Self CPU). A and B are gprof-run output\n"
    "directories (every process's whole-run dump, or its window dumps when it has none, as\n"
    "`gprof-run stats` counts them) or .gpdump files. Output on stdout.\n"
    "Exit: 0 ok, 2 usage error or a profile that cannot be read.\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s (gprof-run diff --help shows the usage)\n",
               message.c_str());
  return kExitUsage;
}

// Reads side `label` (A or B) from `path` into `input`, counting its schedule-window (and
// capture) dumps in `*windows`; "" on success, else the error message.
std::string Load(const std::string& label, const std::string& path, DiffInput* input,
                 size_t* windows) {
  std::error_code ec;
  std::vector<std::string> dumps;
  if (std::filesystem::is_directory(path, ec)) {
    dumps = ProcessDumps(path);
    if (dumps.empty()) return label + ": no dump in " + path;
  } else if (std::filesystem::is_regular_file(path, ec)) {
    dumps.push_back(path);
  } else {
    return label + ": " + path + " is neither a directory nor a file";
  }
  for (const std::string& dump : dumps) {
    Profile profile;
    std::string error;
    // A diff with part of a side missing would report changes that did not happen: refuse.
    if (!ReadDump(dump, &profile, &error)) return label + ": " + error;
    std::fputs(AttachTorchMemoryBeside(dump, &profile).c_str(), stderr);
    input->Add(profile);
    DumpName name;
    const std::string file = std::filesystem::path(dump).filename().string();
    if (ParseDumpName(file, &name) && name.window) ++*windows;
  }
  return "";
}

}  // namespace

int DiffCommand(const std::vector<std::string>& args) {
  std::string format = "table", by = "all";
  std::vector<std::string> paths;
  SubcommandArgs a(args);
  while (a.Next()) {
    const std::string& arg = a.arg();
    const std::string& value = a.value();
    if (arg == "--help" || arg == "-h") {
      std::fputs(kDiffUsage, stdout);
      return 0;
    } else if (arg == "--format") {
      if (!a.TakeValue()) return Usage("--format needs a value");
      if (value != "table" && value != "csv" && value != "json") {
        return Usage("--format " + value + ": expected table, csv or json");
      }
      format = value;
    } else if (arg == "--by") {
      if (!a.TakeValue()) return Usage("--by needs a value");
      if (value != "kernel" && value != "op" && value != "range" && value != "all") {
        return Usage("--by " + value + ": expected kernel, op, range or all");
      }
      by = value;
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage("unknown flag " + arg + (a.has_inline_value() ? "=" + value : "") +
                   DidYouMean(arg, FlagsInUsage(kDiffUsage)));
    } else if (paths.size() < 2) {
      paths.push_back(arg);
    } else {
      return Usage("two profiles at a time (got " + paths[0] + ", " + paths[1] + " and " + arg +
                   ")");
    }
  }
  if (paths.size() < 2) return Usage("diff needs two profiles, A and B");

  DiffInput in_a, in_b;
  size_t windows_a = 0, windows_b = 0;
  for (const std::string& error : {Load("A", paths[0], &in_a, &windows_a),
                                   Load("B", paths[1], &in_b, &windows_b)}) {
    if (!error.empty()) {
      std::fprintf(stderr, "gprof-run: error: %s\n", error.c_str());
      return kExitUsage;
    }
  }
  // Summed windows cover only some steps of their run: against a whole run every count and total
  // differs for that reason alone.
  if ((windows_a > 0) != (windows_b > 0)) {
    const bool a_windowed = windows_a > 0;
    std::fprintf(stderr,
                 "gprof-run: warning: %s is %zu schedule window(s) summed, %s is a whole run: the "
                 "two cover different parts of the program and are not comparable (diff the same "
                 "window of each run, or two whole runs)\n",
                 a_windowed ? "A" : "B", a_windowed ? windows_a : windows_b,
                 a_windowed ? "B" : "A");
  }
  ProfileDiff diff = DiffProfiles(in_a, in_b);
  diff.label_a = paths[0];
  diff.label_b = paths[1];
  for (DiffKind kind : kDiffKinds) {
    if (by == DiffKindName(kind)) KeepOnlyKind(&diff, kind);
  }
  const std::string out = format == "json"  ? FormatDiffJson(diff)
                          : format == "csv" ? FormatDiffCsv(diff)
                                            : FormatDiffTable(diff);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace gprof::launcher
