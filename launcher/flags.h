// Command-line flags of `gprof-run [options] [--] program [args...]`. Runs in the launcher
// process only (never inside the profiled program), so it may allocate and throw freely.
//
// One table (kFlags in flags.cpp) lists every flag: the GPROF_* key it sets (flags win over the
// inherited environment), its value name and help. --help is generated from it, and a test checks
// that every key of config::ConfigKeys() has a flag.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/report.h"
#include "outputs/table/table.h"

namespace gprof::launcher {

struct FlagSpec {
  std::string_view long_name;   // without the leading "--"
  char short_name;              // 0 = none
  std::string_view key;         // GPROF_* key it sets; "" for launcher-only flags
  std::string_view value_name;  // "" = a switch that takes no value
  std::string_view switch_value;  // value a switch writes into `key` (e.g. --no-cuda -> "0")
  std::string_view help;
};

const std::vector<FlagSpec>& Flags();

struct LaunchOptions {
  std::map<std::string, std::string> gprof_env;  // GPROF_* keys set by flags
  std::map<std::string, std::string> flag_of;    // key -> the flag text that set it (messages)
  std::string sort_by = "auto";
  int row_limit = kAutoRowLimit;
  TraceOptions traces;
  bool profile_memory = false;  // the table's memory columns
  // --with-stack (torch.profiler's name) / --group-by-stack N: the table's rows per Python
  // source location (analysis/tables/op_stacks.h), N frames (kDefaultGroupByStack with --with-stack
  // alone); 0 = not grouped. Either turns Python sampling on (TurnOnSamplingForStacks).
  bool with_stack = false;
  uint32_t group_by_stack = 0;
  bool force = false;
  bool preload = false;
  bool python_hook = true;  // --no-python-hook: no PYTHONPATH change for Python programs
  bool html = true;         // --no-html: no report.html
  bool quiet = false;
  bool export_sqlite = false;  // --export sqlite: <outdir>/<dump>.sqlite after the run
  bool help = false;
  bool help_env = false;
  bool version = false;
  std::vector<std::string> program;  // program and its arguments
};

// Parses argv[first..]: flags stop at the first non-option or at "--". Returns "" on success,
// otherwise a one-line message for a usage error (exit 2). Checks --sort-by and --row-limit;
// GPROF_* values are checked later by ParseConfig on the whole environment. Checks --export
// too (CheckExportType, commands.h): a type this gprof-run cannot write fails before the run.
std::string ParseFlags(const std::vector<std::string>& args, LaunchOptions* options);

// Parses a --row-limit value: -1 (all rows) or a non-negative whole number.
bool ParseRowLimit(std::string_view text, int* out);
// Parses a --group-by-stack value: a whole number of frames, 1..kMaxGroupByStack. "" on success,
// else the message (a usage error).
std::string ParseGroupByStack(std::string_view text, uint32_t* out);
// The table grouped by source location needs Python samples: with --with-stack or
// --group-by-stack, sets GPROF_PYTHON_SAMPLING in `env` (the program's environment, flags
// already applied) to the bare --python-sampling's rate unless a flag or the inherited
// environment set it (to anything: an explicit 0 stays off).
void TurnOnSamplingForStacks(const LaunchOptions& options,
                             std::map<std::string, std::string>* env);
// "" when `key` is "auto" or one of the exporters' TableSortKeys(), else an error message.
std::string CheckSortKey(std::string_view key);

std::string HelpText();     // --help
std::string HelpEnvText();  // --help-env: the GPROF_* key table

}  // namespace gprof::launcher
