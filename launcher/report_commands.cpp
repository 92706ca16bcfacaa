// `gprof-run report DIR` and `gprof-run check TRACE.json...`. Launcher process only.
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "analysis/tables/op_stacks.h"
#include "launcher/commands.h"
#include "launcher/cli/flag_suggest.h"
#include "launcher/flags.h"
#include "launcher/html_page.h"
#include "launcher/report.h"
#include "launcher/subcommand_args.h"
#include "outputs/table/table.h"
#include "outputs/trace/trace_check.h"

namespace gprof::launcher {
namespace {

constexpr const char* kReportUsage =
    "Usage: gprof-run report DIR [--sort-by KEY] [--row-limit N] [--trace-format LIST]\n"
    "                            [--max-trace-mb N] [--segment-render-mb N] [--profile-memory]\n"
    "                            [--html | --no-html] [--with-stack | --group-by-stack N]\n"
    "                            [--quiet]\n"
    "Re-renders DIR/table.txt, trace.json, trace.pftrace, findings.json/.txt and report.html (and\n"
    "<stem>.* for every other dump) from the raw dumps in DIR; --trace-format picks the traces\n"
    "(json, json.gz, pftrace) and --max-trace-mb cuts larger JSON traces into parts by time;\n"
    "a dump over --segment-render-mb (128) MiB is rendered segment by segment.\n"
    "--html writes only the report.html pages (linking the files already there), --no-html\n"
    "everything but them. --with-stack (or --group-by-stack N frames, 5 with --with-stack)\n"
    "groups the table by Python source location, from the run's .pysamples (sampled).\n"
    "Exit: 0 all rendered, 1 no dump or a dump could not be rendered,\n"
    "2 usage error.\n";
constexpr const char* kCheckUsage =
    "Usage: gprof-run check TRACE.json[.gz]...\n"
    "Checks traces against Perfetto's JSON importer rules; prints every violation.\n"
    "Exit: 0 clean, 1 any violation, 2 usage error.\n";

int Usage(const char* usage, const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s\n%s", message.c_str(), usage);
  return kExitUsage;
}

}  // namespace

int ReportCommand(const std::vector<std::string>& args) {
  TableOptions table;
  TraceOptions traces;
  HtmlOptions html;
  bool html_flag = false, no_html_flag = false;
  bool quiet = false;
  std::string dir;
  SubcommandArgs a(args);
  while (a.Next()) {
    const std::string& arg = a.arg();
    const std::string& value = a.value();
    if (arg == "--help" || arg == "-h") {
      std::fputs(kReportUsage, stdout);
      return 0;
    } else if (arg == "--sort-by") {
      if (!a.TakeValue()) return Usage(kReportUsage, "--sort-by needs a value");
      if (std::string e = CheckSortKey(value); !e.empty()) return Usage(kReportUsage, e);
      table.sort_by = value;
    } else if (arg == "--row-limit") {
      if (!a.TakeValue()) return Usage(kReportUsage, "--row-limit needs a value");
      if (!ParseRowLimit(value, &table.row_limit)) {
        return Usage(kReportUsage,
                     "--row-limit " + value + ": expected -1 (all rows) or a whole number >= 0");
      }
    } else if (arg == "--trace-format") {
      if (!a.TakeValue()) return Usage(kReportUsage, "--trace-format needs a value");
      if (std::string e = ParseTraceFormats(value, &traces); !e.empty()) {
        return Usage(kReportUsage, e);
      }
    } else if (arg == "--profile-memory") {
      table.profile_memory = true;
    } else if (arg == "--with-stack") {
      if (table.group_by_stack == 0) table.group_by_stack = kDefaultGroupByStack;
    } else if (arg == "--group-by-stack") {
      if (!a.TakeValue()) return Usage(kReportUsage, "--group-by-stack needs a value");
      if (std::string e = ParseGroupByStack(value, &table.group_by_stack); !e.empty()) {
        return Usage(kReportUsage, e);
      }
    } else if (arg == "--max-trace-mb") {
      if (!a.TakeValue()) return Usage(kReportUsage, "--max-trace-mb needs a value");
      if (std::string e = ParseMaxTraceMb(value, &traces); !e.empty()) return Usage(kReportUsage, e);
    } else if (arg == "--segment-render-mb") {
      if (!a.TakeValue()) return Usage(kReportUsage, "--segment-render-mb needs a value");
      if (std::string e = ParseSegmentRenderMb(value, &traces); !e.empty()) {
        return Usage(kReportUsage, e);
      }
    } else if (arg == "--html") {
      html_flag = true;
    } else if (arg == "--no-html") {
      no_html_flag = true;
    } else if (arg == "--quiet" || arg == "-q") {
      quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage(kReportUsage,
                   "unknown flag " + arg + DidYouMean(arg, FlagsInUsage(kReportUsage)));
    } else if (dir.empty()) {
      dir = arg;
    } else {
      return Usage(kReportUsage, "one directory at a time (got " + dir + " and " + arg + ")");
    }
  }
  if (dir.empty()) return Usage(kReportUsage, "no directory given");
  if (html_flag && no_html_flag) return Usage(kReportUsage, "--html and --no-html together");
  html.only = html_flag;
  html.write = !no_html_flag;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Usage(kReportUsage, dir + " is not a directory");
  }
  const RenderSummary s = RenderDirectory(dir, table, traces, quiet, stderr, html);
  if (!s.closing_line.empty()) std::fprintf(stderr, "%s\n", s.closing_line.c_str());
  return s.dumps > 0 && s.failed == 0 ? 0 : 1;
}

int CheckCommand(const std::vector<std::string>& args) {
  if (args.empty()) return Usage(kCheckUsage, "no trace given");
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::fputs(kCheckUsage, stdout);
      return 0;
    }
    if (!a.empty() && a[0] == '-') return Usage(kCheckUsage, "unknown flag " + a);
  }
  bool any = false;
  for (const std::string& path : args) {
    const std::vector<TraceViolation> violations = CheckTrace(path);
    for (const TraceViolation& v : violations) {
      std::printf("%s: %s: %s\n", path.c_str(), v.rule.c_str(), v.message.c_str());
    }
    if (violations.empty()) {
      std::printf("%s: ok\n", path.c_str());
    } else {
      std::printf("%s: %zu violation(s)\n", path.c_str(), violations.size());
      any = true;
    }
  }
  return any ? 1 : 0;
}

}  // namespace gprof::launcher
