// The launcher's commands. Launcher process only. Each returns the process exit status.
//   RunCommand     gprof-run [options] [--] program [args...]
//   ReportCommand  gprof-run report DIR [--sort-by KEY] [--row-limit N] [--html | --no-html] [--quiet]
//   CheckCommand   gprof-run check TRACE.json...
//   StatsCommand   gprof-run stats PATH [--report NAME]... [--format table|csv|json] [--by-step]
//   DiffCommand    gprof-run diff A B [--format table|csv|json] [--by kernel|op|range|all]
//   MergeCommand   gprof-run merge DIR... [-o OUTDIR] [--row-limit N] [--no-html] [--quiet]
//   ExportCommand  gprof-run export [--type sqlite] PATH [-o FILE] [--quiet]
//   SessionsCommand, CaptureCommand, PauseCommand, ResumeCommand
//                  gprof-run sessions | capture|pause|resume NAME|PID ... (--start-paused)
//   AttachCommand  gprof-run attach PID (--duration S | --steps N) ...
#pragma once

#include <string>
#include <vector>

namespace gprof::launcher {

inline constexpr int kExitUsage = 2;     // bad flag, bad GPROF_* value, refused injection
inline constexpr int kExitInternal = 1;  // gprof-run itself could not start the program

// `args` excludes argv[0].
int RunCommand(const std::vector<std::string>& args);
int ReportCommand(const std::vector<std::string>& args);
int CheckCommand(const std::vector<std::string>& args);
int StatsCommand(const std::vector<std::string>& args);  // stats_command.cpp
int DiffCommand(const std::vector<std::string>& args);   // diff_command.cpp
int MergeCommand(const std::vector<std::string>& args);  // merge_command.cpp
int ExportCommand(const std::vector<std::string>& args);  // export_command.cpp
// control_commands.cpp
int SessionsCommand(const std::vector<std::string>& args);
int CaptureCommand(const std::vector<std::string>& args);
int PauseCommand(const std::vector<std::string>& args);
int ResumeCommand(const std::vector<std::string>& args);
int AttachCommand(const std::vector<std::string>& args);

// "" when `type` is an export type this gprof-run writes (sqlite, when built with SQLite), else
// the message (export --type, --export).
std::string CheckExportType(const std::string& type);

}  // namespace gprof::launcher
