// `gprof-run [options] [--] program [args...]`: validate, start the program with the injection
// library, wait, render its dumps. Launcher process only.
//
// Exit status: the program's (128+N for signal N) once it ran, whatever happens while rendering;
// 2 for usage/config errors and a refused injection (the program never starts); 127/126 when the
// program is missing / not executable; 1 when gprof-run could not start it.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "config/config.h"
#include "launcher/child_process.h"
#include "launcher/commands.h"
#include "launcher/flags.h"
#include "launcher/html_page.h"
#include "launcher/inject_lib.h"
#include "launcher/manifest.h"
#include "launcher/merged_view.h"
#include "launcher/output_dir.h"
#include "launcher/python/python_program.h"
#include "launcher/recover_dumps.h"
#include "launcher/report.h"
#include "launcher/cli/version_text.h"
#include "support/clock.h"
#include "support/log.h"

extern char** environ;

namespace gprof::launcher {
namespace {

constexpr const char* kInjectionVars[] = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"};

void Error(const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s\n", message.c_str());
}

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env.emplace(std::string(*e, static_cast<size_t>(eq - *e)), eq + 1);
  }
  return env;
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The run directory holds dumps of several ranks: their merged view into <dir>/merged (its
// table on stderr unless quiet). Returns what the closing line adds ("; merged view: ...").
std::string MergeRanks(const std::string& dir, const LaunchOptions& o, std::FILE* err) {
  std::string error;
  const std::vector<MergeGroup> groups = FindMergeGroups({dir}, &error);
  if (!error.empty() || groups.empty()) return "";
  const MergeResult r = WriteMergedView(groups, dir + "/merged", o.row_limit, o.html);
  if (!r.error.empty()) {
    std::fprintf(err, "gprof-run: warning: no merged view of the ranks: %s (retry with gprof-run "
                      "merge %s)\n", r.error.c_str(), dir.c_str());
    return "";
  }
  std::fputs(r.notes.c_str(), err);
  if (!o.quiet) std::fputs(r.groups.front().table.c_str(), err);
  return "; " + MergedViewText(r);
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  LaunchOptions o;
  if (std::string e = ParseFlags(args, &o); !e.empty()) {
    Error(e);
    return kExitUsage;
  }
  if (o.help) {
    std::fputs(HelpText().c_str(), stdout);
    return 0;
  }
  if (o.help_env) {
    std::fputs(HelpEnvText().c_str(), stdout);
    return 0;
  }
  if (o.version) {
    std::fputs(VersionText(GPROF_VERSION, BuildToolkitCuptiDirs()).c_str(), stdout);
    return 0;
  }
  if (o.program.empty()) {
    Error("no program given (usage: gprof-run [options] [--] program [args...]; see --help)");
    return kExitUsage;
  }

  std::map<std::string, std::string> env = CurrentEnvironment();
  std::string inject_override;
  if (auto it = env.find(kInjectLibEnv); it != env.end()) {
    inject_override = it->second;
    env.erase(it);  // a launcher setting, not one for the program
  }

  // Only one tool can hold each injection slot (and CUPTI): refuse rather than silently evict it.
  for (const char* var : kInjectionVars) {
    auto it = env.find(var);
    if (it == env.end() || it->second.empty()) continue;
    if (!o.force) {
      Error(std::string(var) + " is already set to '" + it->second +
            "' (another profiler, such as nsys, is injecting itself). Only one tool can own it: "
            "unset it, or pass --force to replace it with gprof-run's library. The program was "
            "not started.");
      return kExitUsage;
    }
    std::fprintf(stderr, "gprof-run: warning: --force: replacing %s='%s'\n", var,
                 it->second.c_str());
  }

  for (const auto& [key, value] : o.gprof_env) env[key] = value;
  TurnOnSamplingForStacks(o, &env);
  ParseResult parsed = ParseConfig(env);
  if (!parsed.ok()) {
    for (const ConfigError& e : parsed.errors) {
      auto flag = o.flag_of.find(e.key);
      Error(FormatError(e) + (flag != o.flag_of.end() ? " (set by " + flag->second + ")"
                                                      : " (from the environment)"));
    }
    std::fprintf(stderr, "gprof-run: the program was not started (gprof-run --help-env lists "
                         "the settings and their values)\n");
    return kExitUsage;
  }
  log::SetLevel(parsed.config.log_level);
  for (const std::string& w : parsed.warnings) log::Warn(w);

  TemplateValues values;
  values.parent_pid = static_cast<long>(::getppid());
  values.host = HostName();
  values.program = Basename(o.program[0]);
  values.env = env;
  std::string templ = parsed.config.output_dir.empty() ? DefaultOutputTemplate(values)
                                                       : parsed.config.output_dir;
  std::string expanded;
  if (std::string e = ExpandOutputTemplate(templ, values, &expanded); !e.empty()) {
    Error("GPROF_OUTPUT_DIR=" + templ + ": " + e +
          (o.flag_of.count("GPROF_OUTPUT_DIR") ? " (set by " + o.flag_of["GPROF_OUTPUT_DIR"] + ")"
                                               : " (from the environment)"));
    return kExitUsage;
  }

  const InjectLibSearch lib = FindInjectLib(inject_override);
  if (lib.found.empty()) {
    std::string tried;
    for (const std::string& t : lib.tried) tried += (tried.empty() ? "" : ", ") + t;
    Error(std::string("cannot find ") + kInjectLibName + " (looked at: " + tried +
          "); reinstall gprof-run or set " + kInjectLibEnv + " to its path");
    return kExitInternal;
  }

  std::string program_path;
  int not_found_code = 127;
  if (std::string e = ResolveProgram(o.program[0], env.count("PATH") ? env["PATH"] : "",
                                     &program_path, &not_found_code);
      !e.empty()) {
    Error(e);
    return not_found_code;
  }

  // The program's environment: ours, plus the flags, plus the injection variables.
  env.erase("GPROF_OUTPUT_DIR");  // sent at Release(), once expanded with the program's pid
  env["CUDA_INJECTION64_PATH"] = lib.found;
  env["NVTX_INJECTION64_PATH"] = lib.found;
  if (o.preload) {
    auto it = env.find("LD_PRELOAD");
    env["LD_PRELOAD"] = it == env.end() || it->second.empty() ? lib.found
                                                               : lib.found + ":" + it->second;
  }
  // Python programs get the start-up hook (python/gprof_run_hook/) first on PYTHONPATH; the
  // hook chains to the environment's own sitecustomize. Other programs keep PYTHONPATH as it is.
  if (o.python_hook && IsPythonProgram(o.program, ReadProgramHead(program_path))) {
    const InjectLibSearch hook = FindPythonHookDir();
    if (hook.found.empty()) {
      log::Warn("gprof-run's Python start-up hook is missing (looked for sitecustomize.py in " +
                (hook.tried.empty() ? std::string("the folder next to gprof-run")
                                    : hook.tried[0]) +
                "); the Python program runs without it. Reinstall gprof-run, or pass "
                "--no-python-hook to silence this.");
    } else {
      auto it = env.find("PYTHONPATH");
      env["PYTHONPATH"] = PrependPythonPath(hook.found, it == env.end() ? "" : it->second);
      log::Debug("Python program: PYTHONPATH=" + env["PYTHONPATH"]);
      // torch's op ranges through ITT, its cheaper path (docs/PYTORCH.md): our library is the
      // ITT collector, unless the program has one already (VTune's) or GPROF_TORCH_ITT=0 says
      // no; then the hook uses torch's NVTX ranges.
      const auto itt = env.find("INTEL_LIBITTNOTIFY64");
      const auto want = env.find("GPROF_TORCH_ITT");
      if (want != env.end() && want->second == "0") {
        log::Debug("GPROF_TORCH_ITT=0: torch op ranges through NVTX");
      } else if (itt != env.end() && !itt->second.empty()) {
        env["GPROF_TORCH_ITT"] = "0";
        log::Info("INTEL_LIBITTNOTIFY64 is set (" + itt->second +
                  "): torch op ranges go through NVTX, which costs more per op");
      } else {
        env["INTEL_LIBITTNOTIFY64"] = lib.found;
        env["GPROF_TORCH_ITT"] = "1";
      }
    }
  }
  std::vector<std::string> env_list;
  for (const auto& [key, value] : env) env_list.push_back(key + "=" + value);

  ChildProcess child;
  if (std::string e = child.Start(program_path, o.program, env_list); !e.empty()) {
    Error("cannot start " + o.program[0] + ": " + e);
    return kExitInternal;
  }
  const uint64_t start_ns = NowNs();
  values.pid = child.pid();
  std::string out_dir;
  std::string e = ExpandOutputTemplate(templ, values, &expanded);
  if (e.empty()) e = ClaimOutputDir(expanded, &out_dir);
  if (!e.empty()) {
    child.Abort();
    child.Wait();
    Error("output directory: " + e + "; the program was not started");
    return kExitUsage;
  }
  if (out_dir != expanded) {
    std::fprintf(stderr, "gprof-run: %s already holds a profile; writing to %s instead\n",
                 expanded.c_str(), out_dir.c_str());
  }
  std::error_code ec;
  const std::string abs_dir = std::filesystem::absolute(out_dir, ec).lexically_normal().string();

  Manifest manifest;
  manifest.version = GPROF_VERSION;
  manifest.command_line = o.program;
  manifest.pid = child.pid();
  manifest.launcher_pid = ::getpid();
  manifest.hostname = values.host;
  manifest.start_time_ns = start_ns;
  if (std::string me = WriteManifest(out_dir, manifest); !me.empty()) {
    std::fprintf(stderr, "gprof-run: warning: %s; `gprof-run report` will guess the main dump\n",
                 me.c_str());
  }

  const std::string exec_error = child.Release({"GPROF_OUTPUT_DIR=" + abs_dir});
  if (exec_error.empty() && parsed.config.start_paused) {
    std::fprintf(stderr,
                 "gprof-run: %s runs paused (pid %ld): from another shell, `gprof-run capture %ld "
                 "--duration 5s` (or --steps N) records a capture into %s; `gprof-run sessions` "
                 "lists paused programs\n",
                 o.program[0].c_str(), static_cast<long>(child.pid()),
                 static_cast<long>(child.pid()), out_dir.c_str());
  }
  const int status = child.Wait();
  if (!exec_error.empty()) {
    Error(o.program[0] + ": " + exec_error);
    return status;
  }

  // From here on the program has run: nothing gprof-run does may change the exit status.
  if (status == 128 + SIGKILL) {
    // No program can catch SIGKILL: what was in progress is lost, what was written stays: the
    // window dumps, and a whole run's segments (recovered by RenderDirectory just below).
    size_t windows = 0;
    for (const DumpName& d : DumpsIn(abs_dir)) windows += d.window ? 1 : 0;
    std::string kept = std::to_string(windows) + " window dump(s) written before it are kept";
    if (windows == 0 && HasPartialDumps(abs_dir)) {
      kept = "the segments of the dump written during the run are kept";
    }
    std::fprintf(stderr,
                 "gprof-run: the program was killed by SIGKILL, which no program can catch: the "
                 "profile of what was in progress is lost; %s\n",
                 kept.c_str());
  }
  if (parsed.config.start_paused && DumpsIn(abs_dir).empty()) {
    std::fprintf(stderr,
                 "gprof-run: no capture was asked for (--start-paused): nothing was recorded\n");
    return status;
  }
  try {
    TableOptions table;
    table.sort_by = o.sort_by;
    table.row_limit = o.row_limit;
    table.profile_memory = o.profile_memory;
    table.group_by_stack = o.group_by_stack;
    HtmlOptions html;
    html.write = o.html;
    const RenderSummary s =
        RenderDirectory(abs_dir, table, o.traces, o.quiet, stderr, html, o.export_sqlite);
    std::string closing = s.closing_line;
    if (s.ranked_processes >= 2 && !closing.empty()) closing += MergeRanks(abs_dir, o, stderr);
    if (!closing.empty()) std::fprintf(stderr, "%s\n", closing.c_str());
  } catch (const std::exception& ex) {
    Error(std::string("rendering ") + out_dir + " failed: " + ex.what() +
          " (the dumps are kept; retry with gprof-run report " + out_dir + ")");
  } catch (...) {
    Error("rendering " + out_dir + " failed (the dumps are kept)");
  }
  return status;
}

}  // namespace gprof::launcher
