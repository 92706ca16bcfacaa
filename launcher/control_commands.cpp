// `gprof-run sessions`, `capture`, `pause` and `resume`: the other shell's side of
// --start-paused (docs/ATTACH.md). They find the program's session (control_client.h), send one
// request, and for a capture wait until its dump is saved and render it like any window dump.
// Launcher process only.
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "config/config.h"
#include "launcher/commands.h"
#include "launcher/control_client.h"
#include "launcher/html_page.h"
#include "launcher/report.h"
#include "launcher/subcommand_args.h"
#include "model/dump.h"

namespace gprof::launcher {
namespace {

constexpr const char* kControlUsage =
    "Usage: gprof-run sessions\n"
    "       gprof-run capture NAME|PID (--duration S | --steps N) [-o DIR] [--quiet] [--no-html]\n"
    "       gprof-run resume NAME|PID\n"
    "       gprof-run pause NAME|PID [-o DIR] [--quiet] [--no-html]\n"
    "For programs started with gprof-run --start-paused [--session NAME]. sessions lists them\n"
    "(pid, name, state, captures so far). capture records one capture: for S (e.g. 5s, 500ms)\n"
    "from now, or N steps from the next step boundary (GPROF_STEP); it waits until the capture\n"
    "is saved, then writes its table, traces and findings next to the program's other outputs\n"
    "(or into DIR). resume starts a capture that runs until pause, which saves and renders it.\n"
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
  uint64_t duration_ns = 0;
  uint64_t steps = 0;
  std::string out_dir;
  bool quiet = false;
  bool html = true;
};

// Parses TARGET and the options `allowed` (a subset of "dso": duration/steps, output).
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
  namespace fs = std::filesystem;
  fs::path dir = fs::path(dump_path).parent_path();
  const std::string file = fs::path(dump_path).filename().string();
  std::error_code ec;
  if (!a.out_dir.empty()) {
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

}  // namespace

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
  control::Message request;
  request.verb = "capture";
  if (a.duration_ns > 0) request.fields["duration_ns"] = std::to_string(a.duration_ns);
  if (a.steps > 0) request.fields["steps"] = std::to_string(a.steps);
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
