// Flag table and parser for the launcher (see flags.h). Launcher process only.
#include "launcher/flags.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "analysis/tables/op_stacks.h"
#include "config/config.h"
#include "launcher/commands.h"
#include "launcher/cli/flag_suggest.h"
#include "outputs/table/table.h"

namespace gprof::launcher {
namespace {

// The rate of a bare --python-sampling (and of --with-stack's sampling).
constexpr std::string_view kBareSamplingHz = "1000";

const std::vector<FlagSpec> kFlags = {
    {"output", 'o', "GPROF_OUTPUT_DIR", "DIR", "",
     "Output directory template: %p (the program's pid), %h (host), %n (program name), "
     "%r (the rank, from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID; zero-padded to "
     "the world size), %j (the job: SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...; else ppid<N>), "
     "%q{VAR} (an environment variable, empty when unset), %% (a %). Default "
     "./gprof_traces/%n.%h.%p, and ./gprof_traces/%n.%j/rank%r.%h when gprof-run itself runs as "
     "one rank. An existing profile is never overwritten: -1, -2, ... is added."},
    {"log-level", 0, "GPROF_LOG_LEVEL", "LEVEL", "", "trace|debug|info|warn|error|off."},
    {"no-cuda", 0, "GPROF_CUDA", "", "0", "Do not collect CUDA API calls or GPU activity."},
    {"no-nvtx", 0, "GPROF_NVTX", "", "0", "Do not collect NVTX ranges and marks."},
    {"record-shapes", 0, "GPROF_RECORD_SHAPES", "", "1",
     "torch programs: record each op's input shapes (table column Input Shapes, grouped by "
     "name and shapes)."},
    {"no-torch-ops", 0, "GPROF_TORCH_OPS", "", "0",
     "torch programs: do not turn on torch's per-op ranges."},
    {"no-torch-itt", 0, "GPROF_TORCH_ITT", "", "0",
     "torch programs: op ranges through torch's NVTX observer (adds op ids and sequence numbers, "
     "costs more per op) instead of its ITT one."},
    {"torch-steps", 0, "GPROF_TORCH_STEPS", "optimizer|off", "",
     "torch programs: optimizer.step() ends a step (default optimizer)."},
    // "[=HZ]": an optional value, only as --python-sampling=HZ (a bare flag never takes the
    // next argument, which is the program).
    {"python-sampling", 0, "GPROF_PYTHON_SAMPLING", "[=HZ]", kBareSamplingHz,
     "Python programs: sample every thread's Python stack HZ times a second (1..2000, bare "
     "flag 1000): stacks.folded (flame graph input) and python_function slices in the trace."},
    {"python-sampler", 0, "GPROF_PYTHON_SAMPLER", "auto|in-process", "",
     "Python programs: how --python-sampling reads the stacks: auto (default) from a sampler "
     "process, without the program's GIL, where it can (CPython 3.11), else in process; "
     "in-process: always a thread inside the program."},
    {"cpu-sampling", 0, "GPROF_CPU_SAMPLING", "[=HZ]", kBareSamplingHz,
     "Sample every program thread's native stack HZ times a second of CPU time (1..20000, bare "
     "flag 1000; nsys's --sample=cpu): stats report cpu_sample_sum, <stem>.cpu.folded, "
     "the samples in the traces (cpu_sample events, Perfetto CPU samples) and report.html, and "
     "gpu_idle names the host functions in its gaps "
     "(docs/CPU_SAMPLING.md)."},
    {"cpu-sampling-backend", 0, "GPROF_CPU_SAMPLING_BACKEND", "auto|process|perf|timer", "",
     "How --cpu-sampling samples: perf_event_open from a sampler process outside the program, "
     "perf_event_open from a thread inside it, or an ITIMER_PROF signal (its rate bounded by "
     "the scheduler tick); auto (default): the first the kernel allows."},
    {"cpu-sampler-process", 0, "GPROF_CPU_SAMPLER_PROCESS", "auto|refuse", "",
     "refuse: --cpu-sampling's sampler process answers as if the kernel refused it, to check "
     "the in-process fallback where the kernel allows everything."},
    {"with-stack", 0, "", "", "",
     "Python programs (torch.profiler's with_stack): group the table by Python source location "
     "(a Source Location column, torch's key_averages(group_by_stack_n=5)), from the sampled "
     "stacks; turns on --python-sampling (1000 Hz) unless it is set. Sampled, not exact "
     "(docs/PYTHON_SAMPLING.md)."},
    {"group-by-stack", 0, "", "N", "",
     "Group the table by the innermost N frames of the program's Python code (1..1000; "
     "default 5 with --with-stack, which it implies)."},
    {"api-filter", 0, "GPROF_API_FILTER", "SPEC",
     "", "default|all|none, then ,+NAME / ,-NAME to add or drop single APIs."},
    {"backtrace", 0, "GPROF_BACKTRACE", "LIST", "",
     "none, or a comma list of sync, alloc, memcpy, launch (default sync,alloc): those CUDA API "
     "calls carry the program's native call stack (trace args.stack, stats report "
     "cuda_api_stack_sum; docs/STACKS.md)."},
    {"activity-buffer-kib", 0, "GPROF_ACTIVITY_BUFFER_KIB", "N", "",
     "Size of one CUPTI activity buffer in KiB (64..262144)."},
    {"activity-pool", 0, "GPROF_ACTIVITY_POOL", "N", "",
     "Most CUPTI activity buffers outstanding at once (2..65536)."},
    {"pending-mib", 0, "GPROF_PENDING_MIB", "N", "",
     "Most memory for GPU records not yet written, in MiB (1..65536; default 256)."},
    {"host-buffer-mib", 0, "GPROF_HOST_BUFFER_MIB", "N", "",
     "Most memory for host events per process, in MiB (1..65536)."},
    {"segment-seconds", 0, "GPROF_SEGMENT_SECONDS", "N", "",
     "A whole run's dump is written in segments, one every N seconds (default 10) and when "
     "buffers are half full: bounded memory, and a killed program keeps what was written. 0: "
     "once, at exit."},
    {"cupti-lib", 0, "GPROF_CUPTI_LIB", "PATH", "", "The libcupti to use (default: search)."},
    {"schedule", 0, "GPROF_SCHEDULE", "SPEC", "",
     "torch.profiler schedule: skip_first=N,wait=N,warmup=N,active=N,repeat=N."},
    {"skip-first", 0, "GPROF_SCHEDULE", "N", "", "Schedule part: steps to skip at the start."},
    {"wait", 0, "GPROF_SCHEDULE", "N", "", "Schedule part: idle steps at the start of a cycle."},
    {"warmup", 0, "GPROF_SCHEDULE", "N", "", "Schedule part: collected-then-discarded steps."},
    {"active", 0, "GPROF_SCHEDULE", "N", "", "Schedule part: recorded steps per cycle (>= 1)."},
    {"repeat", 0, "GPROF_SCHEDULE", "N", "", "Schedule part: cycles (0 = until exit)."},
    {"step", 0, "GPROF_STEP", "SPEC", "",
     "What ends a step: nvtx:GLOB, kernel:REGEX, api:NAME or time:DURATION."},
    {"capture-range", 0, "GPROF_CAPTURE_RANGE", "KIND", "",
     "none|cudaProfilerApi|nvtx: collect only inside these ranges."},
    {"nvtx-capture", 0, "GPROF_NVTX_CAPTURE", "NAME[@DOMAIN]", "",
     "The NVTX range that opens a capture (with --capture-range=nvtx)."},
    {"capture-range-end", 0, "GPROF_CAPTURE_RANGE_END", "stop|repeat[:N]", "",
     "Stop after the first capture range, or capture every range (at most N)."},
    {"delay", 0, "GPROF_DELAY", "DURATION", "", "Collect nothing for this long (e.g. 2s)."},
    {"duration", 0, "GPROF_DURATION", "DURATION", "", "Stop collecting after this long."},
    {"start-paused", 0, "GPROF_START_PAUSED", "", "1",
     "Collect nothing until asked: from another shell, gprof-run capture NAME|PID --duration S "
     "(or --steps N) records one capture, gprof-run resume / pause an open-ended one; each "
     "capture is its own profile (docs/ATTACH.md)."},
    {"session", 0, "GPROF_SESSION", "NAME", "",
     "The name gprof-run capture, pause, resume and sessions know this program by (default: its "
     "name)."},
    {"sort-by", 0, "", "KEY", "", "Table sort key (see below); default auto."},
    {"profile-memory", 0, "GPROF_TORCH_MEMORY", "", "1",
     "Table columns CPU Mem / Self CPU Mem / CUDA Mem / Self CUDA Mem (torch's "
     "profile_memory=True), from CUDA's allocation records and, in torch programs, from torch's "
     "caching allocator (sets GPROF_TORCH_MEMORY=1)."},
    {"trace-format", 0, "", "LIST", "",
     "Traces to write, comma-separated: json, json.gz (gzip, as TensorBoard and HTA read it), "
     "pftrace (Perfetto protobuf). Default json,pftrace."},
    {"max-trace-mb", 0, "", "N", "",
     "Cap a JSON trace at N MiB: a larger one is written as parts cut by time "
     "(trace.part1.json, ...), each a complete trace."},
    {"segment-render-mb", 0, "", "N", "",
     "Render a dump larger than N MiB (default 128) segment by segment, in memory bounded by its "
     "segments: the table, traces and findings cover the whole run (the findings part by part, "
     "about a million launches each). 0: every dump."},
    {"row-limit", 0, "", "N", "",
     "Rows of the table printed on stderr (-1 = all; default 20). table.txt always keeps the "
     "whole table: all rows up to 2000, else the top 2000 and a line counting the rest."},
    {"export", 0, "", "TYPE", "",
     "After the run, also write <outdir>/<dump>.sqlite for every dump: an SQLite database with "
     "Nsight Systems' table names, as gprof-run export writes it (sqlite is the only TYPE)."},
    {"no-html", 0, "", "", "",
     "Do not write report.html (a one-page summary for a browser: verdict, findings, steps, "
     "timeline, top kernels, memory)."},
    {"force", 0, "", "", "",
     "Run even when CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH are already set by another "
     "tool (ours replaces theirs)."},
    {"preload", 0, "", "", "", "Also prepend the injection library to LD_PRELOAD."},
    {"no-python-hook", 0, "", "", "",
     "Do not put gprof-run's Python start-up hook first on PYTHONPATH (it is added for Python "
     "programs: python*, a script with a python shebang, torchrun, accelerate launch, "
     "deepspeed)."},
    {"quiet", 'q', "", "", "", "Do not print the table on stderr (files are still written)."},
    {"help", 'h', "", "", "", "Print this help and exit."},
    {"help-env", 0, "", "", "", "Print the GPROF_* settings (name, type, default, help)."},
    {"version", 0, "", "", "", "Print the version and exit."},
};

constexpr std::string_view kScheduleParts[] = {"skip-first", "wait", "warmup", "active",
                                               "repeat"};

bool IsSchedulePart(std::string_view name) {
  for (std::string_view p : kScheduleParts) {
    if (p == name) return true;
  }
  return false;
}

bool ParseUint(std::string_view text, uint64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

const char* TypeName(ConfigType type) {
  switch (type) {
    case ConfigType::kString: return "string";
    case ConfigType::kBool: return "bool";
    case ConfigType::kUint: return "uint";
    case ConfigType::kEnum: return "enum";
    case ConfigType::kSpec: return "spec";
  }
  return "?";
}

// Wraps `text` to `width` columns starting at column `start`; every line after the first is
// indented by `indent` spaces.
std::string Wrap(std::string_view text, size_t indent, size_t width, size_t start) {
  std::string out;
  size_t column = start;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t space = text.find(' ', pos);
    if (space == std::string_view::npos) space = text.size();
    const std::string_view word = text.substr(pos, space - pos);
    if (pos > 0 && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (pos > 0) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    pos = space + 1;
  }
  return out;
}

}  // namespace

const std::vector<FlagSpec>& Flags() { return kFlags; }

bool ParseRowLimit(std::string_view text, int* out) {
  if (text == "-1") {
    *out = -1;
    return true;
  }
  uint64_t n = 0;
  if (!ParseUint(text, &n) || n > 1'000'000'000) return false;
  *out = static_cast<int>(n);
  return true;
}

std::string ParseGroupByStack(std::string_view text, uint32_t* out) {
  uint64_t n = 0;
  if (!ParseUint(text, &n) || n == 0 || n > kMaxGroupByStack) {
    return "--group-by-stack " + std::string(text) + ": expected a whole number of frames, 1 to " +
           std::to_string(kMaxGroupByStack);
  }
  *out = static_cast<uint32_t>(n);
  return "";
}

void TurnOnSamplingForStacks(const LaunchOptions& o, std::map<std::string, std::string>* env) {
  if (!o.with_stack && o.group_by_stack == 0) return;
  if (o.gprof_env.count("GPROF_PYTHON_SAMPLING") != 0) return;  // the flag's value stands
  if (auto it = env->find("GPROF_PYTHON_SAMPLING"); it != env->end() && !it->second.empty()) {
    return;  // the environment's
  }
  (*env)["GPROF_PYTHON_SAMPLING"] = std::string(kBareSamplingHz);
}

std::string CheckSortKey(std::string_view key) {
  std::string allowed = "auto";
  for (std::string_view k : TableSortKeys()) {
    if (k == key) return "";
    if (k != "auto") allowed += ", " + std::string(k);
  }
  if (key == "auto") return "";
  return "--sort-by " + std::string(key) + ": unknown sort key; expected one of " + allowed;
}

std::string ParseFlags(const std::vector<std::string>& args, LaunchOptions* o) {
  std::map<std::string, std::string> schedule_parts;  // ordered as kScheduleParts when joined
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // first non-option: the program

    const FlagSpec* spec = nullptr;
    std::string value;
    bool has_value = false;
    std::string shown;  // the flag as the user wrote it, for messages
    if (arg[1] == '-') {
      const size_t eq = arg.find('=');
      const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      for (const FlagSpec& f : kFlags) {
        if (f.long_name == name) spec = &f;
      }
      shown = "--" + name;
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        has_value = true;
      }
    } else {
      for (const FlagSpec& f : kFlags) {
        if (f.short_name != 0 && f.short_name == arg[1]) spec = &f;
      }
      shown = arg.substr(0, 2);
      if (arg.size() > 2) {
        value = arg.substr(2);
        has_value = true;
      }
    }
    if (spec == nullptr) {
      std::vector<std::string_view> names;
      for (const FlagSpec& f : kFlags) names.push_back(f.long_name);
      const std::string guess = DidYouMean(shown, names);
      return "unknown flag " + shown +
             (guess.empty() ? " (gprof-run --help lists the flags)" : guess);
    }
    const bool optional_value = !spec->value_name.empty() && spec->value_name[0] == '[';
    if (spec->value_name.empty()) {
      if (has_value) return "flag " + shown + " takes no value";
    } else if (optional_value) {
      if (!has_value) value = std::string(spec->switch_value);
      const char* path_env = std::getenv("PATH");
      if (std::string e = !has_value && i + 1 < args.size()
                              ? BareOptionalValueHint(shown, spec->value_name, args[i + 1],
                                                      path_env != nullptr ? path_env : "")
                              : "";
          !e.empty()) {
        return e;
      }
    } else if (!has_value) {
      if (i + 1 >= args.size()) return "flag " + shown + " needs a value: " +
                                        std::string(spec->value_name);
      value = args[++i];
    }

    const std::string_view name = spec->long_name;
    if (IsSchedulePart(name)) {
      uint64_t n = 0;
      if (!ParseUint(value, &n) || n > 1'000'000'000) {
        return shown + " " + value + ": expected a whole number";
      }
      schedule_parts[std::string(name)] = value;
    } else if (!spec->key.empty()) {
      o->gprof_env[std::string(spec->key)] =
          spec->value_name.empty() ? std::string(spec->switch_value) : value;  // [=V]: value
      o->flag_of[std::string(spec->key)] = shown;
      // Also the table's memory columns (GPROF_TORCH_MEMORY is the Python hook's half).
      if (name == "profile-memory") o->profile_memory = true;
    } else if (name == "sort-by") {
      if (std::string e = CheckSortKey(value); !e.empty()) return e;
      o->sort_by = value;
    } else if (name == "row-limit") {
      if (!ParseRowLimit(value, &o->row_limit)) {
        return "--row-limit " + value + ": expected -1 (all rows) or a whole number >= 0";
      }
    } else if (name == "with-stack") {
      o->with_stack = true;
    } else if (name == "group-by-stack") {
      if (std::string e = ParseGroupByStack(value, &o->group_by_stack); !e.empty()) return e;
    } else if (name == "trace-format") {
      if (std::string e = ParseTraceFormats(value, &o->traces); !e.empty()) return e;
    } else if (name == "max-trace-mb") {
      if (std::string e = ParseMaxTraceMb(value, &o->traces); !e.empty()) return e;
    } else if (name == "segment-render-mb") {
      if (std::string e = ParseSegmentRenderMb(value, &o->traces); !e.empty()) return e;
    } else if (name == "export") {
      if (std::string e = CheckExportType(value); !e.empty()) return "--export " + value + ": " + e;
      o->export_sqlite = true;
    } else if (name == "no-html") {
      o->html = false;
    } else if (name == "force") {
      o->force = true;
    } else if (name == "preload") {
      o->preload = true;
    } else if (name == "no-python-hook") {
      o->python_hook = false;
    } else if (name == "quiet") {
      o->quiet = true;
    } else if (name == "help") {
      o->help = true;
    } else if (name == "help-env") {
      o->help_env = true;
    } else if (name == "version") {
      o->version = true;
    }
  }
  if (!schedule_parts.empty()) {
    if (o->gprof_env.count("GPROF_SCHEDULE") != 0) {
      return "use either --schedule or --skip-first/--wait/--warmup/--active/--repeat, not both";
    }
    std::string spec;
    for (std::string_view part : kScheduleParts) {
      auto it = schedule_parts.find(std::string(part));
      if (it == schedule_parts.end()) continue;
      std::string key(part);
      if (key == "skip-first") key = "skip_first";
      spec += (spec.empty() ? "" : ",") + key + "=" + it->second;
    }
    o->gprof_env["GPROF_SCHEDULE"] = spec;
    o->flag_of["GPROF_SCHEDULE"] = "--skip-first/--wait/--warmup/--active/--repeat";
  }
  if (o->with_stack && o->group_by_stack == 0) o->group_by_stack = kDefaultGroupByStack;
  o->program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return "";
}

std::string HelpText() {
  std::string out =
      "Usage: gprof-run [options] [--] program [args...]\n"
      "       gprof-run report DIR [--sort-by KEY] [--row-limit N] [--trace-format LIST]\n"
      "                  [--max-trace-mb N] [--segment-render-mb N] [--profile-memory]\n"
      "                  [--html | --no-html] [--with-stack | --group-by-stack N] [--quiet]\n"
      "       gprof-run check TRACE.json[.gz]...\n"
      "       gprof-run stats PATH [--report NAME]... [--format table|csv|json] [--by-step]\n"
      "       gprof-run diff A B [--format table|csv|json] [--by kernel|op|range|all]\n"
      "       gprof-run merge DIR... [-o OUTDIR] [--row-limit N] [--no-html] [--quiet]\n"
      "       gprof-run export [--type sqlite] PATH [-o FILE] [--quiet]\n"
      "\n"
      "Runs program with the gprof injection library (CUDA_INJECTION64_PATH and\n"
      "NVTX_INJECTION64_PATH), then writes <outdir>/table.txt (its top rows printed on stderr),\n"
      "<outdir>/trace.json (Chrome/Kineto trace for Perfetto), <outdir>/report.html (a page for\n"
      "a browser) and keeps the raw dumps.\n"
      "Exits with the program's status (128+N when it died of signal N).\n"
      "\n"
      "Options (each GPROF_* key can also come from the environment; a flag wins):\n";
  for (const FlagSpec& f : kFlags) {
    std::string left = "  ";
    left += f.short_name != 0 ? std::string("-") + f.short_name + ", " : std::string("    ");
    left += "--" + std::string(f.long_name);
    if (!f.value_name.empty()) left += (f.value_name[0] == '[' ? "" : " ") + std::string(f.value_name);
    std::string help(f.help);
    if (!f.key.empty()) help = std::string(f.key) + ": " + help;
    // The key stays on the flag's own line (tools and tests grep for "--flag ... GPROF_KEY:").
    left.resize(std::max<size_t>(left.size() + 2, 32), ' ');
    out += left + Wrap(help, 32, 100, left.size()) + "\n";
  }
  std::string keys = "auto";
  for (std::string_view k : TableSortKeys()) {
    if (k != "auto") keys += ", " + std::string(k);
  }
  out += "\nSort keys: " + Wrap(keys, 2, 100, 11);
  out +=
      "\n\nExit status: the program's; 2 for a bad flag or GPROF_* value (the program does not\n"
      "start); 127 program not found; 126 program not executable; 1 gprof-run could not start.\n";
  return out;
}

std::string HelpEnvText() {
  std::string out = "GPROF_* settings (gprof-run flags set them; see gprof-run --help):\n\n";
  for (const ConfigKey& k : ConfigKeys()) {
    out += std::string(k.name) + " (" + TypeName(k.type) + ", default \"" +
           std::string(k.default_value) + "\")\n    " + Wrap(k.help, 4, 100, 4) + "\n";
  }
  out +=
      "\nRead by gprof-run only: GPROF_INJECT_LIB (path of libgprof_inject.so, overrides the\n"
      "search next to gprof-run; not passed to the program).\n";
  return out;
}

}  // namespace gprof::launcher
