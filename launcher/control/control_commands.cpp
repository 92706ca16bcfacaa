// `gprof-run sessions`, `capture`, `pause`, `resume` and `attach`: the other shell's side of
// --start-paused, and attaching to a process gprof-run did not start (docs/ATTACH.md). They find
// the program's session (control_client.h; attach first injects the library with
// ptrace_inject.h and starts one), send one request, and for a capture wait until its dump is
// saved and render it like any window dump. Launcher process only.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "config/config.h"
#include "launcher/attach/ptrace_inject.h"
#include "launcher/commands.h"
#include "launcher/control/control_client.h"
#include "launcher/html_page.h"
#include "launcher/inject_lib.h"
#include "launcher/report.h"
#include "launcher/subcommand_args.h"
#include "model/dump.h"

namespace gprof::launcher {
namespace {

namespace fs = std::filesystem;

constexpr const char* kControlUsage =
    "Usage: gprof-run sessions\n"
    "       gprof-run capture NAME|PID (--duration S | --steps N) [-o DIR] [--quiet] [--no-html]\n"
    "       gprof-run resume NAME|PID\n"
    "       gprof-run pause NAME|PID [-o DIR] [--quiet] [--no-html]\n"
    "       gprof-run attach PID (--duration S | --steps N) [-o DIR] [--session NAME]\n"
    "                        [--cupti-lib PATH] [--quiet] [--no-html]\n"
    "For programs started with gprof-run --start-paused [--session NAME]. sessions lists them\n"
    "(pid, name, state, captures so far). capture records one capture: for S (e.g. 5s, 500ms)\n"
    "from now, or N steps from the next step boundary (GPROF_STEP); it waits until the capture\n"
    "is saved, then writes its table, traces and findings next to the program's other outputs\n"
    "(or into DIR). resume starts a capture that runs until pause, which saves and renders it.\n"
    "attach loads gprof-run's library into running process PID that gprof-run did not start\n"
    "(ptrace; x86-64 Linux), starts a paused session in it and records one capture; the\n"
    "process goes on, and later attach or capture reuse the session.\n"
    "Exit: 0 done, 1 refused or failed (the message says why), 2 usage error.\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s\n%s", message.c_str(), kControlUsage);
  return kExitUsage;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "gprof-run: error: %s\n", message.c_str());
  return 1;
}

struct ControlArgs {
  std::string target;
  std::string session;    // attach: --session
  std::string cupti_lib;  // attach: --cupti-lib
  uint64_t duration_ns = 0;
  uint64_t steps = 0;
  std::string out_dir;
  bool quiet = false;
  bool html = true;
};

// Parses TARGET and the options `allowed` (a subset of "doa": duration/steps, output, attach's
// --session and --cupti-lib).
std::string ParseControlArgs(const std::vector<std::string>& args, const std::string& allowed,
                             ControlArgs* out) {
  SubcommandArgs a(args);
  while (a.Next()) {
    const std::string& arg = a.arg();
    if (arg == "--duration" && allowed.find('d') != std::string::npos) {
      if (!a.TakeValue() || !ParseDurationNs(a.value(), &out->duration_ns) ||
          out->duration_ns == 0) {
        return "--duration needs a positive duration, e.g. 5s or 500ms";
      }
    } else if (arg == "--steps" && allowed.find('d') != std::string::npos) {
      if (!a.TakeValue() || a.value().empty() ||
          a.value().find_first_not_of("0123456789") != std::string::npos ||
          a.value().size() > 9 || (out->steps = std::stoull(a.value())) == 0) {
        return "--steps needs a whole number of steps, at least 1";
      }
    } else if ((arg == "-o" || arg == "--output") && allowed.find('o') != std::string::npos) {
      if (!a.TakeValue() || a.value().empty()) return arg + " needs a directory";
      out->out_dir = a.value();
    } else if ((arg == "--quiet" || arg == "-q") && allowed.find('o') != std::string::npos) {
      out->quiet = true;
    } else if (arg == "--no-html" && allowed.find('o') != std::string::npos) {
      out->html = false;
    } else if ((arg == "--session" || arg == "--cupti-lib") &&
               allowed.find('a') != std::string::npos) {
      if (!a.TakeValue() || a.value().empty()) return arg + " needs a value";
      (arg == "--session" ? out->session : out->cupti_lib) = a.value();
    } else if (!arg.empty() && arg[0] == '-') {
      return "unknown option " + arg;
    } else if (out->target.empty()) {
      out->target = arg;
    } else {
      return "one session at a time (got " + out->target + " and " + arg + ")";
    }
  }
  if (out->target.empty()) return "name the session: its name or pid (gprof-run sessions)";
  if (allowed.find('d') != std::string::npos && (out->duration_ns > 0) == (out->steps > 0)) {
    return "give one of --duration S or --steps N";
  }
  return "";
}

// Renders the saved capture `dump_path` (into `a.out_dir` when given, else next to it).
int RenderCapture(const std::string& dump_path, bool partial, const ControlArgs& a) {
  fs::path dir = fs::path(dump_path).parent_path();
  const std::string file = fs::path(dump_path).filename().string();
  std::error_code ec;
  if (!a.out_dir.empty() && !fs::equivalent(a.out_dir, dir, ec)) {
    fs::create_directories(a.out_dir, ec);
    fs::copy_file(dump_path, fs::path(a.out_dir) / file, fs::copy_options::overwrite_existing, ec);
    if (ec) return Fail("cannot copy " + dump_path + " into " + a.out_dir + ": " + ec.message());
    dir = a.out_dir;
  }
  if (partial) {
    std::fprintf(stderr, "gprof-run: the program exited during the capture: it is partial\n");
  }
  TableOptions table;
  TraceOptions traces;
  HtmlOptions html;
  html.write = a.html;
  const std::string stem = file.substr(0, file.size() - std::string(kDumpExtension).size());
  const RenderSummary s =
      RenderDirectory(dir.string(), table, traces, a.quiet, stderr, html, false, stem);
  if (!s.closing_line.empty()) std::fprintf(stderr, "%s\n", s.closing_line.c_str());
  return s.rendered == 1 ? 0 : 1;
}

// The `capture` request of `a` (--duration or --steps).
control::Message CaptureRequest(const ControlArgs& a) {
  control::Message request;
  request.verb = "capture";
  if (a.duration_ns > 0) request.fields["duration_ns"] = std::to_string(a.duration_ns);
  if (a.steps > 0) request.fields["steps"] = std::to_string(a.steps);
  return request;
}

// Sends `request` to `a.target`'s session and returns its first reply in `*reply`.
std::string Ask(const ControlArgs& a, const control::Message& request, SessionInfo* session,
                ControlConnection* c, control::Message* reply) {
  if (std::string why = FindSession(a.target, session); !why.empty()) return why;
  std::string why = c->Connect(session->socket_path, 2000);
  if (why.empty()) why = c->Send(request);
  if (why.empty()) why = c->Read(reply, 5000);
  if (!why.empty()) return "session " + a.target + ": " + why;
  if (reply->verb == "error") return reply->Get("message");
  if (reply->verb != "ok") return "session " + a.target + " answered '" + reply->verb + "'";
  return "";
}

// Waits for the `saved` line of capture `k` and renders it.
int AwaitSaved(ControlConnection* c, const std::string& k, const ControlArgs& a) {
  control::Message saved;
  if (std::string why = c->Read(&saved, -1); !why.empty()) {
    return Fail(why == "closed" ? "the program ended before capture " + k + " was saved"
                                : why);
  }
  if (saved.verb == "error") return Fail(saved.Get("message"));
  if (saved.verb != "saved" || saved.Get("path").empty()) {
    return Fail("unexpected reply '" + saved.verb + "'");
  }
  std::fprintf(stderr, "gprof-run: capture %s saved: %s\n", k.c_str(),
               saved.Get("path").c_str());
  return RenderCapture(saved.Get("path"), saved.Get("partial") == "1", a);
}

// Whether process `pid` has loaded the CUDA runtime or driver (its /proc/PID/maps).
bool UsesCuda(long pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("/libcuda.so") != std::string::npos ||
        line.find("/libcudart.so") != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string AttachResultText(int rc, long pid) {
  switch (rc) {
    case 2:
      return "process " + std::to_string(pid) + " already runs under gprof-run (started without "
             "--start-paused): its profile is written when it exits";
    case 3:
      return "gprof-run's library could not initialize in process " + std::to_string(pid) +
             " (its stderr says why); it stays loaded and inert, the process goes on";
    case 4:
      return "gprof-run's library in process " + std::to_string(pid) +
             " could not open its control socket (its stderr says why)";
    default:
      return "gprof_run_attach returned " + std::to_string(rc) + " in process " +
             std::to_string(pid);
  }
}

// An attached Python program: torch's op ranges can be turned on in it only through
// sys.remote_exec (Python 3.14+, PEP 768), which runs a script in the target at its next safe
// point. Says what was done, or why not. Not verified here (this machine has Python 3.11).
void TorchOpsInPython(long pid) {
  std::error_code ec;
  const std::string exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
  if (ec || fs::path(exe).filename().string().rfind("python", 0) != 0) return;
  const std::string proc_exe = "/proc/" + std::to_string(pid) + "/exe";
  std::string version;
  if (FILE* p = ::popen(("'" + proc_exe + "' -c 'import sys; print(\"%d.%d\" % "
                         "sys.version_info[:2])' 2>/dev/null").c_str(), "r")) {
    char buf[32] = {};
    if (std::fgets(buf, sizeof buf, p) != nullptr) version = buf;
    ::pclose(p);
  }
  while (!version.empty() && (version.back() == '\n' || version.back() == ' ')) version.pop_back();
  const size_t dot = version.find('.');
  const int major = dot == std::string::npos ? 0 : std::atoi(version.c_str());
  const int minor = dot == std::string::npos ? 0 : std::atoi(version.c_str() + dot + 1);
  if (major < 3 || (major == 3 && minor < 14)) {
    std::fprintf(stderr,
                 "gprof-run: process %ld is Python %s: torch's op ranges cannot be turned on in "
                 "it after start-up (that needs sys.remote_exec, Python 3.14+, PEP 768); its CUDA "
                 "kernels, copies and API calls are captured\n",
                 pid, version.empty() ? "(version unknown)" : version.c_str());
    return;
  }
  const InjectLibSearch hook = FindPythonHookDir();
  if (hook.found.empty()) return;
  const std::string script = fs::temp_directory_path().string() + "/gprof-run-remote-" +
                             std::to_string(pid) + ".py";
  std::ofstream(script) << "import os, sys\n"
                           "os.environ['GPROF_TORCH_ITT'] = '0'  # ITT's loader ran at start-up\n"
                           "sys.path.insert(0, " << "'" << hook.found << "')\n"
                           "import _gprof_run_hook\n_gprof_run_hook.install()\n";
  const std::string cmd = "'" + proc_exe + "' -c 'import sys; sys.remote_exec(" +
                          std::to_string(pid) + ", \"" + script + "\")'";
  const int rc = std::system(cmd.c_str());
  std::fprintf(stderr,
               rc == 0 ? "gprof-run: torch's op ranges turned on in process %ld through "
                         "sys.remote_exec (from its next safe point)\n"
                       : "gprof-run: sys.remote_exec into process %ld failed; torch's op ranges "
                         "stay off, CUDA is captured\n",
               pid);
}

// Loads the library into `pid` and starts its paused session. "" or the message.
std::string InjectSession(long pid, const ControlArgs& a) {
  std::map<std::string, std::string> settings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (kv.rfind("GPROF_", 0) == 0 && eq != std::string::npos) {
      settings[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  std::error_code ec;
  const std::string out = a.out_dir.empty()
                              ? "gprof_traces/attach." + std::to_string(pid)
                              : a.out_dir;
  fs::create_directories(out, ec);
  settings["GPROF_OUTPUT_DIR"] = fs::absolute(out, ec).lexically_normal().string();
  settings["GPROF_START_PAUSED"] = "1";
  if (!a.session.empty()) settings["GPROF_SESSION"] = a.session;
  if (!a.cupti_lib.empty()) settings["GPROF_CUPTI_LIB"] = a.cupti_lib;
  const ParseResult parsed = ParseConfig(settings);
  if (!parsed.ok()) return FormatError(parsed.errors[0]);
  const InjectLibSearch lib = FindInjectLib(std::getenv(kInjectLibEnv) != nullptr
                                                ? std::getenv(kInjectLibEnv)
                                                : "");
  if (lib.found.empty()) return std::string("cannot find ") + kInjectLibName;
  std::string text;
  for (const auto& [k, v] : settings) {
    if (v.find('\n') == std::string::npos) text += k + "=" + v + "\n";
  }
  const InjectOutcome r = InjectAndCall(static_cast<pid_t>(pid), lib.found, "gprof_run_attach",
                                        text, 20000);
  if (!r.ok) return r.error;
  if (r.entry_rc != 0) return AttachResultText(static_cast<int>(r.entry_rc), pid);
  return "";
}

}  // namespace

int AttachCommand(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kControlUsage, stdout);
    return 0;
  }
  ControlArgs a;
  if (std::string why = ParseControlArgs(args, "doa", &a); !why.empty()) return Usage(why);
  if (a.target.find_first_not_of("0123456789") != std::string::npos) {
    return Usage("attach takes a pid (" + a.target + " is not one)");
  }
  const long pid = std::stol(a.target);
  SessionInfo session;
  if (FindSession(a.target, &session).empty()) {
    std::fprintf(stderr, "gprof-run: process %ld already has a gprof-run session: capturing\n",
                 pid);
  } else {
    if (std::string why = AttachRefusal(static_cast<pid_t>(pid)); !why.empty()) return Fail(why);
    if (!UsesCuda(pid)) {
      return Fail("process " + a.target + " has not loaded CUDA (no libcuda.so or libcudart.so "
                  "in /proc/" + a.target + "/maps): nothing to profile");
    }
    if (std::string why = InjectSession(pid, a); !why.empty()) return Fail(why);
    std::string why = FindSession(a.target, &session);
    if (!why.empty()) return Fail("the library is loaded in process " + a.target + ", but " + why);
    std::fprintf(stderr,
                 "gprof-run: attached to process %ld (%s). Not seen: work launched before the "
                 "capture, memory allocated before it, NVTX in libraries that made their first "
                 "NVTX call before the attach\n",
                 pid, session.status.Get("command").c_str());
    TorchOpsInPython(pid);
  }
  if (const std::string gpu = session.status.Get("gpu"); gpu.rfind("waiting: ", 0) == 0) {
    // Not started yet (collector/lifecycle/init.cpp): the capture holds host work until it does.
    std::fprintf(stderr, "gprof-run: process %s: %s\n", a.target.c_str(), gpu.c_str() + 9);
  } else if (!gpu.empty() && gpu != "collected") {
    return Fail("GPU collection is off in process " + a.target + ": " + gpu);
  }
  const control::Message request = CaptureRequest(a);
  ControlConnection c;
  control::Message reply;
  if (std::string why = Ask(a, request, &session, &c, &reply); !why.empty()) return Fail(why);
  return AwaitSaved(&c, reply.Get("capture"), a);
}

int SessionsCommand(const std::vector<std::string>& args) {
  if (!args.empty()) {
    if (args[0] == "--help" || args[0] == "-h") {
      std::fputs(kControlUsage, stdout);
      return 0;
    }
    return Usage("sessions takes no arguments");
  }
  const SessionList list = ListSessions(2000);
  if (!list.error.empty()) return Fail(list.error);
  if (list.stale_removed > 0) {
    std::fprintf(stderr, "gprof-run: removed %d socket(s) of programs that are gone\n",
                 list.stale_removed);
  }
  if (list.live.empty()) {
    std::printf("no paused sessions (start one with gprof-run --start-paused program ...)\n");
    return 0;
  }
  std::printf("%-8s %-20s %-17s %-8s %s\n", "PID", "SESSION", "STATE", "CAPTURES", "COMMAND");
  for (const SessionInfo& s : list.live) {
    std::printf("%-8ld %-20s %-17s %-8s %s\n", s.pid, s.status.Get("session").c_str(),
                s.status.Get("state").c_str(), s.status.Get("captures").c_str(),
                s.status.Get("command").c_str());
  }
  return 0;
}

int CaptureCommand(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kControlUsage, stdout);
    return 0;
  }
  ControlArgs a;
  if (std::string why = ParseControlArgs(args, "do", &a); !why.empty()) return Usage(why);
  const control::Message request = CaptureRequest(a);
  SessionInfo session;
  ControlConnection c;
  control::Message reply;
  if (std::string why = Ask(a, request, &session, &c, &reply); !why.empty()) return Fail(why);
  const std::string k = reply.Get("capture");
  if (a.steps > 0) {
    std::fprintf(stderr, "gprof-run: capture %s of %s (pid %ld): %llu steps from the next %s\n",
                 k.c_str(), session.status.Get("session").c_str(), session.pid,
                 static_cast<unsigned long long>(a.steps), reply.Get("waiting_for").c_str());
  } else {
    std::fprintf(stderr, "gprof-run: capture %s of %s (pid %ld): recording for %.3g s\n",
                 k.c_str(), session.status.Get("session").c_str(), session.pid,
                 static_cast<double>(a.duration_ns) / 1e9);
  }
  return AwaitSaved(&c, k, a);
}

int ResumeCommand(const std::vector<std::string>& args) {
  ControlArgs a;
  if (std::string why = ParseControlArgs(args, "", &a); !why.empty()) return Usage(why);
  control::Message request;
  request.verb = "resume";
  SessionInfo session;
  ControlConnection c;
  control::Message reply;
  if (std::string why = Ask(a, request, &session, &c, &reply); !why.empty()) return Fail(why);
  std::fprintf(stderr,
               "gprof-run: capture %s of %s (pid %ld) is recording; `gprof-run pause %s` saves "
               "it\n",
               reply.Get("capture").c_str(), session.status.Get("session").c_str(), session.pid,
               a.target.c_str());
  return 0;
}

int PauseCommand(const std::vector<std::string>& args) {
  ControlArgs a;
  if (std::string why = ParseControlArgs(args, "o", &a); !why.empty()) return Usage(why);
  control::Message request;
  request.verb = "pause";
  SessionInfo session;
  ControlConnection c;
  control::Message reply;
  if (std::string why = Ask(a, request, &session, &c, &reply); !why.empty()) return Fail(why);
  if (reply.Get("state") == "paused") {
    std::fprintf(stderr, "gprof-run: %s was not capturing; nothing to save\n", a.target.c_str());
    return 0;
  }
  if (const std::string k = reply.Get("cancelled"); !k.empty()) {
    std::fprintf(stderr,
                 "gprof-run: capture %s was still waiting for its first step; cancelled, "
                 "nothing saved\n",
                 k.c_str());
    return 0;
  }
  return AwaitSaved(&c, reply.Get("capture"), a);
}

}  // namespace gprof::launcher
