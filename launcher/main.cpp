// gprof-run: entry point. Dispatches to the report/check/stats/diff/merge/export commands, the
// session commands (sessions/capture/pause/resume) or profiles a program. A program named like
// a command is profiled with `gprof-run -- report ...`.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "launcher/commands.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "report") {
      return gprof::launcher::ReportCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "check") {
      return gprof::launcher::CheckCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "stats") {
      return gprof::launcher::StatsCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "diff") {
      return gprof::launcher::DiffCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "merge") {
      return gprof::launcher::MergeCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "export") {
      return gprof::launcher::ExportCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "sessions") {
      return gprof::launcher::SessionsCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "capture") {
      return gprof::launcher::CaptureCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "pause") {
      return gprof::launcher::PauseCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "attach") {
      return gprof::launcher::AttachCommand({args.begin() + 1, args.end()});
    }
    if (!args.empty() && args[0] == "resume") {
      return gprof::launcher::ResumeCommand({args.begin() + 1, args.end()});
    }
    return gprof::launcher::RunCommand(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gprof-run: error: %s\n", e.what());
    return gprof::launcher::kExitInternal;
  }
}
