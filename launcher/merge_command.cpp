// `gprof-run merge DIR... [-o OUTDIR]`: the merged view (launcher/merged_view.h) of the dumps in
// one or more output directories. Launcher process only.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "launcher/commands.h"
#include "launcher/cli/flag_suggest.h"
#include "launcher/flags.h"
#include "launcher/merged_view.h"
#include "launcher/subcommand_args.h"

namespace gprof::launcher {
namespace {

constexpr const char* kMergeUsage =
    "Usage: gprof-run merge DIR... [-o OUTDIR] [--row-limit N] [--no-html] [--quiet]\n"
    "                       [--full-trace | --ranks LIST]\n"
    "Merges the dumps of the processes in DIR... (the ranks of a distributed run; one directory\n"
    "per host, or one shared one) into one trace, a process group per rank named\n"
    "\"rank N (host:pid)\" on one time origin, and one table with min / median / max across the\n"
    "processes per row, and the distributed findings (straggler, imbalance, comm_overlap:\n"
    "docs/FINDINGS.md): OUTDIR/trace.json, table.txt, findings.json, findings.txt and\n"
    "report.html (a row per rank; not with --no-html) from the whole-run dumps,\n"
    "OUTDIR/cycle<C>.trace.json, ... per schedule cycle. OUTDIR defaults to\n"
    "PARENT/merged/ when every DIR is in the same PARENT (one gprof-run per rank:\n"
    "gprof_traces/app.<job>/rank*), else the first DIR's merged/. The whole run's table and findings are also printed on stderr unless\n"
    "--quiet.\n"
    "A trace past about 1 GB (Perfetto's UI fails near it) holds a summary of every rank (its\n"
    "steps) and the slowest ranks in full; a note and the merged findings say which.\n"
    "--full-trace writes every rank in full whatever the size; --ranks LIST (0,3,5-7) writes\n"
    "those ranks in full and the summary of every rank.\n"
    "Exit: 0 merged, 1 an output could not be written, 2 usage error or bad input (a missing\n"
    "directory, no dump, an unreadable dump: nothing is written then).\n";

// Several directories side by side (gprof_traces/app.<job>/rank0, rank1, ...: one gprof-run
// per rank): their parent's merged/; else the first directory's.
std::string DefaultMergeDir(const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(dirs[0]).lexically_normal().parent_path();
  bool siblings = dirs.size() > 1 && !parent.empty();
  for (const std::string& d : dirs) {
    siblings = siblings && fs::path(d).lexically_normal().parent_path() == parent;
  }
  return (siblings ? parent.string() : dirs[0]) + "/merged";
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s\n%s", message.c_str(), kMergeUsage);
  return kExitUsage;
}

int BadInput(const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s; nothing was merged\n", message.c_str());
  return kExitUsage;
}

}  // namespace

int MergeCommand(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string out_dir;
  int row_limit = kAutoRowLimit;
  bool quiet = false;
  bool html = true;
  MergedTraceChoice choice{false, {}, kJsonTraceComfortBytes};
  SubcommandArgs a(args);
  while (a.Next()) {
    const std::string& arg = a.arg();
    const std::string& value = a.value();
    if (arg == "--help" || arg == "-h") {
      std::fputs(kMergeUsage, stdout);
      return 0;
    } else if (arg == "-o" || arg == "--output") {
      if (!a.TakeValue()) return Usage(arg + " needs a directory");
      out_dir = value;
    } else if (arg.rfind("-o", 0) == 0 && arg.size() > 2 && arg[2] != '-') {
      out_dir = arg.substr(2);  // -oDIR
    } else if (arg == "--row-limit") {
      if (!a.TakeValue()) return Usage("--row-limit needs a value");
      if (!ParseRowLimit(value, &row_limit)) {
        return Usage("--row-limit " + value + ": expected -1 (all rows) or a whole number >= 0");
      }
    } else if (arg == "--full-trace" && !a.has_inline_value()) {
      choice.full_trace = true;
    } else if (arg == "--ranks") {
      if (!a.TakeValue()) return Usage("--ranks needs a list of ranks");
      if (!ParseRankList(value, &choice.ranks)) {
        return Usage("--ranks " + value + ": expected ranks such as 0,3,5-7");
      }
    } else if (arg == "--no-html" && !a.has_inline_value()) {
      html = false;
    } else if ((arg == "--quiet" || arg == "-q") && !a.has_inline_value()) {
      quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage("unknown flag " + arg + (a.has_inline_value() ? "=" + value : "") +
                   DidYouMean(arg, FlagsInUsage(kMergeUsage)));
    } else {
      dirs.push_back(arg);
    }
  }
  if (dirs.empty()) return Usage("no directory given");
  if (choice.full_trace && !choice.ranks.empty()) {
    return Usage("--full-trace and --ranks choose differently; give one");
  }
  if (out_dir.empty()) out_dir = DefaultMergeDir(dirs);

  std::string error;
  const std::vector<MergeGroup> groups = FindMergeGroups(dirs, &error);
  if (!error.empty()) return BadInput(error);
  if (groups.empty()) {
    std::string list;
    for (const std::string& d : dirs) list += (list.empty() ? "" : ", ") + d;
    return BadInput("no dump in " + list);
  }
  const MergeResult r = WriteMergedView(groups, out_dir, row_limit, html, choice);
  if (!r.error.empty()) {
    if (r.bad_input) return BadInput(r.error);
    std::fprintf(stderr, "gprof-run: error: %s; no merged output was written\n", r.error.c_str());
    return kExitInternal;
  }
  std::fputs(r.notes.c_str(), stderr);
  if (!quiet) {
    // The whole run's table and findings when there is one (groups come whole run first).
    std::fputs(r.groups.front().table.c_str(), stderr);
  }
  std::fprintf(stderr, "gprof-run: %s\n", MergedViewText(r).c_str());
  return 0;
}

}  // namespace gprof::launcher
